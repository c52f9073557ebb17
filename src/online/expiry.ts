/**
 * Expiry in the online index (issue #35): a document may carry an expiry (`expiresAt`, or a `ttl`
 * from its add or the index's default). Its record holds it (docs/formats.md, flag EXPIRES) and the
 * store files the id in an expiry index (src/store/types.ts: `expiredIds`, `countExpired`).
 *
 * Expired documents are hidden before they are purged: the index reads its store through
 * {@link liveView}, which drops expired records from lookups, gets and scans and counts them out of
 * the size, with the index's clock (`NearDupIndexOptions.now`, a seam for tests). Purging
 * (`index.purgeExpired()`, `neardup index purge`, the sweep of `neardup serve`) removes them through
 * the bulk-delete path, so their clusters split as for any removal.
 * @module
 */
import type { CandidateScreen, NearDupStore, StoredDoc } from '../store/types.js';
import { recordExpiresAt } from './records/record.js';

/** Units of a duration: `500ms`, `90s`, `15m`, `12h`, `30d`, `2w`. */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * A duration as ms: a number is taken as ms; a string is a positive number with a unit (`ms`, `s`,
 * `m`, `h`, `d`, `w`), e.g. `30d`. Anything else, zero or negative is a RangeError naming `what`.
 */
export function parseDuration(value: number | string, what = 'ttl'): number {
  let ms: number;
  if (typeof value === 'number') ms = value;
  else {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*$/.exec(String(value));
    if (!m) throw new RangeError(`${what} must be a duration such as 30d, 12h, 15m, 90s or 500ms, got "${String(value)}"`);
    ms = Number(m[1]) * UNIT_MS[m[2]!]!;
  }
  if (!(Number.isFinite(ms) && ms > 0)) throw new RangeError(`${what} must be a positive duration, got ${String(value)}`);
  // Past this, now + ttl would not be a date: say so here, not as an error deep in an add.
  if (ms > MAX_DURATION_MS) throw new RangeError(`${what} must be at most 3650000d (about 10,000 years), got ${String(value)}`);
  return ms;
}

/** The longest duration {@link parseDuration} takes: 3,650,000 days. */
export const MAX_DURATION_MS = 3_650_000 * 86_400_000;

const MAX_DATE_MS = 8.64e15;

/** An expiry given as a Date or as ms since the epoch, checked; RangeError otherwise. */
export function expiryMs(at: number | Date, what = 'expiresAt'): number {
  const ms = at instanceof Date ? at.getTime() : at;
  // ±8.64e15 ms: the range of a JavaScript Date (so that every expiry can be shown as one).
  if (typeof ms !== 'number' || !(Math.abs(ms) <= MAX_DATE_MS))
    throw new RangeError(`${what} must be a date or a finite number of ms since the epoch, got ${String(at)}`);
  return ms;
}

/** What decides a new document's expiry: its own `expiresAt`, else its `ttl`, else the index's. */
export interface ExpirySource {
  /** When it expires (Date, or ms since the epoch). */
  expiresAt?: number | Date;
  /** Time to live from now: ms, or a duration string (`30d`). */
  ttl?: number | string;
}

/**
 * The expiry of a document added at `now` (ms), or undefined (never): from its own fields when it
 * has some, else from the add's `options`, else the index's `defaultTtl` (ms).
 */
export function resolveExpiry(own: ExpirySource, options: ExpirySource, defaultTtl: number | undefined, now: number): number | undefined {
  const doc = own.expiresAt !== undefined || own.ttl !== undefined ? own : options;
  if (doc.expiresAt !== undefined) {
    if (doc.ttl !== undefined) throw new RangeError('give expiresAt or ttl, not both');
    return expiryMs(doc.expiresAt);
  }
  const ttl = doc.ttl !== undefined ? parseDuration(doc.ttl) : defaultTtl;
  return ttl === undefined ? undefined : expiryMs(now + ttl, 'now + ttl');
}

/** True when `record` has no expiry or one after `now`. */
export function isLive(record: Uint8Array, now: number): boolean {
  const at = recordExpiresAt(record);
  return at === undefined || at > now;
}

/**
 * The store as the index reads it: expired records dropped from `lookup`, `get` and `scan`, and
 * counted out of `size`; every other member is the store's own (optional ones stay absent).
 */
export function liveView(store: NearDupStore, now: () => number): NearDupStore {
  const over: Partial<NearDupStore> = {
    async lookup(queries: Float64Array[], limit: number, _now?: number, screen?: CandidateScreen): Promise<StoredDoc[][]> {
      const t = now();
      // The store leaves expired documents out before its limit: else enough of them (not purged
      // yet) fill the candidate limit and hide a live duplicate.
      const lists = await store.lookup(queries, limit, t, screen);
      return lists.map((l) => l.filter((d) => isLive(d.record, t)));
    },
    async get(ids: string[]): Promise<(Uint8Array | null)[]> {
      const recs = await store.get(ids);
      const t = now();
      return recs.map((r) => (r && isLive(r, t) ? r : null));
    },
    async size(): Promise<number> {
      const t = now();
      const [n, expired] = await Promise.all([store.size(), store.countExpired(t)]);
      return Math.max(0, n - expired);
    },
    async *scan(): AsyncIterable<StoredDoc> {
      const t = now();
      for await (const d of store.scan()) if (isLive(d.record, t)) yield d;
    },
  };
  return new Proxy(store, {
    get(target, prop) {
      if (Object.prototype.hasOwnProperty.call(over, prop)) return over[prop as keyof NearDupStore];
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
