/**
 * Keeping a document's text in its metadata, so that the web page and the report can show what
 * two near duplicates share and what differs (the index itself keeps only fingerprints). The CLI's
 * `index add` and the HTTP service do this by default; `--no-store-text` turns it off for those who
 * must not keep texts.
 * @module
 */

/**
 * The metadata to store for a document whose text is kept: `meta` with `text` added (and `title`,
 * when given and not already there). Metadata that is not an object (a string, a number, an array)
 * has nowhere to hold the text and is kept as it is; a `text` the caller put in `meta` wins.
 */
export function withStoredText(meta: unknown, text: string, title?: string): unknown {
  if (meta === undefined || meta === null) return title ? { title, text } : { text };
  if (typeof meta !== 'object' || Array.isArray(meta)) return meta;
  const m = meta as Record<string, unknown>;
  return { ...(title && m.title === undefined ? { title } : {}), ...m, ...(m.text === undefined ? { text } : {}) };
}

/**
 * True when `meta`, as stored (JSON), holds exactly `text` as its top-level `text`: a plain object
 * whose own enumerable `text` is that string and with no `toJSON` that could store something else.
 * Only then may a record leave out its fingerprint set and recompute it from `meta.text`
 * (`setSource: 'text'`); a caller's `meta.text` that is another text keeps the set in the record.
 */
export function holdsText(meta: unknown, text: string): boolean {
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return false;
  const proto = Object.getPrototypeOf(meta) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  if (typeof (meta as { toJSON?: unknown }).toJSON === 'function') return false;
  const d = Object.getOwnPropertyDescriptor(meta, 'text');
  return d !== undefined && d.enumerable === true && 'value' in d && d.value === text;
}
