/**
 * The service's own routes: GET /v1/stats, the probes /healthz (liveness) and /readyz (readiness,
 * asks the store), both without auth, and GET /openapi.json.
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { NearDupIndex } from '../online/nearDupIndex.js';
import { StoreUnavailableError } from '../store/errors.js';
import { openApiDocument } from './openapi.js';

/** Registers the admin and health routes; `app.draining` turns the probes 503 during shutdown. */
export function registerAdminRoutes(app: FastifyInstance & { draining: boolean }, index: NearDupIndex): void {
  const openapi = openApiDocument();

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

  app.get('/openapi.json', async () => openapi);
}
