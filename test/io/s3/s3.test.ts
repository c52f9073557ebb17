/**
 * The S3 client against a real S3-compatible server process (s3rver), part of the time through a
 * proxy that fails every third request with 503 or 429: retries (a dedup of s3:// shards to an
 * s3:// --out-dir gives the local run's bytes), multipart uploads and ranged GETs, missing buckets
 * and keys, torn bodies and racing writers. These run on every Node version (scripts/test-tier.mjs);
 * the CLI's s3:// names for every command and output are in ./staging.test.ts, run once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { neardup } from '../../cliUtil.js';
import { neardupAsync } from '../../helpers/procs.js';
import { REQUIRE_ALL } from '../../helpers/needs.js';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { s3Download, s3Get, s3GetParsed, s3Put, s3PutSettled, s3Requests, s3Size, s3Upload, setS3Endpoint } from '../../../src/io/s3/client.js';
import { listS3Input } from '../../../src/io/s3/staging.js';
import { getObjects, s3rverMissing, startFaultProxy, useS3Corpus, S3_ENV, type FaultProxy, type S3Server } from '../../helpers/s3.js';

const missing = REQUIRE_ALL ? undefined : s3rverMissing();
const opts = missing ? { skip: missing } : {};
const BUCKET = 'corpus';
let server: S3Server;
let proxy: FaultProxy;
let dir: string;
useS3Corpus(BUCKET, missing, (c) => ({ server, proxy, dir } = c));

/** neardup with the server's credentials, through the endpoint given (a child process: the proxy runs in this one). */
function run(args: string[], endpoint: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return neardupAsync([...args, '--s3-endpoint', endpoint], dir, S3_ENV);
}

test('dedup of s3:// shards to an s3:// --out-dir equals the local run byte for byte, through injected 503s and 429s', opts, async () => {
  const local = neardup(['dedup', 'in/*.jsonl.zst', '--id-field', 'id', '--output', 'dedup', '--out-dir', 'clean-local/', '-q'], { cwd: dir });
  assert.equal(local.code, 0, local.stderr);
  const before = proxy.stats.failed;
  const r = await run(
    ['dedup', `s3://${BUCKET}/in/*.jsonl.zst`, '--id-field', 'id', '--output', 'dedup', '--out-dir', `s3://${BUCKET}/clean/`, '-v'],
    proxy.endpoint,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.ok(proxy.stats.failed > before, 'the proxy failed some requests');
  assert.match(r.stderr, /^docs +800 from s3:\/\/corpus\/in\/\*\.jsonl\.zst /m, 'the summary names the S3 input');
  assert.match(r.stderr, /s3: (GET|HEAD|LIST|PUT)[^\n]* failed \((503|429)\), retry 1 of 7/, 'retries are said at -v');
  const got = await getObjects(server, BUCKET, 'clean/');
  const want = fs.readdirSync(path.join(dir, 'clean-local'));
  assert.deepEqual([...got.keys()].sort(), want.sort());
  for (const name of want) assert.ok(got.get(name)!.equals(fs.readFileSync(path.join(dir, 'clean-local', name))), `${name} is the same bytes`);
});

test(
  'multipart upload and ranged GETs of a 20 MiB object through the faults: the same bytes; a multipart upload that cannot complete leaves no object',
  opts,
  async () => {
    Object.assign(process.env, S3_ENV);
    const data = randomBytes(20 << 20);
    const src = path.join(dir, 'big.bin');
    fs.writeFileSync(src, data);
    setS3Endpoint(proxy.endpoint);
    const retried = s3Requests.retries;
    await s3Upload(src, data.length, `s3://${BUCKET}/big/big.bin`);
    await s3Download(`s3://${BUCKET}/big/big.bin`, data.length, path.join(dir, 'big.copy'));
    assert.ok(fs.readFileSync(path.join(dir, 'big.copy')).equals(data));
    assert.ok(s3Requests.retries > retried, 'some requests were retried');
    // A store that refuses to complete any multipart upload (the POST ?uploadId=…): the upload fails
    // after its retries, and no object is visible.
    const refusing = await startFaultProxy(server.port, (req) => (req.method === 'POST' && /uploadId=/.test(req.url ?? '') ? 500 : undefined));
    try {
      // Two attempts are enough to show the retry and keep the test short.
      process.env.NEARDUP_S3_ATTEMPTS = '2';
      setS3Endpoint(refusing.endpoint);
      await assert.rejects(s3Upload(src, data.length, `s3://${BUCKET}/big/never.bin`), /s3:\/\/corpus\/big\/never\.bin: .*HTTP 500/);
      assert.equal((await getObjects(server, BUCKET, 'big/never.bin')).size, 0);
    } finally {
      delete process.env.NEARDUP_S3_ATTEMPTS;
      setS3Endpoint(undefined);
      await refusing.stop();
    }
  },
);

// #48: `--removed s3://bucket/key` is an output (uploaded after the output, as a job's is), never
// read as an input, and never a local path: a local directory named `s3:` in the working directory
// stays empty. Every audit format, `--removed X` and `--removed=X`, dedup and job dedup --local; a
// failed run uploads neither; --out and --removed naming one object is refused.
// #48: a missing bucket and a missing key are told apart in plain words, for reads (an input, a
// glob, a small GET) and writes alike; drawn bucket and key names, each missing one way or the other.
test('an endpoint whose host does not exist is named at once (exit 2, no retries), not retried like a dropped connection', async () => {
  // `.invalid` never resolves (RFC 6761): ENOTFOUND, which no retry changes.
  const r = await neardupAsync(['dedup', 's3://b/in.jsonl', '--s3-endpoint', 'http://no-such-host.invalid:9000', '-v'], process.cwd(), S3_ENV);
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /^neardup: s3:\/\/b\/in\.jsonl: the S3 endpoint's host "no-such-host\.invalid" does not exist \(DNS: ENOTFOUND\); check --s3-endpoint or AWS_ENDPOINT_URL$/m,
  );
  assert.doesNotMatch(r.stderr, /retry/);
});

