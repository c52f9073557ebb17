/**
 * Test helper: a real S3-compatible server (s3rver, a devDependency run as its own process on a
 * loopback port) and a fault-injecting HTTP proxy in front of it that answers a fixed share of
 * requests with 503 or 429 instead of forwarding them. s3rver was chosen because it installs from
 * npm with no native code and supports what neardup uses (ranged GETs, ListObjectsV2, multipart
 * uploads); it does not implement conditional PUT (If-None-Match: *), which the proxy can add
 * (`conditional`): a PUT with that header is answered 412 when a HEAD finds the object there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before } from 'node:test';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './redis.js';
import { leashed } from './leash.js';
import { tmpDir } from '../cliUtil.js';
import { jsonl, plantedDocs, writeShards } from './shards.js';
import { S3Client, PutObjectCommand, ListObjectsV2Command, GetObjectCommand, DeleteObjectCommand } from '@aws-sdk/client-s3';

// The SDK's notice that its 2027 versions need Node 22 would be printed in every test run on Node 20.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

/** Credentials s3rver accepts. */
export const S3_ENV = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' };

/**
 * S3_ENV for the sharded jobs behind the proxy that fails every third request (test/e2e/s3-job*,
 * distributed-s3*): retries after 5 ms instead of 100 ms, up to 16 attempts instead of 8. A job
 * there made ~1,400 retries and spent half its time waiting (80 s instead of 40 s). Retrying at
 * once lands amid the job's parallel requests, where one in three still fails, instead of in a
 * quiet moment: 8 attempts then ran out once in a few runs, 16 do not. The retries are the same.
 */
export const S3_JOB_ENV = { ...S3_ENV, NEARDUP_S3_RETRY_MS: '5', NEARDUP_S3_ATTEMPTS: '16' };

/** Why the S3 tests cannot run, or undefined. */
export function s3rverMissing(): string | undefined {
  try {
    createRequire(import.meta.url).resolve('s3rver/package.json');
    return undefined;
  } catch {
    return 'needs the s3rver devDependency; install: npm install --no-save s3rver';
  }
}

/** A running s3rver with one bucket, its endpoint, and a client of it. */
export interface S3Server {
  endpoint: string;
  port: number;
  client: S3Client;
  stop(): Promise<void>;
}

