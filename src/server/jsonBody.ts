/**
 * JSON request bodies checked in their bytes: Fastify's parser decodes a body as UTF-8 with
 * replacement, so invalid bytes became U+FFFD and two ids (`"k\xff"`, `"k\xfe"`) became one. Here
 * the bytes are decoded strictly; invalid UTF-8 is a 400 naming the field that holds it (a JSON
 * pointer, `/documents/3/id`), and valid bodies go on to Fastify's own JSON parser (with its
 * prototype-poisoning checks).
 * @module
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** A body that is not valid UTF-8: answered 400 with the field. */
export class InvalidUtf8BodyError extends Error {
  readonly statusCode = 400;
  constructor(
    /** JSON pointer of the string holding the first invalid byte (`/` when it is outside any string). */
    readonly field: string,
    /** Offset of that byte in the body. */
    readonly offset: number,
  ) {
    super(`${field} is not valid UTF-8 (byte ${offset} of the body)`);
  }
}

/**
 * A body that is valid JSON but holds a `__proto__` or `constructor.prototype` key, which Fastify's
 * parser refuses (prototype poisoning) with the message of a syntax error, "Body is not valid JSON":
 * answered 400 naming the key and where it is.
 */
export class ForbiddenKeyBodyError extends Error {
  readonly statusCode = 400;
  constructor(
    /** JSON pointer of the key. */
    readonly field: string,
    /** `__proto__` or `constructor.prototype`. */
    readonly key: string,
  ) {
    super(`${field} is a "${key}" key, which is not accepted (it could change object prototypes): the body is valid JSON, rename the key`);
  }
}

/** The first `__proto__` or `constructor.prototype` key in `v` (a JSON.parse result), with its pointer. */
export function forbiddenKey(v: unknown, at = ''): { field: string; key: string } | undefined {
  if (v === null || typeof v !== 'object') return undefined;
  for (const k of Object.keys(v)) {
    const here = `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const x = (v as Record<string, unknown>)[k];
    if (k === '__proto__') return { field: here, key: '__proto__' };
    if (k === 'constructor' && x !== null && typeof x === 'object' && !Array.isArray(x) && Object.prototype.hasOwnProperty.call(x, 'prototype'))
      return { field: `${here}/prototype`, key: 'constructor.prototype' };
    const f = forbiddenKey(x, here);
    if (f) return f;
  }
  return undefined;
}

/** Offset of the first byte of `b` that does not start or continue a valid UTF-8 sequence, or −1. */
export function firstInvalidUtf8(b: Uint8Array): number {
  const n = b.length;
  let i = 0;
  while (i < n) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c === 0xe0) lo = 0xa0;
      else if (c === 0xed) hi = 0x9f; // no surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c === 0xf0) lo = 0x90;
      else if (c === 0xf4) hi = 0x8f;
    } else return i;
    if (i + need >= n) return i;
    const d = b[i + 1]!;
    if (d < lo || d > hi) return i;
    for (let k = 2; k <= need; k++) {
      const e = b[i + k];
      if (e === undefined || e < 0x80 || e > 0xbf) return i;
    }
    i += need + 1;
  }
  return -1;
}

/** Two noncharacters standing for the invalid bytes while the field is looked for. */
const MARK = '\ufdd0\ufdef';

/** The JSON pointer of the first string (name or value) in `v` that holds {@link MARK}. */
function pointerOf(v: unknown, at: string): string | undefined {
  if (typeof v === 'string') return v.includes(MARK) ? at : undefined;
  if (v === null || typeof v !== 'object') return undefined;
  for (const [k, x] of Object.entries(v)) {
    const here = `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (k.includes(MARK)) return here;
    const p = pointerOf(x, here);
    if (p !== undefined) return p;
  }
  return undefined;
}

/** Where the first invalid byte of `body` is, as an error naming its field. */
function locate(body: Buffer, offset: number): InvalidUtf8BodyError {
  const dec = new TextDecoder('utf-8');
  const text = dec.decode(body.subarray(0, offset)) + MARK + dec.decode(body.subarray(offset + 1));
  let field = '/';
  try {
    field = pointerOf(JSON.parse(text), '') ?? '/';
  } catch {
    // The byte is outside any string (or the body is not JSON either): the body as a whole.
  }
  return new InvalidUtf8BodyError(field || '/', offset);
}

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Replaces the app's application/json parser by one that refuses invalid UTF-8 (see the module). */
export function installJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req: FastifyRequest, body: Buffer | string, done) => {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    let text: string;
    try {
      text = strict.decode(bytes);
    } catch {
      done(locate(bytes, Math.max(0, firstInvalidUtf8(bytes))), undefined);
      return;
    }
    void parseJson(req, text, (err, value) => {
      if (err) {
        // Refused: a syntax error, or a poisoning key in valid JSON, which is then named.
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          done(err, undefined);
          return;
        }
        const f = forbiddenKey(parsed);
        done(f ? new ForbiddenKeyBodyError(f.field, f.key) : err, undefined);
        return;
      }
      done(null, value);
    });
  });
}