test('a missing bucket and a missing key are named as such, never "no such object (no such bucket)"', opts, async () => {
  Object.assign(process.env, S3_ENV);
  setS3Endpoint(server.endpoint);
  try {
    const segment = fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,11}$/).filter((x) => !/^[._]/.test(x) && !x.includes('..'));
    await fc.assert(
      fc.asyncProperty(
        fc.boolean(),
        fc.stringMatching(/^[a-z][a-z0-9-]{2,20}$/),
        fc.array(segment, { minLength: 1, maxLength: 3 }),
        async (noBucket, b, parts) => {
          const bucket = noBucket ? `nb-${b}` : BUCKET;
          const key = `missing/${parts.join('/')}`;
          const url = `s3://${bucket}/${key}`;
          const noBucketMessage = `${url}: there is no bucket "${bucket}"`;
          if (noBucket) {
            await assert.rejects(listS3Input(url), (e: Error) => e.message === noBucketMessage);
            await assert.rejects(
              listS3Input(`s3://${bucket}/${parts[0]}/*.jsonl`),
              (e: Error) => e.message === `s3://${bucket}/${parts[0]}/*.jsonl: there is no bucket "${bucket}"`,
            );
            await assert.rejects(s3Get(url), (e: Error) => e.message === noBucketMessage);
            await assert.rejects(s3Put(url, 'x'), (e: Error) => e.message === noBucketMessage);
          } else {
            await assert.rejects(listS3Input(url), (e: Error) => e.message === `${url}: the bucket "${bucket}" has no key "${key}" and no key under "${key}/"`);
            await assert.rejects(listS3Input(`${url}/`), (e: Error) => e.message === `${url}/: the bucket "${bucket}" has no key under "${key}/"`);
            // A key that is simply not there is no error for the reads that ask whether it is.
            assert.equal(await s3Get(url), undefined);
            assert.equal(await s3Size(url), undefined);
          }
        },
      ),
      { numRuns: 25 },
    );
    const r = await run(['dedup', 's3://no-such-bucket-here/in/', '-q'], server.endpoint);
    assert.deepEqual([r.code, r.stderr], [2, 'neardup: s3://no-such-bucket-here/in/: there is no bucket "no-such-bucket-here"\n']);
    const out = await run(['dedup', `s3://${BUCKET}/all.jsonl`, '--id-field', 'id', '--out', 's3://no-such-bucket-here/kept.jsonl', '-q'], server.endpoint);
    assert.equal(out.code, 2, out.stderr);
    assert.match(out.stderr, /^neardup: s3:\/\/no-such-bucket-here\/kept\.jsonl: there is no bucket "no-such-bucket-here"$/m);
  } finally {
    setS3Endpoint(undefined);
  }
});

