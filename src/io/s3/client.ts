/**
 * Object storage (S3 and S3-compatible stores: MinIO, Ceph RGW, R2, s3rver) behind the file layer:
 * `s3://bucket/key` names, one client, and the few requests neardup makes (HEAD, ranged GET, list
 * by prefix, PUT, multipart upload). The AWS SDK v3 (`@aws-sdk/client-s3`) is an optional package
 * loaded on first use. Credentials and region come from the SDK's default chain; the endpoint from
 * {@link setS3Endpoint} (`--s3-endpoint`) or the SDK's own `AWS_ENDPOINT_URL`.
 *
 * Requests are retried by the SDK's retry loop under neardup's retry strategy, and a body cut short
 * or a 404 of a key just written by neardup (./retry.ts). Multipart uploads are the SDK's
 * (`@aws-sdk/lib-storage`'s `Upload`, an optional package loaded when one is needed).
 * @module
 */
import { open } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { UsageError } from '../../common/errors.js';
import { loadPackage } from '../../common/lazy.js';
import { attempts, countAttempts, hostNotFound, retrying, retryStrategy, statusOf } from './retry.js';
export { s3Requests, setS3Log } from './retry.js';

/** A parsed `s3://bucket/key` name. */
export interface S3Url {
  /** The bucket. */
  bucket: string;
  /** The key (or key prefix), without a leading `/`; may be empty. */
  key: string;
}

/** True when `p` names an object or prefix in object storage. */
export function isS3Url(p: string | undefined): p is string {
  return typeof p === 'string' && p.startsWith('s3://');
}

/** Splits `s3://bucket/key`; a name without a bucket is a usage error naming it. */
export function parseS3Url(url: string): S3Url {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(url);
  if (!m || !m[1]) throw new UsageError(`${url}: not an S3 name (expected s3://bucket/key)`);
  return { bucket: m[1], key: m[2]! };
}

/** Bytes of one ranged GET: large blocks, since small buffered reads cost one request each. */
export const S3_BLOCK = 8 << 20;
/** Ranged GETs (and multipart parts) in flight at once per object, and objects at once per list. */
export const PARALLEL = 4;
let endpoint: string | undefined;
let client: Promise<S3Handle> | undefined;

/** Sets the endpoint of an S3-compatible store (`--s3-endpoint`); undefined: `AWS_ENDPOINT_URL`, else AWS. */
export function setS3Endpoint(url: string | undefined): void {
  if (url !== undefined && !/^https?:\/\/[^/]+/.test(url)) throw new UsageError(`--s3-endpoint ${url}: expected http(s)://host[:port]`);
  endpoint = url;
  client = undefined;
}

/** Path-style addressing for an endpoint given by IP address or localhost: those have no bucket subdomains. */
export function wantsPathStyle(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.includes(':');
}

type Sdk = typeof import('@aws-sdk/client-s3');
interface S3Handle {
  sdk: Sdk;
  s3: import('@aws-sdk/client-s3').S3Client;
}

async function handle(): Promise<S3Handle> {
  client ??= (async () => {
    // Its Node 20 deprecation notice would come before every command's output; docs/distributed.md says it.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    const sdk = await loadPackage<Sdk>('@aws-sdk/client-s3', 'reading and writing s3:// names');
    const ep = endpoint ?? process.env.AWS_ENDPOINT_URL_S3 ?? process.env.AWS_ENDPOINT_URL;
    // S3-compatible stores ignore the region, but the SDK refuses to sign without one.
    const region = ep && !process.env.AWS_REGION && !process.env.AWS_DEFAULT_REGION ? 'us-east-1' : undefined;
    const most = attempts();
    const s3 = new sdk.S3Client({
      endpoint: ep,
      forcePathStyle: ep ? wantsPathStyle(ep) : undefined,
      region,
      maxAttempts: most,
      retryStrategy: retryStrategy(most),
    });
    s3.middlewareStack.add(countAttempts, { step: 'finalizeRequest', priority: 'low', name: 'neardupAttempts' });
    return { sdk, s3 };
  })();
  return client;
}

/**
 * A 404: the bucket or the key is missing, and the message says which. `unknown` is a 404 that does
 * not say (a HEAD has no body to name the error; some stores send none).
 */
