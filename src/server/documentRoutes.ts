/**
 * The document routes of the HTTP API:
 *   POST   /v1/documents          the near duplicates of a document, then index it
 *   POST   /v1/documents:batch    the same for a batch, in order
 *   GET    /v1/documents/:id      one document
 *   DELETE /v1/documents/:id      remove one document
 *   POST   /v1/documents:delete   remove up to MAX_BATCH documents in one store write
 * Added documents may carry an expiry (`expiresAt` or `ttl`; src/online/expiry.ts).
 * @module
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Match } from '../online/nearDupIndex.js';
import type { IndexScope } from './scope.js';
import { withStoredText } from '../online/records/storedText.js';
import { parseDuration } from '../online/expiry.js';
import { isoDateMs } from '../io/read/isoDate.js';
import { metaProblem } from './limits.js';
import type { MetaFilter } from '../online/nearDupIndex.js';
import type { Metrics } from './metrics.js';
import { addSchema, batchSchema, DEFAULT_ADD_LIMIT, deleteManySchema, documentQuerySchema, idParamsSchema } from './schemas.js';
import { DEFAULT_DOCUMENT_FIELDS, DEFAULT_MATCH_FIELDS, DOCUMENT_FIELDS, parseFields, splitStoredText, type MatchField } from '../online/fields.js';

interface DocBody {
  id: string;
  text: string;
  meta?: unknown;
  expiresAt?: string | number;
  ttl?: string;
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * The expiry options of a document body (`expiresAt` as an ISO 8601 date and time or ms since the
 * epoch, or `ttl`), or the problem with them, as a validation error of field `at`.
 */
export function expiryOfBody(d: DocBody, at: string): { expiresAt?: number; ttl?: string } | { field: string; message: string } {
  if (d.expiresAt !== undefined && d.ttl !== undefined) return { field: at, message: 'give expiresAt or ttl, not both' };
  if (d.ttl !== undefined) {
    try {
      parseDuration(d.ttl);
    } catch {
      return { field: `${at}/ttl`, message: 'must be a duration: a number and a unit, ms, s, m, h, d or w (30d, 12h)' };
    }
    return { ttl: d.ttl };
  }
  if (d.expiresAt === undefined) return {};
  const ms = typeof d.expiresAt === 'number' ? d.expiresAt : ISO_DATE_TIME.test(d.expiresAt) ? isoDateMs(d.expiresAt) : NaN;
  if (!Number.isFinite(ms))
    return { field: `${at}/expiresAt`, message: 'must be an ISO 8601 date and time that exists (2026-12-27T00:00:00Z, not 2026-02-30) or ms since the epoch' };
  return { expiresAt: ms };
}

/** 404 for an unknown document id. */
export function noDocument(reply: FastifyReply, id: string) {
  return reply.code(404).send({ statusCode: 404, error: 'Not Found', message: `no document "${id}"` });
}

/**
 * Registers the document routes. `storeText` keeps each added text in `meta.text` (AppOptions.storeText).
 */
export function registerDocumentRoutes(app: FastifyInstance, on: IndexScope, metrics: Metrics, storeText: boolean): void {
  registerAddRoutes(app, on, metrics, storeText);
  registerReadRemoveRoutes(app, on);
}

