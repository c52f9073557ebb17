/**
 * The OpenAPI 3.1 document of the HTTP service (served at /openapi.json), built from the same JSON
 * schemas the routes validate with (src/server/schemas.ts, clusterRoutes.ts).
 * @module
 */
import { clusterPaths } from './clusterRoutes.js';
import {
  addResponseSchema,
  addSchema,
  batchSchema,
  deleteManySchema,
  documentQuerySchema,
  documentSchema,
  createIndexSchema,
  duplicatesQuerySchema,
  errorSchema,
  indexNameParamsSchema,
  matchSchema,
  querySchema,
} from './schemas.js';

/** The OpenAPI 3.1 document of the service. */
export function openApiDocument(): Record<string, unknown> {
  const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
  const err = (d: string) => ({ description: d, ...json({ $ref: '#/components/schemas/Error' }) });
  const common = {
    '400': err('Invalid request (per-field errors)'),
    '401': err('Missing or wrong bearer token'),
    '408': err('The request was not received in time'),
    '413': err('Body too large'),
    '415': err('The body is not application/json'),
    '503': err('The store (Redis) is unavailable; not acknowledged, retry after the Retry-After header'),
  };
  const doc = {
    openapi: '3.1.0',
    info: {
      title: 'neardup',
      version: '1.2',
      description:
        "Online near-duplicate detection with exact Jaccard scores. 1.1: topK counts distinct texts and lists each hit's copies; metadata filters (`filter`). 1.2: named indexes (`/v1/indexes`, and every index route under `/v1/indexes/{name}`) with `neardup serve --indexes DIR`.",
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Document: documentSchema, Match: matchSchema, Error: errorSchema },
    },
    security: [{ bearer: [] }],
    paths: {
      ...documentPaths(err, common),
      ...clusterPaths(err, common),
      ...servicePaths(),
    },
  };
  return withOperationIds({ ...doc, paths: { ...doc.paths, ...registryPaths(err, common), ...namedPaths(doc.paths) } });
}

/** A JSON body of this schema. */
function jsonBody(schema: unknown): { content: { 'application/json': { schema: unknown } } } {
  return { content: { 'application/json': { schema } } };
}

/** The routes of documents: add (one, a batch), remove many, query, one document and its duplicates. */
function documentPaths(err: (d: string) => unknown, common: Record<string, unknown>) {
  return {
    '/v1/documents': {
      post: {
        summary: 'Return the near duplicates of a document, then index it (an existing id is replaced).',
        requestBody: { required: true, ...jsonBody(addSchema) },
        responses: { '200': { description: 'Duplicates', ...jsonBody(addResponseSchema) }, ...common },
      },
    },
    '/v1/documents:batch': {
      post: {
        summary: 'The same for a batch, in order (each document sees the earlier ones).',
        requestBody: { required: true, ...jsonBody(batchSchema) },
        responses: {
          '200': {
            description: 'One result per document',
            ...jsonBody({ type: 'object', properties: { results: { type: 'array', items: addResponseSchema } } }),
          },
          ...common,
        },
      },
    },
    '/v1/documents:delete': {
      post: {
        summary: 'Remove many documents in one store write; their clusters are split once.',
        requestBody: { required: true, ...jsonBody(deleteManySchema) },
        responses: {
          '200': {
            description: 'How many were removed; the ids that were not indexed (or repeated)',
            ...jsonBody({ type: 'object', properties: { deleted: { type: 'integer' }, missing: { type: 'array', items: { type: 'string' } } } }),
          },
          ...common,
        },
      },
    },
    '/v1/query': {
      post: {
        summary: 'Matches without indexing (threshold), or the k most similar documents (topK).',
        requestBody: { required: true, ...jsonBody(querySchema) },
        responses: {
          '200': { description: 'Matches', ...jsonBody({ type: 'object', properties: { matches: { type: 'array', items: matchSchema } } }) },
          ...common,
        },
      },
    },
    '/v1/documents/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        summary: 'One document (metadata without the stored text, shingle count; with fields: the text, the stored signature).',
        parameters: [{ name: 'fields', in: 'query', schema: documentQuerySchema.properties.fields }],
        responses: { '200': { description: 'The document' }, '404': err('Unknown id'), '401': common['401'] },
      },
      delete: { summary: 'Remove one document.', responses: { '200': { description: 'Removed' }, '404': err('Unknown id'), '401': common['401'] } },
    },
    '/v1/documents/{id}/duplicates': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        summary: 'The near duplicates of an indexed document, from its stored record (without the document itself).',
        parameters: (['limit', 'threshold', 'fields', 'filter'] as const).map((name) => ({
          name,
          in: 'query',
          schema: duplicatesQuerySchema.properties[name],
        })),
        responses: {
          '200': {
            description: 'Matches',
            ...jsonBody({ type: 'object', properties: { id: { type: 'string' }, duplicates: { type: 'array', items: matchSchema } } }),
          },
          '404': err('Unknown id'),
          '400': common['400'],
          '401': common['401'],
        },
      },
    },
  };
}