export class S3NotFoundError extends UsageError {
  readonly missing: 'bucket' | 'key' | 'unknown';

  constructor(url: string, missing: 'bucket' | 'key' | 'unknown') {
    const { bucket, key } = parseS3Url(url);
    super(
      missing === 'bucket'
        ? `${url}: there is no bucket "${bucket}"`
        : missing === 'key'
        ? `${url}: the bucket "${bucket}" has no key "${key}"`
        : `${url}: not found (HTTP 404: either the bucket "${bucket}" or the key "${key}" is missing)`,
    );
    this.missing = missing;
  }
}

/** True for a 404 that is not a missing bucket: what a read of an optional key treats as "none there". */
function keyMissing(e: unknown): boolean {
  return e instanceof S3NotFoundError && e.missing !== 'bucket';
}

/** An SDK error as one line naming the object. Missing buckets and keys and denied access are usage errors (exit 2). */
function s3Error(url: string, e: unknown): Error {
  const status = statusOf(e);
  const name = (e as Error)?.name ?? 'Error';
  if (name === 'NoSuchBucket') return new S3NotFoundError(url, 'bucket');
  if (name === 'NoSuchKey') return new S3NotFoundError(url, 'key');
  if (status === 404 || name === 'NotFound') return new S3NotFoundError(url, 'unknown');
  if (status === 403)
    return new UsageError(
      `${url}: access denied (credentials come from the AWS SDK's default chain: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, instance roles)`,
    );
  if (name === 'MissingDependencyError' || e instanceof UsageError) return e as Error;
  if (hostNotFound(e)) {
    const host = (e as { hostname?: string }).hostname ?? 'the endpoint';
    return new UsageError(`${url}: the S3 endpoint's host "${host}" does not exist (DNS: ENOTFOUND); check --s3-endpoint or AWS_ENDPOINT_URL`);
  }
  if (name === 'CredentialsProviderError')
    return new Error(
      `${url}: no AWS credentials found (the SDK's default chain: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, SSO, instance or pod roles)`,
    );
  const msg = (e as Error)?.message || name;
  return new Error(`${url}: ${msg}${status ? ` (HTTP ${status})` : ''}`);
}

/** Runs one request with the client (see ./retry.ts for what is retried, and where). */
async function withRetry<T>(url: string, what: string, run: (h: S3Handle) => Promise<T>, notFoundToo = false): Promise<T> {
  const h = await handle();
  return retrying({ url, what, notFoundToo }, () => run(h), (e) => s3Error(url, e));
}

/** The size of an object, or undefined when there is none at that key. */
export async function s3Size(url: string): Promise<number | undefined> {
  const { bucket, key } = parseS3Url(url);
  if (key === '' || key.endsWith('/')) return undefined;
  try {
    return await withRetry(url, 'HEAD', async ({ sdk, s3 }) => (await s3.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: key }))).ContentLength ?? 0);
  } catch (e) {
    if (keyMissing(e)) return undefined;
    throw e;
  }
}

/** Keys below `prefix` in `bucket`, in the store's (UTF-8 byte) order, with their sizes. */
export async function s3List(bucket: string, prefix: string): Promise<{ key: string; size: number }[]> {
  const out: { key: string; size: number }[] = [];
  let token: string | undefined;
  do {
    const page = await withRetry(
      `s3://${bucket}/${prefix}`,
      'LIST',
      async ({ sdk, s3 }) => s3.send(new sdk.ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token })),
    );
    for (const o of page.Contents ?? []) if (o.Key !== undefined) out.push({ key: o.Key, size: o.Size ?? 0 });
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return out;
}

/**
 * Runs `jobs` with at most `n` in flight. After a failure no job starts, and the first failure is
 * thrown once the jobs in flight have ended (so nothing still writes when the caller cleans up).
 */
export async function inParallel(jobs: (() => Promise<void>)[], n: number): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (!failure && next < jobs.length) {
      try {
        await jobs[next++]!();
      } catch (e) {
        failure ??= { error: e };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, jobs.length) }, lane));
  if (failure) throw failure.error;
}