/** `POST documents` and `documents:batch`: documents added, their duplicates returned and counted. */
function registerAddRoutes(app: FastifyInstance, on: IndexScope, metrics: Metrics, storeText: boolean): void {
  const countAdds = (results: Match[][]) => {
    metrics.inc('neardup_documents_added_total', 'Documents added.', {}, results.length);
    let d = 0;
    for (const r of results) d += r.length ? 1 : 0;
    metrics.inc('neardup_documents_with_duplicates_total', 'Added documents that had at least one near duplicate.', {}, d);
  };

  const keep = (meta: unknown, text: string): unknown => (storeText ? withStoredText(meta, text) : meta);

  const badMeta = (reply: FastifyReply, problems: { field: string; message: string }[]) =>
    reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: problems.map((e) => `${e.field} ${e.message}`).join('; '), errors: problems });

  app.post<{ Body: DocBody & { limit?: number; fields?: MatchField[]; filter?: MetaFilter } }>(
    `${on.base}/documents`,
    { schema: { body: addSchema } },
    async (req, reply) => {
      const { id, text, meta, limit, fields, filter } = req.body;
      const problem = metaProblem(meta);
      if (problem) return badMeta(reply, [{ field: '/meta', message: problem }]);
      const expiry = expiryOfBody(req.body, '');
      if ('field' in expiry) return badMeta(reply, [expiry]);
      const index = on.of(req);
      const duplicates = await index.add(id, text, keep(meta, text), { limit: limit ?? DEFAULT_ADD_LIMIT, ...expiry, filter });
      countAdds([duplicates]);
      return { id, duplicates: await index.select(duplicates, fields ?? DEFAULT_MATCH_FIELDS) };
    },
  );

  // "::" is find-my-way's escape for a literal colon.
  app.post<{ Body: { documents: DocBody[]; limit?: number; fields?: MatchField[]; filter?: MetaFilter } }>(`${on.base}/documents::batch`, {
    schema: { body: batchSchema },
  }, async (req, reply) => {
    const docs = req.body.documents;
    const problems: { field: string; message: string }[] = [];
    const expiries = docs.map((d, i) => {
      const p = metaProblem(d.meta);
      if (p) problems.push({ field: `/documents/${i}/meta`, message: p });
      const e = expiryOfBody(d, `/documents/${i}`);
      if ('field' in e) problems.push(e);
      return 'field' in e ? {} : e;
    });
    if (problems.length) return badMeta(reply, problems);
    const index = on.of(req);
    const results = await index.addMany(
      docs.map((d, i) => ({ id: d.id, text: d.text, meta: keep(d.meta, d.text), ...expiries[i] })),
      { limit: req.body.limit ?? DEFAULT_ADD_LIMIT, filter: req.body.filter },
    );
    countAdds(results);
    const fields = req.body.fields ?? DEFAULT_MATCH_FIELDS;
    return { results: await Promise.all(results.map(async (duplicates, i) => ({ id: docs[i]!.id, duplicates: await index.select(duplicates, fields) }))) };
  });
}

/** `GET` and `DELETE documents/:id`, and `documents:delete`. */
function registerReadRemoveRoutes(app: FastifyInstance, on: IndexScope): void {
  // Lean by default: the stored text (meta.text) and the signature only when `fields` names them.
  app.get<{ Params: { id: string }; Querystring: { fields?: string } }>(`${on.base}/documents/:id`, {
    schema: { params: idParamsSchema, querystring: documentQuerySchema },
  }, async (req, reply) => {
    const asked = req.query.fields !== undefined;
    const want = new Set(asked ? parseFields(req.query.fields!, DOCUMENT_FIELDS, 'querystring/fields') : DEFAULT_DOCUMENT_FIELDS);
    const doc = await on.of(req).get(req.params.id);
    if (!doc) return noDocument(reply, req.params.id);
    const { meta, text } = splitStoredText(doc.meta);
    return {
      ...(want.has('id') ? { id: doc.id } : {}),
      ...(want.has('meta') ? { meta: meta ?? null } : {}),
      ...(want.has('text') ? { text } : {}),
      ...(want.has('shingles') ? { shingles: doc.shingles ?? null } : {}),
      ...(want.has('signature') ? { signature: doc.signature ? Array.from(doc.signature) : null } : {}),
      // By default only when the document has an expiry; asked for, null when it has none.
      ...(want.has('expiresAt') && (asked || doc.expiresAt !== undefined)
        ? { expiresAt: doc.expiresAt === undefined ? null : new Date(doc.expiresAt).toISOString() }
        : {}),
    };
  });

  app.delete<{ Params: { id: string } }>(`${on.base}/documents/:id`, { schema: { params: idParamsSchema } }, async (req, reply) => {
    const ok = await on.of(req).remove(req.params.id);
    if (!ok) return noDocument(reply, req.params.id);
    return { id: req.params.id, deleted: true };
  });

  // Bulk delete (datasketch #247: one request per id made 77 deletes take 50 minutes on remote Redis).
  app.post<{ Body: { ids: string[] } }>(`${on.base}/documents::delete`, { schema: { body: deleteManySchema } }, async (req) => {
    const ids = req.body.ids;
    const removed = await on.of(req).removeMany(ids);
    return { deleted: removed.filter(Boolean).length, missing: ids.filter((_, i) => !removed[i]) };
  });
}
