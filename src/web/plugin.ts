/**
 * The web page as a Fastify plugin: serves the page at `/`, its static files and the browser
 * library bundles (d3, Observable Plot, jsdiff) under `/ui/`. Everything is local; the page itself
 * talks to the JSON API (`/v1/…`) of the same server, clusters included (the index keeps them:
 * src/online/clusters.ts), so the page holds no bookkeeping of its own.
 * @module
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { readFileSync } from 'node:fs';
import { vendorBundle, webFile, type VendorBundle } from './assets.js';


const OWN_FILES: Record<string, string> = {
  'page.js': 'text/javascript; charset=utf-8',
  'diffView.js': 'text/javascript; charset=utf-8',
  'common.css': 'text/css; charset=utf-8',
  'page.css': 'text/css; charset=utf-8',
};
const VENDOR: VendorBundle[] = ['d3.min.js', 'plot.umd.min.js', 'diff.min.js'];

/**
 * Route config of what the page needs before it can ask for a token: the page and its static files
 * (src/server/auth.ts serves routes marked public without the token).
 */
const PUBLIC = { config: { public: true } } as const;

let passagesModule: string | undefined;

/**
 * The library's compiled commonPassages as a browser ES module (it has no imports), so the page
 * highlights with exactly the same code as the report.
 */
function passagesJs(): string {
  passagesModule ??= readFileSync(new URL('../similarity/passages.js', import.meta.url), 'utf8').replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n');
  return passagesModule;
}

const plugin: FastifyPluginAsync = async (app: FastifyInstance) => {
  app.get('/', PUBLIC, async (_req, reply) => {
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache');
    return webFile('index.html');
  });

  app.get<{ Params: { name: string } }>('/ui/:name', PUBLIC, async (req, reply) => {
    const name = req.params.name;
    if (OWN_FILES[name]) {
      reply.type(OWN_FILES[name]!).header('cache-control', 'no-cache');
      return webFile(name);
    }
    if (name === 'passages.js') {
      reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache');
      return passagesJs();
    }
    if ((VENDOR as string[]).includes(name)) {
      reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=86400');
      return vendorBundle(name as VendorBundle);
    }
    return reply.code(404).send({ statusCode: 404, error: 'Not Found', message: `no file /ui/${name}` });
  });
};

/** The web page plugin. Register it on the API app: `app.register(webUi)`. */
export const webUi = plugin;