/**
 * Copies the object `url` (of `size` bytes) to the local file `file` in ranged GETs of
 * {@link S3_BLOCK} bytes, {@link PARALLEL} at a time. A 404 is retried: the key was just listed.
 */
export async function s3Download(url: string, size: number, file: string): Promise<void> {
  const { bucket, key } = parseS3Url(url);
  const fh = await open(file, 'w');
  try {
    const blocks: (() => Promise<void>)[] = [];
    for (let start = 0; start < size || (size === 0 && start === 0); start += S3_BLOCK) {
      if (size === 0) break;
      const end = Math.min(size, start + S3_BLOCK) - 1;
      blocks.push(async () => {
        const bytes = await withRetry(url, 'GET', async ({ sdk, s3 }) => {
          const r = await s3.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${start}-${end}` }));
          const b = await r.Body!.transformToByteArray();
          // A short body (a connection cut mid-block) is retried like any dropped connection.
          if (b.length !== end - start + 1) throw Object.assign(new Error(`short read: ${b.length} of ${end - start + 1} bytes`), { code: 'ECONNRESET' });
          return b;
        }, true);
        await fh.write(bytes, 0, bytes.length, start);
      });
    }
    await inParallel(blocks, PARALLEL);
  } finally {
    await fh.close();
  }
}

async function readBlock(file: string, start: number, length: number): Promise<Buffer> {
  if (length === 0) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  for await (const c of createReadStream(file, { start, end: start + length - 1 })) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Uploads the local file `file` (of `size` bytes) to `url`. Up to one block it is one PUT; larger,
 * the SDK's multipart upload (`@aws-sdk/lib-storage`'s `Upload`): {@link S3_BLOCK} parts,
 * {@link PARALLEL} at a time, each retried by the client's loop, completed last, and aborted on
 * failure. In both cases the object appears whole or not at all.
 */
export async function s3Upload(file: string, size: number, url: string): Promise<void> {
  const { bucket, key } = parseS3Url(url);
  if (size <= S3_BLOCK) {
    const body = await readBlock(file, 0, size);
    await withRetry(url, 'PUT', async ({ sdk, s3 }) => s3.send(new sdk.PutObjectCommand({ Bucket: bucket, Key: key, Body: body })));
    return;
  }
  const { Upload } = await loadPackage<typeof import('@aws-sdk/lib-storage')>('@aws-sdk/lib-storage', `writing s3:// objects over ${S3_BLOCK >> 20} MB`);
  const { s3 } = await handle();
  const upload = new Upload({
    client: s3,
    params: { Bucket: bucket, Key: key, Body: createReadStream(file) },
    partSize: S3_BLOCK,
    queueSize: PARALLEL,
    leavePartsOnError: false,
  });
  try {
    await upload.done();
  } catch (e) {
    throw s3Error(url, e);
  }
}

/** What a HEAD tells of an object: its size and when it was last written (ms since the epoch). */
export interface S3ObjectInfo {
  size: number;
  lastModified: number;
}

/** Size and modification time of the object `url`, or undefined when there is none. */
export async function s3Head(url: string): Promise<S3ObjectInfo | undefined> {
  const { bucket, key } = parseS3Url(url);
  if (key === '' || key.endsWith('/')) return undefined;
  try {
    return await withRetry(url, 'HEAD', async ({ sdk, s3 }) => {
      const r = await s3.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: key }));
      return { size: r.ContentLength ?? 0, lastModified: r.LastModified ? r.LastModified.getTime() : 0 };
    });
  } catch (e) {
    if (keyMissing(e)) return undefined;
    throw e;
  }
}

/**
 * The bytes of a small object (a marker, a plan), or of `range` (`[start, end]`, inclusive) of one;
 * undefined when there is no such object. Not for large objects: {@link s3Download} copies those.
 */
export async function s3Get(url: string, range?: [number, number]): Promise<Buffer | undefined> {
  const { bucket, key } = parseS3Url(url);
  try {
    return await withRetry(url, 'GET', async ({ sdk, s3 }) => {
      const r = await s3.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key, Range: range ? `bytes=${range[0]}-${range[1]}` : undefined }));
      const b = Buffer.from(await r.Body!.transformToByteArray());
      const want = range ? range[1] - range[0] + 1 : r.ContentLength;
      if (want !== undefined && b.length !== want) throw Object.assign(new Error(`short read: ${b.length} of ${want} bytes`), { code: 'ECONNRESET' });
      return b;
    });
  } catch (e) {
    if (keyMissing(e)) return undefined;
    throw e;
  }
}

