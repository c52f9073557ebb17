/**
 * Metadata filters of the online index's searches (`query`, `topK`, `duplicatesOf`, and the
 * duplicate check of `add`): equality, or membership in a list, on top-level fields of a document's
 * metadata. A filter is checked against the candidates the LSH keys found, before they are scored:
 * a candidate whose metadata does not match is neither verified nor returned. The metadata of every
 * candidate is decoded for it (JSON, stored text included), which unfiltered searches do for the
 * returned matches only: a filter that matches few documents still pays for every candidate.
 * @module
 */
import type { StoredDoc } from '../../store/types.js';
import { readRecordMeta } from '../records/record.js';

/** A value a filter compares a metadata field with (JSON scalars). */
export type FilterScalar = string | number | boolean | null;

/**
 * A metadata filter: each field must equal the value given (a scalar), or one of the values given
 * (an array of scalars). All fields must match; `{}` matches every document. A document whose
 * metadata is not an object, or lacks the field, does not match.
 */
export type MetaFilter = Readonly<Record<string, FilterScalar | readonly FilterScalar[]>>;

/** A compiled filter: whether a stored record's metadata matches. */
export type RecordFilter = (record: Uint8Array, id: string) => boolean;

function isScalar(v: unknown): v is FilterScalar {
  return v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}

/**
 * Checks a filter and returns its fields as sets of allowed values. Throws a RangeError naming
 * `where` and the field for anything else than an object of scalars or non-empty arrays of scalars.
 */
export function checkFilter(filter: unknown, where = 'filter'): Map<string, Set<FilterScalar>> {
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) {
    throw new RangeError(`${where} must be an object of metadata fields and values, like {"site": "a", "lang": ["en", "fr"]}`);
  }
  const fields = new Map<string, Set<FilterScalar>>();
  for (const [key, value] of Object.entries(filter)) {
    const at = `${where}.${key}`;
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (Array.isArray(value) && value.length === 0) throw new RangeError(`${at}: an empty list matches nothing (give at least one value)`);
    for (const v of values) {
      if (!isScalar(v)) {
        throw new RangeError(
          `${at}: values must be strings, finite numbers, booleans or null, or a list of them (got ${
            JSON.stringify(v) ?? String(v)
          }): filters compare top-level fields only`,
        );
      }
    }
    fields.set(key, new Set(values as FilterScalar[]));
  }
  return fields;
}

/** Whether metadata matches checked filter fields (values compared with ===: 1 is not "1"). */
export function metaMatches(meta: unknown, fields: ReadonlyMap<string, ReadonlySet<FilterScalar>>): boolean {
  if (fields.size === 0) return true;
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return false;
  const m = meta as Record<string, unknown>;
  for (const [key, allowed] of fields) {
    if (!Object.prototype.hasOwnProperty.call(m, key) || !allowed.has(m[key] as FilterScalar)) return false;
  }
  return true;
}

/** The record filter of a filter, or undefined for none (checked: see {@link checkFilter}). */
export function compileFilter(filter: MetaFilter | undefined, where = 'filter'): RecordFilter | undefined {
  if (filter === undefined) return undefined;
  const fields = checkFilter(filter, where);
  if (fields.size === 0) return undefined;
  return (record, id) => metaMatches(readRecordMeta(record, `record of "${id}"`), fields);
}

/** What a search keeps of its scored candidates: at most `limit` (default all), of those `filter` accepts. */
export interface Cut {
  limit?: number | undefined;
  filter?: RecordFilter | undefined;
}

/** The candidates whose metadata matches (all of them without a filter). */
export function filterCandidates(cands: StoredDoc[], filter: RecordFilter | undefined): StoredDoc[] {
  return filter ? cands.filter((c) => filter(c.record, c.id)) : cands;
}
