/**
 * Named indexes over HTTP (`neardup serve --indexes DIR`; the registry is src/online/registry/):
 *   GET    /v1/indexes              the indexes
 *   POST   /v1/indexes              create one (its name, store, parameters, token)
 *   GET    /v1/indexes/:name        one index, with its document count
 *   DELETE /v1/indexes/:name        drop one (its documents are deleted)
 *   …      /v1/indexes/:name/…      every route of the server's own index (documents, query,
 *                                   duplicates, clusters, stats), on that index
 * The first four need the server's token. A named index's routes take the server's token or the
 * index's own; an index with no token of its own on a server without one is open, as the server's
 * own routes are. An unknown name is 404 only to a caller who could have reached it (else 401).
 * @module
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { IndexExistsError, type IndexRegistry, type NamedIndexOptions } from '../online/registry/registry.js';
import type { NearDupIndex } from '../online/nearDupIndex.js';
import { bearerToken, tokenChecker } from './auth.js';
import { registerClusterRoutes } from './clusterRoutes.js';
import { registerDocumentRoutes } from './documentRoutes.js';
import type { Metrics } from './metrics.js';
import { registerQueryRoutes } from './queryRoutes.js';
import { createIndexSchema, indexNameParamsSchema } from './schemas.js';
import type { IndexScope } from './scope.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A named index's route: its scope's hook decides auth (the server's token or the index's). */
    namedIndex?: boolean;
  }
}

/** The body of POST /v1/indexes. */
export interface CreateIndexBody {
  name: string;
  store?: 'sqlite' | 'file' | 'memory';
  token?: string;
  threshold?: number;
  shingle?: 'char' | 'word' | 'spot';
  k?: number;
  numPerm?: number;
  bands?: number;
  rows?: number;
  minRecall?: number;
  verify?: 'exact' | 'estimate';
  signatureBits?: 16 | 32;
  forest?: boolean;
  ensemble?: boolean;
  ttl?: string;
}

/** The index parameters of a create body. */
export function namedOptionsOf(b: CreateIndexBody): NamedIndexOptions {
  const { threshold, shingle, k, numPerm, bands, rows, minRecall, verify, signatureBits, forest, ensemble, ttl } = b;
  const o: NamedIndexOptions = {
    threshold,
    ...(shingle ? { shingle: { kind: shingle } } : {}),
    k,
    numPerm,
    bands,
    rows,
    minRecall,
    verify,
    signatureBits,
    ...(forest === false ? { forest: false as const } : {}),
    ...(ensemble ? { ensemble: true } : {}),
    ttl,
  };
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as NamedIndexOptions;
}

const notFound = (reply: FastifyReply, name: string) => reply.code(404).send({ statusCode: 404, error: 'Not Found', message: `no index "${name}"` });
const unauthorized = (reply: FastifyReply) => {
  reply.header('www-authenticate', 'Bearer');
  return reply.code(401).send({ statusCode: 401, error: 'Unauthorized', message: 'missing or invalid bearer token' });
};

/** What {@link registerIndexRoutes} needs besides the app. */
export interface IndexRoutesOptions {
  registry: IndexRegistry;
  /** The server's token (undefined: none). */
  token: string | undefined;
  metrics: Metrics;
  storeText: boolean;
}

/** Registers the registry's routes and every named index's routes. */
export function registerIndexRoutes(app: FastifyInstance, o: IndexRoutesOptions): void {
  const { registry } = o;
  app.get('/v1/indexes', async () => ({ indexes: registry.list() }));

  app.post<{ Body: CreateIndexBody }>('/v1/indexes', { schema: { body: createIndexSchema } }, async (req, reply) => {
    const b = req.body;
    try {
      const info = await registry.create(b.name, { store: b.store, token: b.token, options: namedOptionsOf(b) });
      return reply.code(201).send(info);
    } catch (e) {
      if (e instanceof IndexExistsError) return reply.code(409).send({ statusCode: 409, error: 'Conflict', message: e.message });
      throw e;
    }
  });

  app.get<{ Params: { name: string } }>('/v1/indexes/:name', { schema: { params: indexNameParamsSchema } }, async (req, reply) => {
    const h = await registry.acquire(req.params.name);
    if (!h) return notFound(reply, req.params.name);
    try {
      return { ...registry.info(req.params.name), documents: await h.index.size() };
    } finally {
      h.release();
    }
  });

  app.delete<{ Params: { name: string } }>('/v1/indexes/:name', { schema: { params: indexNameParamsSchema } }, async (req, reply) => {
    if (!(await registry.drop(req.params.name))) return notFound(reply, req.params.name);
    return { name: req.params.name, dropped: true };
  });

  app.register(async (scoped) => namedScope(scoped, o));
}

const HELD = Symbol('neardup.namedIndex');
type Held = FastifyRequest & { [HELD]?: { index: NearDupIndex; release: () => void } };

/** The named indexes' routes, in a scope of their own: its hooks find the index and decide auth. */
function namedScope(scoped: FastifyInstance, o: IndexRoutesOptions): void {
  const { registry } = o;
  const serverToken = tokenChecker(o.token);
  scoped.addHook('onRoute', (r) => {
    r.config = { ...r.config, namedIndex: true };
  });
  scoped.addHook('onRequest', async (req, reply) => {
    const name = (req.params as { name: string }).name;
    const given = bearerToken(req.headers.authorization);
    const asServer = serverToken ? serverToken(given) : false;
    const own = registry.tokenMatches(name, given);
    if (own === undefined) return asServer || !serverToken ? notFound(reply, name) : unauthorized(reply);
    const open = !serverToken && !registry.hasToken(name);
    if (!open && !asServer && !own) return unauthorized(reply);
    const h = await registry.acquire(name);
    if (!h) return notFound(reply, name);
    (req as Held)[HELD] = h;
  });
  const release = async (req: FastifyRequest) => (req as Held)[HELD]?.release();
  scoped.addHook('onResponse', release);
  scoped.addHook('onRequestAbort', release);
  const on: IndexScope = { base: '/v1/indexes/:name', of: (req) => (req as Held)[HELD]!.index };
  registerDocumentRoutes(scoped, on, o.metrics, o.storeText);
  registerQueryRoutes(scoped, on, o.metrics);
  registerClusterRoutes(scoped, on);
  scoped.get('/v1/indexes/:name/stats', async (req) => on.of(req).stats());
}
