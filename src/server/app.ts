/**
 * The HTTP service over a NearDupIndex, on Fastify: JSON-schema validation (400 with per-field
 * errors), a body size limit (413), optional bearer-token auth (401, constant-time comparison),
 * Prometheus metrics, an OpenAPI document and graceful shutdown.
 * @module
 */
import Fastify, { type FastifyInstance, type FastifyError, type FastifyReply } from 'fastify';
import type { NearDupIndex, Match } from '../online/nearDupIndex.js';
import { Metrics } from './metrics.js';
import { webUi } from '../web/plugin.js';
import { installAuth } from './auth.js';
import { metaProblem } from './limits.js';
import { StoreUnavailableError } from '../store/errors.js';
import { registerClusterRoutes, clusterPaths } from './clusterRoutes.js';
import { withStoredText } from '../online/storedText.js';
import { addResponseSchema, addSchema, batchSchema, DEFAULT_ADD_LIMIT, documentSchema, duplicatesQuerySchema, errorSchema, idParamsSchema, matchSchema, querySchema } from './schemas.js';

/** Options of {@link buildApp}. */
export interface AppOptions {
  /** Require `Authorization: Bearer <token>` on every route except /healthz, /readyz and the web page. Default: no auth. */
  token?: string;
  /** Maximum request body in bytes; larger bodies get 413. Default 1 MiB. */
  bodyLimit?: number;
  /** Fastify logger (pino options or boolean). Default false. */
  logger?: boolean;
  /**
   * Keep each added document's text in its metadata (`meta.text`), so the web page can show what
   * near duplicates share and what differs. Default true; `neardup serve --no-store-text` turns it off.
   */
  storeText?: boolean;
  /**
   * Where every 5xx answer is reported with its cause (one line with the stack), whatever `logger`
   * says. Default: standard error.
   */
  errorLog?: (line: string) => void;
}

interface DocBody {
  id: string;
  text: string;
  meta?: unknown;
}

/** Help text of the neardup_queries_total counter, shared by every query route. */
const QUERIES_HELP = 'Queries (threshold, topK, duplicates of an indexed document).';

/** The OpenAPI 3.1 document of the service. */
export function openApiDocument(): Record<string, unknown> {
  const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
  const err = (d: string) => ({ description: d, ...json({ $ref: '#/components/schemas/Error' }) });
  const common = {
    '400': err('Invalid request (per-field errors)'),
    '401': err('Missing or wrong bearer token'),
    '413': err('Body too large'),
    '503': err('The store (Redis) is unavailable; not acknowledged, retry after the Retry-After header'),
  };
  return {
    openapi: '3.1.0',
    info: { title: 'neardup', version: '1', description: 'Online near-duplicate detection with exact Jaccard scores.' },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Document: documentSchema, Match: matchSchema, Error: errorSchema },
    },
    security: [{ bearer: [] }],
    paths: {
      '/v1/documents': {
        post: {
          summary: 'Return the near duplicates of a document, then index it (an existing id is replaced).',
          requestBody: { required: true, ...json(addSchema) },
          responses: { '200': { description: 'Duplicates', ...json(addResponseSchema) }, ...common },
        },
      },
      '/v1/documents:batch': {
        post: {
          summary: 'The same for a batch, in order (each document sees the earlier ones).',
          requestBody: { required: true, ...json(batchSchema) },
          responses: { '200': { description: 'One result per document', ...json({ type: 'object', properties: { results: { type: 'array', items: addResponseSchema } } }) }, ...common },
        },
      },
      '/v1/query': {
        post: {
          summary: 'Matches without indexing (threshold), or the k most similar documents (topK).',
          requestBody: { required: true, ...json(querySchema) },
          responses: { '200': { description: 'Matches', ...json({ type: 'object', properties: { matches: { type: 'array', items: matchSchema } } }) }, ...common },
        },
      },
      '/v1/documents/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        get: { summary: 'One document (metadata, shingle count).', responses: { '200': { description: 'The document' }, '404': err('Unknown id'), '401': common['401'] } },
        delete: { summary: 'Remove one document.', responses: { '200': { description: 'Removed' }, '404': err('Unknown id'), '401': common['401'] } },
      },
      '/v1/documents/{id}/duplicates': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        get: {
          summary: 'The near duplicates of an indexed document, from its stored record (without the document itself).',
          parameters: [
            { name: 'limit', in: 'query', schema: duplicatesQuerySchema.properties.limit },
            { name: 'threshold', in: 'query', schema: duplicatesQuerySchema.properties.threshold },
          ],
          responses: { '200': { description: 'Matches', ...json({ type: 'object', properties: { id: { type: 'string' }, duplicates: { type: 'array', items: matchSchema } } }) }, '404': err('Unknown id'), '400': common['400'], '401': common['401'] },
        },
      },
      ...clusterPaths(err, common),
      '/v1/stats': { get: { summary: 'Index statistics.', responses: { '200': { description: 'Statistics' } } } },
      '/healthz': { get: { summary: 'Liveness (no auth); 503 while shutting down.', security: [], responses: { '200': { description: 'OK' }, '503': { description: 'Shutting down' } } } },
      '/readyz': { get: { summary: 'Readiness (no auth): the store answers; 503 while it is unreachable or while shutting down.', security: [], responses: { '200': { description: 'Ready: {status, documents}' }, '503': { description: 'Store unreachable (Retry-After) or shutting down' } } } },
      '/metrics': { get: { summary: 'Prometheus metrics.', responses: { '200': { description: 'text/plain; version=0.0.4' } } } },
      '/openapi.json': { get: { summary: 'This document.', responses: { '200': { description: 'OpenAPI 3.1' } } } },
    },
  };
}

