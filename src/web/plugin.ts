/**
 * The web page as a Fastify plugin: serves the page at `/`, its static files and the chart library
 * bundles under `/ui/`, and the clusters the page lists at `/ui/clusters` (with `seeding`: how far
 * the documents indexed before the process started have been read in). Everything is local; the
 * page itself talks to the JSON API (`/v1/…`) of the same server.
 * @module
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { readFileSync } from 'node:fs';
import { vendorBundle, webFile, type VendorBundle } from './assets.js';
import { ClusterTracker } from './clusterTracker.js';
import type { NearDupIndex } from '../online/nearDupIndex.js';

/** Options of {@link webUi}. */
export interface WebUiOptions {
  /** The cluster tracker to feed and list (default: a new one per app). */
  tracker?: ClusterTracker;
  /**
   * The index the API serves. When given, the first request for the clusters also reads the
   * documents that were already indexed when the process started, in the background.
   */
  index?: NearDupIndex;
}

/** Progress of reading the documents already indexed into the cluster tracker. */
interface Seeding {
  done: number;
  total: number;
  finished: boolean;
  error?: string;
}

const OWN_FILES: Record<string, string> = {
  'page.js': 'text/javascript; charset=utf-8',
  'highlight.js': 'text/javascript; charset=utf-8',
  'common.css': 'text/css; charset=utf-8',
  'page.css': 'text/css; charset=utf-8',
};
const VENDOR: VendorBundle[] = ['d3.min.js', 'plot.umd.min.js'];

/**
 * Route config of what the page needs before it can ask for a token: the page and its static files
 * (src/server/auth.ts serves routes marked public without the token; /ui/clusters is not public).
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

interface DocReply {
  id?: unknown;
  duplicates?: { id: string }[];
}

const plugin: FastifyPluginAsync<WebUiOptions> = async (app: FastifyInstance, options: WebUiOptions) => {
  const tracker = options.tracker ?? new ClusterTracker();

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

  // Documents indexed before this process started (a SQLite or Redis store) reach the tracker only
  // through their near duplicates: the first clusters request reads them all once, in the
  // background, so that an API-only deployment never pays for it.
  let seeding: Seeding | null = null;
  const seed = (index: NearDupIndex): void => {
    const state: Seeding = (seeding = { done: 0, total: 0, finished: false });
    void (async () => {
      try {
        state.total = await index.size();
        for await (const d of index.store.scan()) {
          tracker.added(d.id, await index.duplicatesOfRecord(d.id, d.record));
          state.done++;
        }
      } catch (e) {
        state.error = (e as Error).message;
      } finally {
        state.finished = true;
      }
    })();
  };

  app.get<{ Querystring: { limit?: string } }>('/ui/clusters', async (req) => {
    const limit = Math.max(1, Math.min(1000, Number(req.query.limit ?? 50) || 50));
    if (!seeding && options.index) seed(options.index);
    const s = seeding as Seeding | null;
    return { tracked: tracker.tracked, ...tracker.clusters(limit), seeding: s && { done: s.done, total: s.total, finished: s.finished, ...(s.error ? { error: s.error } : {}) } };
  });

  // Feed the tracker from the API's own replies, whoever called it (this hook is app-wide).
  app.addHook('preSerialization', async (req, reply, payload: unknown) => {
    if (reply.statusCode !== 200 || !payload || typeof payload !== 'object') return payload;
    const route = req.routeOptions.url ?? '';
    if (req.method === 'POST' && route === '/v1/documents') {
      const p = payload as DocReply;
      if (typeof p.id === 'string' && Array.isArray(p.duplicates)) tracker.added(p.id, p.duplicates);
    } else if (req.method === 'POST' && route.startsWith('/v1/documents:') ) {
      const results = (payload as { results?: DocReply[] }).results;
      if (Array.isArray(results)) for (const r of results) if (typeof r.id === 'string' && Array.isArray(r.duplicates)) tracker.added(r.id, r.duplicates);
    } else if (req.method === 'DELETE' && route === '/v1/documents/:id') {
      tracker.removed((req.params as { id: string }).id);
    }
    return payload;
  });
};

// Not encapsulated (what fastify-plugin does), so the hook above also sees the API's routes.
(plugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

/**
 * The web page plugin. Register it on the API app: `app.register(webUi)`. Its `preSerialization`
 * hook applies to the whole app, to see the API's add and delete replies.
 */
export const webUi = plugin;
