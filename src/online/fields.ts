/**
 * Lean replies: which fields of a match (or of a document) a caller wants. The stored text lives in
 * the metadata (`meta.text`, src/online/records/storedText.ts), so every match used to carry it; with
 * `fields` a caller asks for ids and scores only, or for the text as a field of its own, or for the
 * stored signature (datasketch #242).
 * @module
 */
/** The fields a match can have in a lean reply. */
export const MATCH_FIELDS = ['id', 'similarity', 'estimate', 'meta', 'text', 'signature'] as const;

/** One field of {@link MATCH_FIELDS}. */
export type MatchField = (typeof MATCH_FIELDS)[number];

/** What the HTTP API returns when a request names no fields: no stored text, no signature. */
export const DEFAULT_MATCH_FIELDS: readonly MatchField[] = ['id', 'similarity', 'estimate', 'meta'];

/** The fields a document (GET /v1/documents/:id) can have. */
export const DOCUMENT_FIELDS = ['id', 'meta', 'text', 'shingles', 'signature', 'expiresAt'] as const;

/** One field of {@link DOCUMENT_FIELDS}. */
export type DocumentField = (typeof DOCUMENT_FIELDS)[number];

/** What GET /v1/documents/:id returns when the request names no fields (`expiresAt` only when the document has one). */
export const DEFAULT_DOCUMENT_FIELDS: readonly DocumentField[] = ['id', 'meta', 'shingles', 'expiresAt'];

/** A match as the index scores it (the fields of `Match` in types.ts, which imports this module's types). */
interface ScoredMatch<Meta> {
  id: string;
  similarity: number;
  estimate: number;
  meta?: Meta;
  contained?: 'query' | 'document';
  copies?: ScoredMatch<Meta>[];
}

/** A match with only the fields asked for (`contained` stays whenever the query measured containment). */
export interface LeanMatch<Meta = unknown> {
  /** Id of the indexed document. */
  id?: string;
  /** The score (see `Match.similarity`). */
  similarity?: number;
  /** The MinHash estimate (see `Match.estimate`). */
  estimate?: number;
  /** The metadata without the stored text (absent when the text was all of it, or none was stored). */
  meta?: Meta;
  /** The stored text (`meta.text`), null when the document has none. */
  text?: string | null;
  /** The stored MinHash signature, null for a document without shingles. */
  signature?: number[] | null;
  /** The side that is inside the other (see `Match.contained`). */
  contained?: 'query' | 'document';
  /** topK hits: the hit's copies, each with the same fields (see `TopKMatch.copies`). */
  copies?: LeanMatch<Meta>[];
}

/**
 * Parses a comma-separated list of fields (`id,similarity`) against `allowed`. Throws a RangeError
 * naming `where`, the unknown field and the allowed ones.
 */
export function parseFields<F extends string>(list: string | readonly string[], allowed: readonly F[], where: string): F[] {
  const items = typeof list === 'string' ? list.split(',').map((s) => s.trim()) : [...list];
  if (items.length === 0 || items.some((f) => f === '')) throw new RangeError(`${where}: empty field name (expected some of ${allowed.join(', ')})`);
  for (const f of items) if (!allowed.includes(f as F)) throw new RangeError(`${where}: unknown field "${f}" (expected some of ${allowed.join(', ')})`);
  return [...new Set(items)] as F[];
}

/** The metadata without its stored text, and the text (null when none is stored as `meta.text`). */
export function splitStoredText(meta: unknown): { meta: unknown; text: string | null } {
  if (!meta || typeof meta !== 'object' || Array.isArray(meta) || typeof (meta as { text?: unknown }).text !== 'string') return { meta, text: null };
  const { text, ...rest } = meta as { text: string };
  return { meta: Object.keys(rest).length ? rest : undefined, text };
}

/**
 * Keeps only `fields` of each match (and of each copy of a topK hit, whose `copies` always stay).
 * `signatures` fetches the stored signatures of ids (one store read), called only when `signature`
 * is asked for.
 */
export async function selectMatchFields<Meta>(
  matches: ScoredMatch<Meta>[],
  fields: readonly MatchField[],
  signatures: (ids: string[]) => Promise<(Uint32Array | null)[]>,
): Promise<LeanMatch<Meta>[]> {
  const want = new Set(fields);
  const all = matches.flatMap((m) => [m, ...(m.copies ?? [])]);
  const sigs = want.has('signature') ? await signatures(all.map((m) => m.id)) : [];
  const sigOf = new Map(sigs.map((s, i) => [all[i]!, s]));
  const lean = (m: ScoredMatch<Meta>): LeanMatch<Meta> => {
    const out: LeanMatch<Meta> = {};
    if (want.has('id')) out.id = m.id;
    if (want.has('similarity')) out.similarity = m.similarity;
    if (want.has('estimate')) out.estimate = m.estimate;
    if (want.has('meta') || want.has('text')) {
      const s = splitStoredText(m.meta);
      if (want.has('meta') && s.meta !== undefined) out.meta = s.meta as Meta;
      if (want.has('text')) out.text = s.text;
    }
    if (want.has('signature')) out.signature = sigOf.get(m) ? Array.from(sigOf.get(m)!) : null;
    if (m.contained) out.contained = m.contained;
    if (m.copies) out.copies = m.copies.map(lean);
    return out;
  };
  return matches.map(lean);
}
