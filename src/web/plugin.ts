/**
 * The web page as a Fastify plugin: serves the page at `/`, its static files, the compiled library
 * module it imports (passages.js) and the browser library bundles (d3, Observable Plot, jsdiff)
 * under `/ui/`. Everything is local and found through src/web/assets.ts; every file is read when
 * the plugin registers, so a missing one stops the server at startup with its path, not a 500 on
 * the first request. The page itself talks to the JSON API (`/v1/…`) of the same server, clusters
 * included (the index keeps them: src/online/clusters.ts), so the page holds no bookkeeping of its own.
 * @module
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { libraryModule, vendorBundle, webFile, type LibraryModule, type VendorBundle } from './assets.js';

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

/** The page's own files in src/web, by name under /ui/. */
const OWN_FILES: Record<string, string> = {
  'page.js': JS,
  'ui.js': JS,
  'clusters.js': JS,
  'stats.js': JS,
  'diffView.js': JS,
  'common.css': CSS,
  'page.css': CSS,
};
const LIBRARY: LibraryModule[] = ['passages.js'];
const VENDOR: VendorBundle[] = ['d3.min.js', 'plot.umd.min.js', 'diff.min.js'];

/**
 * Route config of what the page needs before it can ask for a token: the page and its static files
 * (src/server/auth.ts serves routes marked public without the token).
 */
const PUBLIC = { config: { public: true } } as const;

/** One file under /ui/: its body, type and cache policy. */
interface Asset {
  body: string;
  type: string;
  cacheControl: string;
}

/** Every file under /ui/, read now (throws naming the first missing one). */
function uiAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  // The page's own files and the library module change with the package: revalidate each time.
  for (const [name, type] of Object.entries(OWN_FILES)) assets.set(name, { body: webFile(name), type, cacheControl: 'no-cache' });
  for (const name of LIBRARY) assets.set(name, { body: libraryModule(name), type: JS, cacheControl: 'no-cache' });
  for (const name of VENDOR) assets.set(name, { body: vendorBundle(name), type: JS, cacheControl: 'public, max-age=86400' });
  return assets;
}

const plugin: FastifyPluginAsync = async (app: FastifyInstance) => {
  const page = webFile('index.html');
  const assets = uiAssets();

  app.get('/', PUBLIC, async (_req, reply) => {
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache');
    return page;
  });

  app.get<{ Params: { name: string } }>('/ui/:name', PUBLIC, async (req, reply) => {
    const name = req.params.name;
    const a = assets.get(name);
    if (!a) return reply.code(404).send({ statusCode: 404, error: 'Not Found', message: `no file /ui/${name}` });
    reply.type(a.type).header('cache-control', a.cacheControl);
    return a.body;
  });
};

/** The web page plugin. Register it on the API app: `app.register(webUi)`. */
export const webUi = plugin;
