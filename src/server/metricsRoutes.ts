/**
 * Observation of the HTTP service: per-route request counts and durations (two hooks) and the
 * Prometheus endpoint GET /metrics (src/server/metrics.ts renders the text format).
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { NearDupIndex } from '../online/nearDupIndex.js';
import { Metrics } from './metrics.js';

/** Help text of the neardup_queries_total counter, shared by every query route. */
export const QUERIES_HELP = 'Queries (threshold, topK, duplicates of an indexed document).';

/**
 * Starts the request clock in an onRequest hook and counts every answer in onResponse. Install it
 * before the auth hook, so refused requests are timed and counted too.
 */
export function installRequestMetrics(app: FastifyInstance): Metrics {
  const metrics = new Metrics();
  app.addHook('onRequest', async (req) => {
    (req as unknown as { t0: bigint }).t0 = process.hrtime.bigint();
  });
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    const t0 = (req as unknown as { t0?: bigint }).t0;
    if (t0 !== undefined) metrics.observe(route, Number(process.hrtime.bigint() - t0) / 1e9);
    metrics.inc('neardup_http_requests_total', 'HTTP requests by route, method and status.', { route, method: req.method, status: String(reply.statusCode) });
  });
  return metrics;
}

/** GET /metrics: the counters plus documents and memory, in the Prometheus text format 0.0.4. */
export function registerMetricsRoute(app: FastifyInstance, index: NearDupIndex, metrics: Metrics): void {
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
}