/** Starts s3rver on a free loopback port with the bucket `bucket`, its data in a temp directory. */
export async function startS3rver(bucket: string): Promise<S3Server> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-s3rver-'));
  const port = await freePort();
  const bin = path.join(path.dirname(createRequire(import.meta.url).resolve('s3rver/package.json')), 'bin/s3rver.js');
  const child: ChildProcess = spawn(
    ...leashed(process.execPath, [bin, '-d', dir, '-a', '127.0.0.1', '-p', String(port), '--silent', '--configure-bucket', bucket]),
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  for (let i = 0;; i++) {
    const up = await new Promise<boolean>((r) => {
      const s = net.connect(port, '127.0.0.1', () => (s.end(), r(true)));
      s.on('error', () => r(false));
    });
    if (up) break;
    if (child.exitCode !== null || i > 200) throw new Error(`s3rver did not start: ${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ endpoint, forcePathStyle: true, region: 'us-east-1', credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  return {
    endpoint,
    port,
    client,
    async stop() {
      client.destroy();
      child.kill();
      await new Promise((r) => child.once('exit', r));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A proxy that fails requests by a {@link FaultRule} (default: number 1, 4, 7…, with 503 and 429 in turn). */
export interface FaultProxy {
  endpoint: string;
  /** Requests seen, those failed on purpose, conditional PUTs answered 412, and body bytes sent back for GETs. */
  stats: { requests: number; failed: number; preconditionFailed: number; bytesDown: number };
  stop(): Promise<void>;
}

/** Which requests fail, and with which status: by default every third, 503 and 429 in turn. */
export type FaultRule = (req: http.IncomingMessage, n: number, failed: number) => number | undefined;

const everyThird: FaultRule = (_req, n, failed) => (n % 3 === 1 ? (failed % 2 === 0 ? 503 : 429) : undefined);

/** Whether s3rver has an object at the request's path (a HEAD of it). */
function exists(targetPort: number, req: http.IncomingMessage): Promise<boolean> {
  return new Promise((resolve) => {
    // Unsigned: the request's signature is for its PUT (s3rver serves anonymous reads).
    const head = http.request({ host: '127.0.0.1', port: targetPort, method: 'HEAD', path: (req.url ?? '/').split('?')[0] }, (r) => {
      r.resume();
      resolve(r.statusCode === 200);
    });
    head.on('error', () => resolve(false));
    head.end();
  });
}

/**
 * Starts a {@link FaultProxy} in front of `target` (host:port on loopback). `conditional`: honour
 * `If-None-Match: *` on PUT as S3 does (412 when the object is there; checked, then forwarded: not
 * atomic, enough for tests that race two writers a second apart).
 */
export async function startFaultProxy(targetPort: number, rule: FaultRule = everyThird, conditional = false): Promise<FaultProxy> {
  const stats = { requests: 0, failed: 0, preconditionFailed: 0, bytesDown: 0 };
  const server = http.createServer(async (req, res) => {
    if (conditional && req.method === 'PUT' && req.headers['if-none-match'] === '*' && (await exists(targetPort, req))) {
      stats.preconditionFailed++;
      req.resume();
      res.writeHead(412, { 'content-type': 'application/xml' });
      res.end(
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>',
      );
      return;
    }
    const status = rule(req, stats.requests++, stats.failed);
    if (status !== undefined) {
      stats.failed++;
      req.resume();
      res.writeHead(status, { 'content-type': 'application/xml' });
      res.end(
        `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${status === 429 ? 'SlowDown' : 'ServiceUnavailable'}</Code><Message>injected</Message></Error>`,
      );
      return;
    }
    const up = http.request({ host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: req.headers }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      if (req.method === 'GET') ur.on('data', (c: Buffer) => (stats.bytesDown += c.length));
      ur.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stats,
    stop: () => new Promise((r) => server.close(() => r())),
  };
}

/** Puts `body` at `key`. */
export async function putObject(s: S3Server, bucket: string, key: string, body: Buffer | string): Promise<void> {
  await s.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
}

/** Every object under `prefix`, by key relative to it. */
export async function getObjects(s: S3Server, bucket: string, prefix: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const list = await s.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  for (const o of list.Contents ?? []) {
    const r = await s.client.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key! }));
    out.set(o.Key!.slice(prefix.length), Buffer.from(await r.Body!.transformToByteArray()));
  }
  return out;
}

/** Deletes the object at `key`. */
export async function deleteObject(s: S3Server, bucket: string, key: string): Promise<void> {
  await s.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
}

/** s3rver with a fault proxy in front, and the corpus of {@link startS3Corpus} locally and in the bucket. */
export interface S3Corpus {
  server: S3Server;
  proxy: FaultProxy;
  /** The local directory: `in/` (the shards) and `all.jsonl`. */
  dir: string;
  stop(): Promise<void>;
}

/**
 * Starts s3rver with `bucket` and a proxy that fails every third request, and writes 800 planted
 * documents as four zstd JSONL shards to `in/` (with a `_SUCCESS` the readers skip) and whole to
 * `all.jsonl`, both in a temp directory and under the same keys in the bucket: the corpus of the
 * s3:// tests of test/io/s3/.
 */
export async function startS3Corpus(bucket: string): Promise<S3Corpus> {
  const server = await startS3rver(bucket);
  const proxy = await startFaultProxy(server.port);
  const dir = tmpDir();
  const docs = plantedDocs(800, 0.3, 33);
  const files = await writeShards(path.join(dir, 'in'), docs, 4, ['jsonl.zst']);
  for (const f of files) await putObject(server, bucket, `in/${path.basename(f)}`, fs.readFileSync(f));
  // Hidden by the Hadoop convention, as in a local directory of shards.
  await putObject(server, bucket, 'in/_SUCCESS', '');
  fs.writeFileSync(path.join(dir, 'all.jsonl'), jsonl(docs));
  await putObject(server, bucket, 'all.jsonl', fs.readFileSync(path.join(dir, 'all.jsonl')));
  return {
    server,
    proxy,
    dir,
    async stop() {
      await proxy.stop();
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Registers the file's before and after hooks for {@link startS3Corpus}: `take` gets the corpus once
 * it runs (nothing starts when s3rver is `missing` and the tests skip).
 */
export function useS3Corpus(bucket: string, missing: string | undefined, take: (c: S3Corpus) => void): void {
  let corpus: S3Corpus | undefined;
  before(async () => {
    if (missing) return;
    corpus = await startS3Corpus(bucket);
    take(corpus);
  });
  after(async () => {
    await corpus?.stop();
  });
}
