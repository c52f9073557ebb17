/**
 * The cluster routes of the HTTP API, over the index's own clusters (src/online/clusters.ts):
 *   GET /v1/clusters?offset&limit&members   one page of clusters, largest first
 *   GET /v1/clusters/:id                    one cluster (its id is its smallest member id)
 *   GET /v1/documents/:id/cluster           the cluster of a document
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { IndexScope } from './scope.js';
import { idParamsSchema } from './schemas.js';

/** Query string of GET /v1/clusters (strings: the app's validator does not coerce). */
export const clustersQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    offset: { type: 'string', pattern: '^(0|[1-9][0-9]{0,8})$', description: 'Clusters to skip (largest first). Default 0.' },
    limit: { type: 'string', pattern: '^([1-9][0-9]{0,2}|1000)$', description: 'Clusters per page, 1 to 1000. Default 50.' },
    members: { type: 'string', pattern: '^([0-9]{1,3}|1000)$', description: 'Member ids listed per cluster, 0 to 1000. Default 10.' },
  },
} as const;

const clusterSchema = {
  type: 'object',
  required: ['id', 'size', 'members'],
  properties: {
    id: { type: 'string', description: 'The cluster id: its smallest member id.' },
    size: { type: 'integer' },
    members: { type: 'array', items: { type: 'string' }, description: 'Member ids, sorted.' },
  },
} as const;

/** The OpenAPI paths of these routes (merged into /openapi.json). */
export function clusterPaths(err: (d: string) => unknown, common: Record<string, unknown>): Record<string, unknown> {
  const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
  return {
    '/v1/clusters': {
      get: {
        summary: 'Clusters (connected components of the near-duplicate pairs, two or more documents), largest first, one page.',
        parameters: Object.entries(clustersQuerySchema.properties).map(([name, schema]) => ({ name, in: 'query', schema })),
        responses: {
          '200': {
            description: 'A page. `building` ({done, total}) is present, with no clusters, while the clusters of a store filled earlier are first built.',
            ...json({
              type: 'object',
              properties: {
                total: { type: 'integer' },
                offset: { type: 'integer' },
                clusters: { type: 'array', items: clusterSchema },
                building: { type: 'object' },
              },
            }),
          },
          '400': common['400'],
          '401': common['401'],
        },
      },
    },
    '/v1/clusters/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        summary: 'One cluster with all its members.',
        responses: { '200': { description: 'The cluster', ...json(clusterSchema) }, '404': err('No cluster has this id'), '401': common['401'] },
      },
    },
    '/v1/documents/{id}/cluster': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        summary: 'The cluster of an indexed document (itself alone, size 1, when it has no near duplicates).',
        responses: {
          '200': {
            description: 'The document id and its cluster',
            ...json({ type: 'object', properties: { id: { type: 'string' }, cluster: clusterSchema } }),
          },
          '404': err('Unknown id'),
          '401': common['401'],
        },
      },
    },
  };
}

/** Registers the cluster routes on `app`. */
export function registerClusterRoutes(app: FastifyInstance, on: IndexScope): void {
  app.get<{ Querystring: { offset?: string; limit?: string; members?: string } }>(
    `${on.base}/clusters`,
    { schema: { querystring: clustersQuerySchema } },
    async (req) => {
      const q = req.query;
      return on.of(req).clusters({
        wait: false,
        ...(q.offset !== undefined ? { offset: Number(q.offset) } : {}),
        ...(q.limit !== undefined ? { limit: Number(q.limit) } : {}),
        ...(q.members !== undefined ? { members: Number(q.members) } : {}),
      });
    },
  );

  app.get<{ Params: { id: string } }>(`${on.base}/clusters/:id`, { schema: { params: idParamsSchema } }, async (req, reply) => {
    const c = await on.of(req).cluster(req.params.id);
    if (!c)
      return reply.code(404).send({ statusCode: 404, error: 'Not Found', message: `no cluster "${req.params.id}" (a cluster's id is its smallest member id)` });
    return c;
  });

  app.get<{ Params: { id: string } }>(`${on.base}/documents/:id/cluster`, { schema: { params: idParamsSchema } }, async (req, reply) => {
    const c = await on.of(req).clusterOf(req.params.id);
    if (!c) return reply.code(404).send({ statusCode: 404, error: 'Not Found', message: `no document "${req.params.id}"` });
    return { id: req.params.id, cluster: c };
  });
}
