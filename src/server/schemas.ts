/**
 * JSON schemas of the HTTP API: used by Fastify for validation and to build /openapi.json.
 * @module
 */
import { INDEX_NAME } from '../online/registry/registry.js';
import { DOCUMENT_FIELDS, MATCH_FIELDS } from '../online/fields.js';

/** Maximum documents per batch request. */
export const MAX_BATCH = 1000;

/** Largest `meta` accepted, as JSON text (bytes of UTF-16 code units, i.e. characters). */
export const MAX_META_CHARS = 16 * 1024;
/** Deepest nesting of arrays and objects accepted in `meta`. */
export const MAX_META_DEPTH = 32;

// No control characters (ids end up in URLs, logs and TSV output) and no lone surrogates: stores
// write UTF-8, so "\ud800" and "\udbff" both came back as U+FFFD and were listed under the wrong id.
// Ajv compiles patterns with the u flag, so a lone surrogate is one code point in D800-DFFF.
const id = {
  type: 'string',
  minLength: 1,
  maxLength: 1024,
  pattern: '^[^\\u0000-\\u001f\\u007f\\ud800-\\udfff]+$',
  description: 'Document id (unique): 1 to 1024 characters, no control characters, well-formed Unicode.',
} as const;
const text = { type: 'string', description: 'Document text.' } as const;
const meta = {
  description: `Any JSON value, stored and returned with matches (at most ${
    16 * 1024
  } characters as JSON, nested at most 32 deep; no __proto__ or constructor.prototype keys).`,
} as const;

/** `fields` of a JSON body: which fields of each match to return (lean replies). */
const matchFields = {
  type: 'array',
  minItems: 1,
  uniqueItems: true,
  items: { type: 'string', enum: [...MATCH_FIELDS] },
  description:
    'Fields of each match to return, among id, similarity, estimate, meta (without the stored text), text (the stored text) and signature. Default: id, similarity, estimate, meta.',
} as const;

/** `fields` of a query string: the same, comma-separated (checked by the route, which names a bad one). */
const fieldsParam = (allowed: readonly string[], dflt: string) =>
  ({ type: 'string', maxLength: 200, description: `Comma-separated fields to return, among ${allowed.join(', ')}. Default: ${dflt}.` }) as const;

/** When a document expires: an ISO 8601 date and time, or ms since the epoch (checked by the route). */
const expiresAt = {
  anyOf: [{ type: 'string', maxLength: 64 }, { type: 'number' }],
  description:
    'When the document expires (then it is never returned, and purged): an ISO 8601 date and time such as 2026-12-27T00:00:00Z, or ms since the epoch. Not with ttl.',
} as const;
/** A time to live. */
const ttl = {
  type: 'string',
  maxLength: 32,
  description: "Time to live from now instead of expiresAt: a number and a unit, ms, s, m, h, d or w (30d). Default: the server's --ttl, else never.",
} as const;

/** A metadata filter (checked by the index, whose RangeError is a 400 naming the field). */
const filter = {
  type: 'object',
  description:
    'Only documents whose metadata matches: each top-level field equal to the value given (a string, number, boolean or null), or to one of the values of a non-empty list ({"site": "a", "lang": ["en", "fr"]}). Checked on the LSH candidates before they are scored.',
} as const;

/** A document to add. */
export const documentSchema = {
  type: 'object',
  required: ['id', 'text'],
  additionalProperties: false,
  properties: { id, text, meta, expiresAt, ttl },
} as const;

/** Matches returned per added document when the request gives no `limit`. */
export const DEFAULT_ADD_LIMIT = 100;
/** Largest `limit` of adds and queries. */
export const MAX_LIMIT = 10000;

const addLimit = {
  type: 'integer',
  minimum: 1,
  maximum: MAX_LIMIT,
  description: `Maximum near duplicates returned per document, best first (default ${DEFAULT_ADD_LIMIT}). The document is indexed either way.`,
} as const;

/** POST /v1/documents body: a document and an optional `limit`. */
export const addSchema = {
  type: 'object',
  required: ['id', 'text'],
  additionalProperties: false,
  properties: {
    id,
    text,
    meta,
    expiresAt,
    ttl,
    limit: addLimit,
    fields: matchFields,
    filter: {
      ...filter,
      description: `Only indexed documents matching it are reported as duplicates (the document is indexed either way). ${filter.description}`,
    },
  },
} as const;

/** POST /v1/documents:batch body. */
export const batchSchema = {
  type: 'object',
  required: ['documents'],
  additionalProperties: false,
  properties: { documents: { type: 'array', minItems: 1, maxItems: MAX_BATCH, items: documentSchema }, limit: addLimit, fields: matchFields, filter },
} as const;

/** POST /v1/documents:delete body: the ids to remove, in one store write. */
export const deleteManySchema = {
  type: 'object',
  required: ['ids'],
  additionalProperties: false,
  properties: {
    ids: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BATCH,
      items: id,
      description: `1 to ${MAX_BATCH} document ids (unknown and repeated ids are listed in \`missing\`).`,
    },
  },
} as const;

