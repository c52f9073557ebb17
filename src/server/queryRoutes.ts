/**
 * The query routes of the HTTP API (nothing is indexed):
 *   POST /v1/query                      matches above a threshold, containment, or the top k
 *   GET  /v1/documents/:id/duplicates   the near duplicates of an indexed document
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { IndexScope } from './scope.js';
import type { Metrics } from './metrics.js';
import { QUERIES_HELP } from './metricsRoutes.js';
import { noDocument } from './documentRoutes.js';
import { duplicatesQuerySchema, idParamsSchema, querySchema } from './schemas.js';
import { DEFAULT_MATCH_FIELDS, MATCH_FIELDS, parseFields, type MatchField } from '../online/fields.js';
import type { MetaFilter } from '../online/nearDupIndex.js';

/** The `filter` of a query string: JSON, checked by the index (a RangeError: 400). */
function filterParam(json: string): MetaFilter {
  try {
    return JSON.parse(json) as MetaFilter;
  } catch {
    throw new RangeError('querystring/filter must be a JSON object of metadata fields and values, like {"site":"a","lang":["en","fr"]} (URL-encoded)');
  }
}

/** Registers the query routes. */
export function registerQueryRoutes(app: FastifyInstance, on: IndexScope, metrics: Metrics): void {
  app.post<
    {
      Body: {
        text: string;
        limit?: number;
        threshold?: number;
        topK?: number;
        measure?: 'jaccard' | 'containment';
        fields?: MatchField[];
        filter?: MetaFilter;
      };
    }
  >(`${on.base}/query`, { schema: { body: querySchema } }, async (req, reply) => {
    const index = on.of(req);
    const { text, limit, threshold, topK, measure, fields, filter } = req.body;
    if (topK && measure === 'containment')
      return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: 'body/measure containment cannot be combined with topK' });
    if (measure === 'containment' && index.manifest.verify !== 'exact') {
      return reply.code(400).send({
        statusCode: 400,
        error: 'Bad Request',
        message: 'body/measure containment needs an index with verify "exact" (this one stores signatures only)',
      });
    }
    metrics.inc('neardup_queries_total', QUERIES_HELP, { kind: topK ? 'topk' : measure === 'containment' ? 'containment' : 'threshold' });
    const matches = topK ? await index.topK(text, topK, { filter }) : await index.query(text, { limit, threshold, measure, filter });
    // A Jaccard threshold below the index's: say how much may be missed (src/online/keys/recall.ts).
    const recall = !topK && measure !== 'containment' && threshold !== undefined ? index.recallAt(threshold) : null;
    return { matches: await index.select(matches, fields ?? DEFAULT_MATCH_FIELDS), ...(recall ? { recall } : {}) };
  });

  app.get<{ Params: { id: string }; Querystring: { limit?: string; threshold?: string; fields?: string; filter?: string } }>(
    `${on.base}/documents/:id/duplicates`,
    { schema: { params: idParamsSchema, querystring: duplicatesQuerySchema } },
    async (req, reply) => {
      const index = on.of(req);
      metrics.inc('neardup_queries_total', QUERIES_HELP, { kind: 'duplicates' });
      const { limit, threshold } = req.query;
      const fields = req.query.fields === undefined ? DEFAULT_MATCH_FIELDS : parseFields(req.query.fields, MATCH_FIELDS, 'querystring/fields');
      const duplicates = await index.duplicatesOf(req.params.id, {
        ...(limit !== undefined ? { limit: Number(limit) } : {}),
        ...(threshold !== undefined ? { threshold: Number(threshold) } : {}),
        fields,
        ...(req.query.filter !== undefined ? { filter: filterParam(req.query.filter) } : {}),
      });
      if (!duplicates) return noDocument(reply, req.params.id);
      const recall = threshold !== undefined ? index.recallAt(Number(threshold)) : null;
      return { id: req.params.id, duplicates, ...(recall ? { recall } : {}) };
    },
  );
}