function fieldOf(e: { instancePath?: string; params?: Record<string, unknown> }): string {
  const base = e.instancePath || '';
  const p = e.params ?? {};
  if (typeof p.missingProperty === 'string') return `${base}/${p.missingProperty}`;
  if (typeof p.additionalProperty === 'string') return `${base}/${p.additionalProperty}`;
  return base || '/';
}

/** Builds the Fastify app (not listening). Closing the app does not close the index. */
export function buildApp(index: NearDupIndex, options: AppOptions = {}): FastifyInstance & { draining: boolean } {
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    ajv: { customOptions: { allErrors: true, coerceTypes: false, removeAdditional: false } },
    forceCloseConnections: 'idle',
    // Ids may be 1024 characters, up to 9 bytes each once percent-encoded in the path (the default
    // limit of 100 made long ids impossible to GET or DELETE: 414).
    routerOptions: { maxParamLength: 10 * 1024 },
    return503OnClosing: true,
  }) as unknown as FastifyInstance & { draining: boolean };
  app.draining = false;
  const metrics = new Metrics();
  const openapi = openApiDocument();
  const errorLog = options.errorLog ?? ((line: string) => void process.stderr.write(line));
  /** A 5xx never goes unseen: its request and cause on stderr (the client only sees a generic message). */
  const report5xx = (status: number, method: string, url: string, error: unknown): void => {
    const e = error as Error;
    const cause = e?.cause ? `\n  caused by: ${String((e.cause as Error)?.stack ?? e.cause)}` : '';
    errorLog(`neardup serve: ${new Date().toISOString()} ${status} ${method} ${url}: ${e?.stack ?? String(error)}${cause}\n`);
  };
  // The API takes JSON only: without this, Fastify's built-in text/plain parser turned a text body
  // into a 400 "body must be object" instead of the documented 415.
  app.removeContentTypeParser('text/plain');

  app.addHook('onRequest', async (req) => {
    (req as unknown as { t0: bigint }).t0 = process.hrtime.bigint();
  });
  // Before any route: authorization is decided per matched route (config.public), never by URL text.
  installAuth(app, options.token);

  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    const t0 = (req as unknown as { t0?: bigint }).t0;
    if (t0 !== undefined) metrics.observe(route, Number(process.hrtime.bigint() - t0) / 1e9);
    metrics.inc('neardup_http_requests_total', 'HTTP requests by route, method and status.', { route, method: req.method, status: String(reply.statusCode) });
  });

  app.setErrorHandler((error: FastifyError, req, reply) => {
    if (error.validation) {
      const errors = error.validation.map((e) => ({ field: fieldOf(e as never), message: e.message ?? 'invalid' }));
      return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: errors.map((e) => `${e.field} ${e.message}`).join('; '), errors });
    }
    if ((error as unknown) instanceof StoreUnavailableError) {
      // Not acknowledged, safe to retry: the store (Redis) is away and the client reconnects by itself.
      req.log.warn({ err: error }, 'store unavailable');
      report5xx(503, req.method, req.url, error);
      const retry = (error as unknown as StoreUnavailableError).retryAfter;
      reply.header('retry-after', String(retry));
      return reply.code(503).send({ statusCode: 503, error: 'Service Unavailable', message: `${error.message}; retry in ${retry} s` });
    }
    const status = error.statusCode ?? 500;
    if (status === 413) {
      // Say the number and how to change it: "Request body is too large" leaves a user guessing.
      const limit = options.bodyLimit ?? 1024 * 1024;
      return reply.code(413).send({ statusCode: 413, error: 'Payload Too Large', message: `the request body is larger than this server's limit of ${limit} bytes (${(limit / 1048576).toFixed(limit % 1048576 ? 2 : 0)} MiB); start it with neardup serve --body-limit BYTES to raise it` });
    }
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ statusCode: status, error: httpName(status), message: error.message });
    }
    if (error instanceof RangeError || error instanceof TypeError) {
      return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: error.message });
    }
    req.log.error(error);
    report5xx(500, req.method, req.url, error);
    return reply.code(500).send({ statusCode: 500, error: 'Internal Server Error', message: 'internal error (see the server log)' });
  });

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ statusCode: 404, error: 'Not Found', message: `no route ${req.method} ${req.url}` });
  });

  const countAdds = (results: Match[][]) => {
    metrics.inc('neardup_documents_added_total', 'Documents added.', {}, results.length);
    let d = 0;
    for (const r of results) d += r.length ? 1 : 0;
    metrics.inc('neardup_documents_with_duplicates_total', 'Added documents that had at least one near duplicate.', {}, d);
  };

  const storeText = options.storeText ?? true;
  const keep = (meta: unknown, text: string): unknown => (storeText ? withStoredText(meta, text) : meta);

  const badMeta = (reply: FastifyReply, problems: { field: string; message: string }[]) =>
    reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: problems.map((e) => `${e.field} ${e.message}`).join('; '), errors: problems });

  app.post<{ Body: DocBody & { limit?: number } }>('/v1/documents', { schema: { body: addSchema } }, async (req, reply) => {
    const { id, text, meta, limit } = req.body;
    const problem = metaProblem(meta);
    if (problem) return badMeta(reply, [{ field: '/meta', message: problem }]);
    const duplicates = await index.add(id, text, keep(meta, text), { limit: limit ?? DEFAULT_ADD_LIMIT });
    countAdds([duplicates]);
    return { id, duplicates };
  });

  // "::" is find-my-way's escape for a literal colon.
  app.post<{ Body: { documents: DocBody[]; limit?: number } }>('/v1/documents::batch', { schema: { body: batchSchema } }, async (req, reply) => {
    const docs = req.body.documents;
    const problems: { field: string; message: string }[] = [];
    docs.forEach((d, i) => {
      const p = metaProblem(d.meta);
      if (p) problems.push({ field: `/documents/${i}/meta`, message: p });
    });
    if (problems.length) return badMeta(reply, problems);
    const results = await index.addMany(docs.map((d) => ({ id: d.id, text: d.text, meta: keep(d.meta, d.text) })), { limit: req.body.limit ?? DEFAULT_ADD_LIMIT });
    countAdds(results);
    return { results: results.map((duplicates, i) => ({ id: docs[i]!.id, duplicates })) };
  });

  app.post<{ Body: { text: string; limit?: number; threshold?: number; topK?: number; measure?: 'jaccard' | 'containment' } }>('/v1/query', { schema: { body: querySchema } }, async (req, reply) => {
    const { text, limit, threshold, topK, measure } = req.body;
    if (topK && measure === 'containment') return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: 'body/measure containment cannot be combined with topK' });
    if (measure === 'containment' && index.manifest.verify !== 'exact') {
      return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: 'body/measure containment needs an index with verify "exact" (this one stores signatures only)' });
    }
    metrics.inc('neardup_queries_total', QUERIES_HELP, { kind: topK ? 'topk' : measure === 'containment' ? 'containment' : 'threshold' });
    const matches = topK ? await index.topK(text, topK) : await index.query(text, { limit, threshold, measure });
    return { matches };
  });

  app.get<{ Params: { id: string } }>('/v1/documents/:id', { schema: { params: idParamsSchema } }, async (req, reply) => {
    const doc = await index.get(req.params.id);
    if (!doc) return reply.code(404).send({ statusCode: 404, error: 'Not Found', message: `no document "${req.params.id}"` });
    return { id: doc.id, meta: doc.meta ?? null, shingles: doc.shingles ?? null };
  });

  app.get<{ Params: { id: string }; Querystring: { limit?: string; threshold?: string } }>(
    '/v1/documents/:id/duplicates',
    { schema: { params: idParamsSchema, querystring: duplicatesQuerySchema } },
    async (req, reply) => {
      metrics.inc('neardup_queries_total', QUERIES_HELP, { kind: 'duplicates' });
      const { limit, threshold } = req.query;
      const duplicates = await index.duplicatesOf(req.params.id, {
        ...(limit !== undefined ? { limit: Number(limit) } : {}),
        ...(threshold !== undefined ? { threshold: Number(threshold) } : {}),
      });
      if (!duplicates) return reply.code(404).send({ statusCode: 404, error: 'Not Found', message: `no document "${req.params.id}"` });
      return { id: req.params.id, duplicates };
    },
  );

  app.delete<{ Params: { id: string } }>('/v1/documents/:id', { schema: { params: idParamsSchema } }, async (req, reply) => {
    const ok = await index.remove(req.params.id);
    if (!ok) return reply.code(404).send({ statusCode: 404, error: 'Not Found', message: `no document "${req.params.id}"` });
    return { id: req.params.id, deleted: true };
  });

  registerClusterRoutes(app, index);

  app.get('/v1/stats', async () => index.stats());

  app.get('/healthz', { config: { public: true } }, async (_req, reply) => {
    if (app.draining) return reply.code(503).send({ status: 'shutting down' });
    return { status: 'ok' };
  });

  // Readiness, unlike liveness, asks the store: a load balancer should stop sending traffic to a
  // process whose Redis is away, but not restart it (it reconnects by itself).
  app.get('/readyz', { config: { public: true } }, async (_req, reply) => {
    if (app.draining) return reply.code(503).send({ status: 'shutting down' });
    try {
      return { status: 'ready', documents: await index.size() };
    } catch (e) {
      if (!(e instanceof StoreUnavailableError)) throw e;
      reply.header('retry-after', String(e.retryAfter));
      return reply.code(503).send({ status: 'store unavailable', message: e.message });
    }
  });

  app.get('/metrics', async (_req, reply) => {
    const mem = process.memoryUsage();
    const docs = await index.size();
    reply.type('text/plain; version=0.0.4');
    return metrics.render({
      neardup_documents: ['Documents in the index.', docs],
      process_resident_memory_bytes: ['Resident memory.', mem.rss],
      nodejs_heap_used_bytes: ['V8 heap in use.', mem.heapUsed],
    });
  });

  app.get('/openapi.json', async () => openapi);
  app.register(webUi);
  return app;
}

function httpName(status: number): string {
  const names: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 405: 'Method Not Allowed', 413: 'Payload Too Large', 415: 'Unsupported Media Type' };
  return names[status] ?? 'Error';
}

/**
 * Graceful shutdown on SIGTERM and SIGINT: /healthz turns 503, the server stops accepting
 * connections, requests in flight finish (their writes are acknowledged and durable), then the
 * index is closed and `onDone` runs (default: exit 0).
 */
export function installShutdown(app: FastifyInstance & { draining: boolean }, index: NearDupIndex, onDone: () => void = () => process.exit(0)): void {
  let started = false;
  const stop = async () => {
    if (started) return;
    started = true;
    app.draining = true;
    try {
      await app.close();
      await index.close();
    } finally {
      onDone();
    }
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