/** POST /v1/query body. */
export const querySchema = {
  type: 'object',
  required: ['text'],
  additionalProperties: false,
  properties: {
    text,
    limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, description: 'Maximum matches.' },
    threshold: { type: 'number', exclusiveMinimum: 0, maximum: 1, description: 'Score threshold (default: the index threshold).' },
    topK: {
      type: 'integer',
      minimum: 1,
      maximum: 1000,
      description: 'Return the k most similar distinct texts, even below the threshold; each match lists its copies (same fingerprint set) in `copies`.',
    },
    measure: {
      type: 'string',
      enum: ['jaccard', 'containment'],
      description:
        'jaccard (default), or containment: documents the query is at least threshold inside, or that are inside the query (similarity = |A∩B|/|A| for the smaller A; each match says which side is contained). Not with topK.',
    },
    fields: matchFields,
    filter,
  },
} as const;

/** Query string of GET /v1/documents/:id/duplicates (strings: the app's validator does not coerce). */
export const duplicatesQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'string', pattern: '^[1-9][0-9]{0,3}$|^10000$', description: 'Maximum matches, 1 to 10000.' },
    threshold: { type: 'string', pattern: '^(0?\\.[0-9]*[1-9][0-9]*|1(\\.0*)?)$', description: 'Score threshold in (0, 1] (default: the index threshold).' },
    fields: fieldsParam(MATCH_FIELDS, 'id,similarity,estimate,meta'),
    filter: { type: 'string', maxLength: 4096, description: `The filter as JSON (URL-encoded). ${filter.description}` },
  },
} as const;

/** Query string of GET /v1/documents/:id. */
export const documentQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { fields: fieldsParam(DOCUMENT_FIELDS, 'id,meta,shingles,expiresAt') },
} as const;

/** :id path parameter. */
export const idParamsSchema = {
  type: 'object',
  required: ['id'],
  properties: { id },
} as const;

/** One match in responses. */
export const matchSchema = {
  type: 'object',
  required: ['id', 'similarity', 'estimate'],
  properties: {
    id: { type: 'string' },
    similarity: { type: 'number', description: 'Exact Jaccard similarity (verify=exact) or the estimate.' },
    estimate: { type: 'number', description: 'MinHash estimate (with measure containment: the exact Jaccard similarity).' },
    contained: { type: 'string', enum: ['query', 'document'], description: 'With measure containment: which side is inside the other.' },
    meta: {},
    copies: {
      type: 'array',
      description:
        'topK only: the other documents with the same fingerprint set (or signature, verify estimate), by id, each with the fields asked for and the same scores.',
      items: { type: 'object' },
    },
  },
} as const;

/** Error body of every 4xx/5xx response. */
export const errorSchema = {
  type: 'object',
  required: ['statusCode', 'error', 'message'],
  properties: {
    statusCode: { type: 'integer' },
    error: { type: 'string' },
    message: { type: 'string' },
    errors: {
      type: 'array',
      description: 'Validation errors, one per field problem (400 only).',
      items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } },
    },
  },
} as const;

/** Response of POST /v1/documents. */
export const addResponseSchema = {
  type: 'object',
  properties: { id: { type: 'string' }, duplicates: { type: 'array', items: matchSchema } },
} as const;

/** :name path parameter of a named index (src/online/registry/registry.ts, INDEX_NAME). */
export const indexNameParamsSchema = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', pattern: INDEX_NAME.source, description: 'Index name: 1 to 64 lower-case letters, digits, "-" and "_".' } },
} as const;

/** Body of POST /v1/indexes: a name, where its documents are, its token and its parameters (defaults as `neardup serve`'s). */
export const createIndexSchema = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: indexNameParamsSchema.properties.name,
    store: {
      type: 'string',
      enum: ['file', 'sqlite', 'memory'],
      description: 'file (default): a file store (a directory) in the registry directory; sqlite: a SQLite file there; memory: lost on restart.',
    },
    token: {
      type: 'string',
      minLength: 1,
      maxLength: 4096,
      pattern: '\\S',
      description: 'A bearer token of its own, which opens this index only (the server token opens every index).',
    },
    threshold: { type: 'number', exclusiveMinimum: 0, maximum: 1, description: "Jaccard threshold (default: neardup serve's)." },
    shingle: { type: 'string', enum: ['char', 'word', 'spot'] },
    k: { type: 'integer', minimum: 1, maximum: 64 },
    numPerm: { type: 'integer', minimum: 1, maximum: 4096 },
    bands: { type: 'integer', minimum: 1 },
    rows: { type: 'integer', minimum: 1 },
    minRecall: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
    verify: { type: 'string', enum: ['exact', 'estimate'] },
    signatureBits: { type: 'integer', enum: [16, 32] },
    forest: { type: 'boolean', description: 'LSH-Forest keys (topK). Default true.' },
    ensemble: { type: 'boolean', description: 'Containment keys. Default false.' },
    ttl: { type: 'string', maxLength: 32, description: 'Default time to live of added documents (30d, 12h). Default: never.' },
  },
} as const;