/** The service's own routes: statistics, liveness, readiness, metrics, this document. */
function servicePaths() {
  return {
    '/v1/stats': { get: { summary: 'Index statistics.', responses: { '200': { description: 'Statistics' } } } },
    '/healthz': {
      get: {
        summary: 'Liveness (no auth); 503 while shutting down.',
        security: [],
        responses: { '200': { description: 'OK' }, '503': { description: 'Shutting down' } },
      },
    },
    '/readyz': {
      get: {
        summary: 'Readiness (no auth): the store answers; 503 while it is unreachable or while shutting down.',
        security: [],
        responses: { '200': { description: 'Ready: {status, documents}' }, '503': { description: 'Store unreachable (Retry-After) or shutting down' } },
      },
    },
    '/metrics': { get: { summary: 'Prometheus metrics.', responses: { '200': { description: 'text/plain; version=0.0.4' } } } },
    '/openapi.json': { get: { summary: 'This document.', responses: { '200': { description: 'OpenAPI 3.1' } } } },
  };
}

/** The registry's own routes (`neardup serve --indexes DIR`). */
function registryPaths(err: (d: string) => unknown, common: Record<string, unknown>): Record<string, unknown> {
  const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
  const info = {
    type: 'object',
    properties: {
      name: { type: 'string' },
      store: { type: 'string' },
      threshold: { type: 'number' },
      token: { type: 'boolean' },
      created: { type: 'string' },
      documents: { type: 'integer' },
    },
  };
  return {
    '/v1/indexes': {
      get: {
        summary: 'The named indexes (with neardup serve --indexes DIR).',
        responses: {
          '200': { description: 'The indexes', ...json({ type: 'object', properties: { indexes: { type: 'array', items: info } } }) },
          '401': common['401'],
        },
      },
      post: {
        summary: 'Create a named index: its store, parameters and optional token of its own.',
        requestBody: { required: true, ...json(createIndexSchema) },
        responses: { '201': { description: 'Created', ...json(info) }, '409': err('The name is taken'), ...common },
      },
    },
    '/v1/indexes/{name}': {
      parameters: [{ name: 'name', in: 'path', required: true, schema: indexNameParamsSchema.properties.name }],
      get: {
        summary: 'One named index, with its document count.',
        responses: { '200': { description: 'The index', ...json(info) }, '404': err('No such index'), '401': common['401'] },
      },
      delete: {
        summary: 'Drop a named index and delete its documents (requests using it finish first).',
        responses: { '200': { description: 'Dropped' }, '404': err('No such index'), '401': common['401'] },
      },
    },
  };
}

/** Every route of the server's own index, again under `/v1/indexes/{name}` for a named index. */
function namedPaths(paths: Record<string, Record<string, unknown>>): Record<string, unknown> {
  const name = { name: 'name', in: 'path', required: true, schema: indexNameParamsSchema.properties.name };
  const out: Record<string, unknown> = {};
  for (const [p, item] of Object.entries(paths)) {
    if (!p.startsWith('/v1/')) continue;
    const copy = structuredClone(item) as Record<string, unknown> & { parameters?: unknown[] };
    copy.parameters = [name, ...(copy.parameters ?? [])];
    for (const op of Object.values(copy))
      if (op && typeof op === 'object' && 'summary' in op) (op as { summary: string }).summary = `Named index: ${(op as { summary: string }).summary}`;
    out[`/v1/indexes/{name}${p.slice(3)}`] = copy;
  }
  return out;
}

/**
 * Every operation gets an `operationId` (for client generators), made from its method and path:
 * `post /v1/documents:delete` is `postDocumentsDelete`, `get /v1/documents/{id}/duplicates`
 * `getDocumentsByIdDuplicates`. Each is unique, as OpenAPI requires.
 */
function withOperationIds<T extends { paths: Record<string, Record<string, unknown>> }>(doc: T): T {
  const methods = new Set(['get', 'put', 'post', 'delete', 'patch']);
  const word = (w: string): string => (w ? w[0]!.toUpperCase() + w.slice(1) : '');
  for (const [p, item] of Object.entries(doc.paths)) {
    const parts = p
      .replace(/^\/v1\//, '/')
      .split(/[/:.]/)
      .filter(Boolean)
      .map((x) => (x.startsWith('{') ? `By${word(x.slice(1, -1))}` : x.split(/[-_]/).map(word).join('')));
    for (const [method, op] of Object.entries(item)) {
      if (!methods.has(method) || typeof op !== 'object' || op === null) continue;
      (op as { operationId?: string }).operationId ??= method + parts.join('');
    }
  }
  return doc;
}