/**
 * GETs a small object and parses it with `parse`, reading it again (up to `tries` reads, 50 ms, then
 * 100, 200, … apart: 3.2 s in all by default, longer than {@link s3PutSettled} takes to mend a torn object) while the parser throws. AWS S3 and MinIO replace an object atomically, but a
 * store that writes objects in place on a file system (s3rver, file-backed gateways) can serve a
 * half-written body to a reader racing the writer: a task marker read that way is torn, not damaged.
 * A body still unparsable after the last read is the parser's error. Undefined when there is no object.
 */
export async function s3GetParsed<T>(url: string, parse: (body: Buffer) => T, tries = 7): Promise<T | undefined> {
  for (let i = 1;; i++) {
    const b = await s3Get(url);
    if (!b) return undefined;
    try {
      return parse(b);
    } catch (e) {
      if (i >= tries) throw e;
      await new Promise((r) => setTimeout(r, 50 * 2 ** (i - 1)));
    }
  }
}

/**
 * Writes a small object in one PUT. With `ifNoneMatch`, the PUT is conditional (`If-None-Match: *`):
 * on a store that honours it, it fails with 412 when an object is already there, and this returns
 * false (the first writer won); a store that ignores the header (s3rver) overwrites, and this returns true.
 */
export async function s3Put(url: string, body: Buffer | string, ifNoneMatch = false): Promise<boolean> {
  const { bucket, key } = parseS3Url(url);
  try {
    await withRetry(
      url,
      'PUT',
      async ({ sdk, s3 }) =>
        s3.send(new sdk.PutObjectCommand({ Bucket: bucket, Key: key, Body: Buffer.from(body), IfNoneMatch: ifNoneMatch ? '*' : undefined })),
    );
    return true;
  } catch (e) {
    // 409 ConditionalRequestConflict: a concurrent conditional write to the same key; it will win or has won.
    if (ifNoneMatch && /HTTP (412|409)|PreconditionFailed|ConditionalRequestConflict/.test((e as Error).message)) return false;
    throw e;
  }
}

/** What {@link s3PutSettled} left in the store. */
export interface Settled<T> {
  /** False when the store refused a conditional PUT: an object was there first. */
  written: boolean;
  /** What the store holds after the write, parsed: ours, or a concurrent writer's; undefined if it is gone. */
  stored: T | undefined;
}

/**
 * Writes a small object (see {@link s3Put}), then reads it back and parses it. Two writers racing
 * on one key of a store that writes in place (s3rver ignores `If-None-Match`, so both write) can
 * leave the longer body's tail after the shorter one: an object that never parses. While the
 * read-back does not parse, ours is written again, whole (a PUT truncates), up to `repairs` times.
 * A refused conditional PUT is not repaired: the object there is another writer's, and a
 * store that honours the condition replaces objects atomically.
 */
export async function s3PutSettled<T>(
  url: string,
  body: string,
  parse: (body: Buffer) => T,
  opts: { ifNoneMatch?: boolean; repairs?: number } = {},
): Promise<Settled<T>> {
  const written = await s3Put(url, body, opts.ifNoneMatch ?? false);
  for (let i = 0;; i++) {
    try {
      // Two reads, 50 ms apart: a body torn for good is mended sooner than readers give up on it.
      return { written, stored: await s3GetParsed(url, parse, 2) };
    } catch (e) {
      if (!written || i >= (opts.repairs ?? 4)) throw e;
      // A random pause, so racing writers mend one after another rather than tear it again.
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 80));
      await s3Put(url, body);
    }
  }
}

/** Deletes an object (none there is not an error). */
export async function s3Delete(url: string): Promise<void> {
  const { bucket, key } = parseS3Url(url);
  await withRetry(url, 'DELETE', async ({ sdk, s3 }) => s3.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: key })));
}