test(
  "a small object that does not parse is read again: a torn body (as s3rver serves mid-write) gives way to the whole one; one that stays torn is the parser's error",
  opts,
  async () => {
    Object.assign(process.env, S3_ENV);
    setS3Endpoint(server.endpoint);
    try {
      const url = `s3://${BUCKET}/torn/_SUCCESS.json`;
      const whole = JSON.stringify({ attempt: '0123456789abcdef', marker: { ok: true } });
      await s3Put(url, whole.slice(0, 17));
      let reads = 0;
      let tornRead!: () => void;
      const firstRead = new Promise<void>((r) => (tornRead = r));
      const parse = (b: Buffer): unknown => {
        if (++reads === 1) tornRead();
        return JSON.parse(b.toString('utf8'));
      };
      // The writer starts once the torn body has been read, and finishes while the reader waits
      // between reads (3.2 s of them). A writer started on a 20 ms timer sometimes finished first
      // on a loaded machine, and the reader's first read was then already whole.
      const [got] = await Promise.all([s3GetParsed(url, parse), firstRead.then(() => s3Put(url, whole))]);
      assert.deepEqual(got, JSON.parse(whole));
      assert.ok(reads >= 2, 'the torn body was read, then the whole one');
      await s3Put(url, '');
      reads = 0;
      await assert.rejects(s3GetParsed(url, parse, 3), SyntaxError);
      assert.equal(reads, 3);
      assert.equal(await s3GetParsed(`s3://${BUCKET}/torn/none.json`, parse), undefined);
    } finally {
      setS3Endpoint(undefined);
    }
  },
);

test('writers racing on one key: plain PUTs on s3rver leave torn objects; s3PutSettled always leaves one whole body', opts, async () => {
  Object.assign(process.env, S3_ENV);
  setS3Endpoint(server.endpoint);
  try {
    // Bodies of different lengths: the longer one's tail is what a torn object keeps.
    const bodies = [JSON.stringify({ w: 'a'.repeat(60) }), JSON.stringify({ w: 'b' }), JSON.stringify({ w: 'c'.repeat(30) })];
    const parses = (b: Buffer | undefined): boolean => {
      try {
        JSON.parse(b!.toString('utf8'));
        return true;
      } catch {
        return false;
      }
    };
    let torn = 0;
    for (let i = 0; i < 200 && torn === 0; i++) {
      const url = `s3://${BUCKET}/race/plain-${i}`;
      await Promise.all(bodies.map((b) => s3Put(url, b)));
      if (!parses(await s3Get(url))) torn++;
    }
    assert.ok(torn > 0, 'the store tears racing writes (else this test shows nothing)');
    for (let i = 0; i < 30; i++) {
      const url = `s3://${BUCKET}/race/settled-${i}`;
      const got = await Promise.all(bodies.map((b) => s3PutSettled(url, b, (x) => JSON.parse(x.toString('utf8')) as unknown, { ifNoneMatch: true })));
      const final = (await s3Get(url))!.toString('utf8');
      assert.ok(bodies.includes(final), `iteration ${i}: the object is one writer's whole body, not ${final}`);
      for (const g of got) assert.equal(g.written, true, 's3rver ignores the condition');
    }
  } finally {
    setS3Endpoint(undefined);
  }
});
