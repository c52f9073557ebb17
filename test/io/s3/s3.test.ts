/**
 * s3:// inputs and outputs end to end against a real S3-compatible server process (s3rver), part of
 * the time through a proxy that fails every third request with 503 or 429: the results are the same
 * bytes as the same run on local files.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { neardup, tmpDir } from '../../cliUtil.js';
import { plantedDocs, writeShards, jsonl } from '../../helpers/shards.js';
import { neardupAsync } from '../../helpers/procs.js';
import { REQUIRE_ALL } from '../../helpers/needs.js';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { s3Download, s3Get, s3GetParsed, s3Put, s3PutSettled, s3Requests, s3Size, s3Upload, setS3Endpoint } from '../../../src/io/s3/client.js';
import { listS3Input } from '../../../src/io/s3/staging.js';
import { getObjects, putObject, s3rverMissing, startFaultProxy, startS3rver, S3_ENV, type FaultProxy, type S3Server } from '../../helpers/s3.js';

const missing = REQUIRE_ALL ? undefined : s3rverMissing();
const opts = missing ? { skip: missing } : {};
const BUCKET = 'corpus';
let server: S3Server;
let proxy: FaultProxy;
let dir: string;

before(async () => {
  if (missing) return;
  server = await startS3rver(BUCKET);
  proxy = await startFaultProxy(server.port);
  dir = tmpDir();
  const docs = plantedDocs(800, 0.3, 33);
  const files = await writeShards(path.join(dir, 'in'), docs, 4, ['jsonl.zst']);
  for (const f of files) await putObject(server, BUCKET, `in/${path.basename(f)}`, fs.readFileSync(f));
  // Hidden by the Hadoop convention, as in a local directory of shards.
  await putObject(server, BUCKET, 'in/_SUCCESS', '');
  fs.writeFileSync(path.join(dir, 'all.jsonl'), jsonl(docs));
  await putObject(server, BUCKET, 'all.jsonl', fs.readFileSync(path.join(dir, 'all.jsonl')));
});

after(async () => {
  if (missing) return;
  await proxy.stop();
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** neardup with the server's credentials, through the endpoint given (a child process: the proxy runs in this one). */
function run(args: string[], endpoint: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return neardupAsync([...args, '--s3-endpoint', endpoint], dir, S3_ENV);
}

test('dedup of s3:// shards to an s3:// --out-dir equals the local run byte for byte, through injected 503s and 429s', opts, async () => {
  const local = neardup(['dedup', 'in/*.jsonl.zst', '--id-field', 'id', '--output', 'dedup', '--out-dir', 'clean-local/', '-q'], { cwd: dir });
  assert.equal(local.code, 0, local.stderr);
  const before = proxy.stats.failed;
  const r = await run(['dedup', `s3://${BUCKET}/in/*.jsonl.zst`, '--id-field', 'id', '--output', 'dedup', '--out-dir', `s3://${BUCKET}/clean/`, '-v'], proxy.endpoint);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(proxy.stats.failed > before, 'the proxy failed some requests');
  assert.match(r.stderr, /^docs +800 from s3:\/\/corpus\/in\/\*\.jsonl\.zst /m, 'the summary names the S3 input');
  assert.match(r.stderr, /s3: (GET|HEAD|LIST|PUT)[^\n]* failed \((503|429)\), retry 1 of 7/, 'retries are said at -v');
  const got = await getObjects(server, BUCKET, 'clean/');
  const want = fs.readdirSync(path.join(dir, 'clean-local'));
  assert.deepEqual([...got.keys()].sort(), want.sort());
  for (const name of want) assert.ok(got.get(name)!.equals(fs.readFileSync(path.join(dir, 'clean-local', name))), `${name} is the same bytes`);
});

test('a prefix as input, clusters to an s3:// --out, and a single object, equal the local runs', opts, async () => {
  const local = neardup(['dedup', 'in', '--id-field', 'id', '--output', 'clusters', '-q'], { cwd: dir });
  assert.equal(local.code, 0, local.stderr);
  const r = await run(['dedup', `s3://${BUCKET}/in`, '--id-field', 'id', '--output', 'clusters', '--out', `s3://${BUCKET}/out/clusters.jsonl`, '-q'], proxy.endpoint);
  assert.equal(r.code, 0, r.stderr);
  assert.equal((await getObjects(server, BUCKET, 'out/clusters.jsonl')).get('')!.toString(), local.stdout);
  const one = neardup(['dedup', 'all.jsonl', '--id-field', 'id', '-q'], { cwd: dir });
  const s3one = await run(['dedup', `s3://${BUCKET}/all.jsonl`, '--id-field', 'id', '-q'], server.endpoint);
  assert.equal(s3one.code, 0, s3one.stderr);
  assert.equal(s3one.stdout, one.stdout);
});

test('several s3:// inputs (objects and a glob) are one corpus: dedup and job dedup --local write the local run\'s files under the same names', opts, async () => {
  const names = ['in/part-0000.jsonl.zst', 'in/part-0001*', 'in/part-0002.jsonl.zst', 'in/part-0003.jsonl.zst'];
  const args = ['--id-field', 'id', '--keep', 'source', '--output', 'dedup', '-q'];
  const local = neardup(['dedup', ...names, ...args, '--out-dir', 'multi-local/'], { cwd: dir });
  assert.equal(local.code, 0, local.stderr);
  const want = fs.readdirSync(path.join(dir, 'multi-local')).sort();
  assert.deepEqual(want, ['_SUCCESS', 'part-0000.jsonl.zst', 'part-0001.jsonl.zst', 'part-0002.jsonl.zst', 'part-0003.jsonl.zst']);
  for (const [cmd, prefix] of [[['dedup'], 'multi/'], [['job', 'dedup', '--local', '--work-dir', 'w-multi'], 'multi-job/']] as const) {
    const r = await run([...cmd, ...names.map((n) => `s3://${BUCKET}/${n}`), ...args, '--out-dir', `s3://${BUCKET}/${prefix}`], server.endpoint);
    assert.equal(r.code, 0, r.stderr);
    const got = await getObjects(server, BUCKET, prefix);
    assert.deepEqual([...got.keys()].sort(), want, cmd.join(' '));
    for (const name of want) assert.ok(got.get(name)!.equals(fs.readFileSync(path.join(dir, 'multi-local', name))), `${cmd.join(' ')}: ${name}`);
  }
});

test('job dedup --local (through the faults) and --against take s3:// names too', opts, async () => {
  const local = neardup(['job', 'dedup', 'in', '--local', '--work-dir', 'w1', '--id-field', 'id', '--output', 'dedup', '--out-dir', 'job-local', '-q'], { cwd: dir });
  assert.equal(local.code, 0, local.stderr);
  const r = await run(['job', 'dedup', `s3://${BUCKET}/in/`, '--local', '--work-dir', 'w2', '--id-field', 'id', '--output', 'dedup', '--out-dir', `s3://${BUCKET}/job-out/`, '-q'], proxy.endpoint);
  assert.equal(r.code, 0, r.stderr);
  const got = await getObjects(server, BUCKET, 'job-out/');
  assert.deepEqual([...got.keys()].sort(), fs.readdirSync(path.join(dir, 'job-local')).sort());
  for (const name of fs.readdirSync(path.join(dir, 'job-local'))) assert.ok(got.get(name)?.equals(fs.readFileSync(path.join(dir, 'job-local', name))), name);
  const against = neardup(['dedup', 'in/part-0001.jsonl.zst', '--against', 'in/part-0000.jsonl.zst', '--id-field', 'id', '-q'], { cwd: dir });
  const s3against = await run(['dedup', `s3://${BUCKET}/in/part-0001.jsonl.zst`, '--against', `s3://${BUCKET}/in/part-0000.jsonl.zst`, '--id-field', 'id', '-q'], server.endpoint);
  assert.equal(s3against.code, 0, s3against.stderr);
  assert.equal(s3against.stdout, against.stdout);
});

test('index snapshot to s3:// and restore from it; report --out s3://', opts, async () => {
  const add = neardup(['index', 'add', 'all.jsonl', '--store', 'sqlite:a.db', '--id-field', 'id', '-q'], { cwd: dir });
  assert.equal(add.code, 0, add.stderr);
  const snap = await run(['index', 'snapshot', '--store', 'sqlite:a.db', '--out', `s3://${BUCKET}/snap/a.snapshot`], server.endpoint);
  assert.equal(snap.code, 0, snap.stderr);
  const restore = await run(['index', 'restore', `s3://${BUCKET}/snap/a.snapshot`, '--store', 'sqlite:b.db'], server.endpoint);
  assert.equal(restore.code, 0, restore.stderr);
  const checked = neardup(['index', 'check', '--store', 'sqlite:b.db', '--json'], { cwd: dir });
  assert.equal(checked.code, 0, checked.stderr);
  assert.equal(JSON.parse(checked.stdout).documents, 800);
  const rep = await run(['report', `s3://${BUCKET}/all.jsonl`, '--id-field', 'id', '--out', `s3://${BUCKET}/report.html`, '-q'], server.endpoint);
  assert.equal(rep.code, 0, rep.stderr);
  assert.match((await getObjects(server, BUCKET, 'report.html')).get('')!.toString(), /<html/i);
});

test('missing objects, s3:// shards of a job on a local work dir and a failed run are clear errors (exit 2), and a failed run writes nothing', opts, async () => {
  const none = await run(['dedup', `s3://${BUCKET}/nothing.jsonl`, '-q'], server.endpoint);
  assert.equal(none.code, 2);
  assert.equal(none.stderr, 'neardup: s3://corpus/nothing.jsonl: the bucket "corpus" has no key "nothing.jsonl" and no key under "nothing.jsonl/"\n');
  const glob = await run(['dedup', `s3://${BUCKET}/in/*.tsv`, '-q'], server.endpoint);
  assert.equal(glob.code, 2);
  assert.match(glob.stderr, /no object matches s3:\/\/corpus\/in\/\*\.tsv/);
  const posix = await run(['job', 'plan', `s3://${BUCKET}/in/`, '--work-dir', 'w4'], server.endpoint);
  assert.equal(posix.code, 2);
  assert.match(posix.stderr, /"plan" hands its inputs to other processes, .*give the job a work dir in S3 too \(--work-dir s3:\/\/bucket\/prefix\)/);
  const remote = await run(['job', 'dedup', `s3://${BUCKET}/in/`, '--redis', 'redis://127.0.0.1:1', '--work-dir', 'w3'], server.endpoint);
  assert.equal(remote.code, 2);
  assert.match(remote.stderr, /"job dedup --redis" hands its inputs to other processes/);
  const bad = await run(['dedup', `s3://${BUCKET}/all.jsonl`, '--id-field', 'nope', '--out', `s3://${BUCKET}/never.tsv`, '-q'], server.endpoint);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /^neardup: s3:\/\/corpus\/all\.jsonl:1: no id field "nope"/m, 'the error names the object, not its local copy');
  assert.equal((await getObjects(server, BUCKET, 'never.tsv')).size, 0, 'no object for a failed run');
  const denied = await neardupAsync(['dedup', `s3://${BUCKET}/all.jsonl`, '--s3-endpoint', server.endpoint], dir, { ...S3_ENV, AWS_ACCESS_KEY_ID: 'WRONG' });
  assert.equal(denied.code, 2, denied.stderr);
  assert.match(denied.stderr, /^neardup: s3:\/\/corpus\/all\.jsonl: access denied \(credentials come from/);
  const ep = await neardupAsync(['dedup', `s3://${BUCKET}/all.jsonl`, '--s3-endpoint', 'ftp://x'], dir, S3_ENV);
  assert.equal(ep.code, 2);
  assert.match(ep.stderr, /--s3-endpoint ftp:\/\/x: expected http/);
});

test('multipart upload and ranged GETs of a 20 MiB object through the faults: the same bytes; a multipart upload that cannot complete leaves no object', opts, async () => {
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
});

test('dedup --against s3://… --removed: reference_source names the s3:// object, never the local spool (an object, a prefix, a glob)', opts, async () => {
  const objects = new Set([`s3://${BUCKET}/all.jsonl`, ...fs.readdirSync(path.join(dir, 'in')).map((f) => `s3://${BUCKET}/in/${f}`)]);
  for (const ref of [`s3://${BUCKET}/all.jsonl`, `s3://${BUCKET}/in/`, `s3://${BUCKET}/in/*.jsonl.zst`]) {
    const removed = path.join(dir, `removed-${randomBytes(4).toString('hex')}.tsv`);
    const r = await run(['dedup', 'all.jsonl', '--id-field', 'id', '--against', ref, '--output', 'dedup', '--out', path.join(dir, 'kept.jsonl'), '--removed', removed, '-q'], server.endpoint);
    assert.equal(r.code, 0, r.stderr);
    const [header, ...rows] = fs.readFileSync(removed, 'utf8').trim().split('\n');
    const col = header!.split('\t').indexOf('reference_source');
    assert.ok(col >= 0, header);
    assert.ok(rows.length > 0, 'documents dropped');
    for (const row of rows) {
      const source = row.split('\t')[col]!;
      assert.ok(objects.has(source), `${ref}: reference_source ${source}`);
      if (!ref.includes('/in/')) assert.equal(source, ref);
    }
  }
});

// #48: `--removed s3://bucket/key` is an output (uploaded after the output, as a job's is), never
// read as an input, and never a local path: a local directory named `s3:` in the working directory
// stays empty. Every audit format, `--removed X` and `--removed=X`, dedup and job dedup --local; a
// failed run uploads neither; --out and --removed naming one object is refused.
test('--removed s3://… is an output uploaded with the output, in every format and spelling', opts, async () => {
  const cwd = path.join(dir, 'rm-cwd');
  fs.mkdirSync(path.join(cwd, 's3:', BUCKET), { recursive: true });
  fs.copyFileSync(path.join(dir, 'all.jsonl'), path.join(cwd, 'all.jsonl'));
  const s3run = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => neardupAsync([...args, '--s3-endpoint', server.endpoint], cwd, S3_ENV);
  let k = 0;
  for (const audit of ['removed.tsv', 'removed.jsonl.gz', 'removed.parquet']) {
    const local = neardup(['dedup', 'all.jsonl', '--id-field', 'id', '--output', 'dedup', '--out', `kept-${audit}.jsonl`, '--removed', `local-${audit}`, '-q'], { cwd });
    assert.equal(local.code, 0, local.stderr);
    for (const command of [['dedup'], ['job', 'dedup', '--local', '--work-dir', 'w-rm']]) {
      for (const spelling of ['space', 'equals']) {
        const key = `rm/${k++}/${audit}`;
        const url = `s3://${BUCKET}/${key}`;
        const removed = spelling === 'space' ? ['--removed', url] : [`--removed=${url}`];
        const job = command[0] === 'job';
        const out = job ? ['--out-dir', `s3://${BUCKET}/rm/${k}/kept/`] : ['--out', `s3://${BUCKET}/rm/${k}/kept.jsonl`];
        const r = await s3run([...command, 'all.jsonl', '--id-field', 'id', '--output', 'dedup', ...out, ...removed, '-q']);
        assert.equal(r.code, 0, `${command.join(' ')} ${spelling} ${audit}: ${r.stderr}`);
        const got = (await getObjects(server, BUCKET, key)).get('');
        assert.ok(got?.equals(fs.readFileSync(path.join(cwd, `local-${audit}`))), `${command.join(' ')} ${spelling} ${audit}: the audit object is the local run's bytes`);
        const kept = job ? (await getObjects(server, BUCKET, `rm/${k}/kept/`)).get('all.jsonl') : (await getObjects(server, BUCKET, `rm/${k}/kept.jsonl`)).get('');
        assert.ok(kept?.equals(fs.readFileSync(path.join(cwd, `kept-${audit}.jsonl`))), `${command.join(' ')} ${spelling} ${audit}: the output is the local run's`);
        fs.rmSync(path.join(cwd, 'w-rm'), { recursive: true, force: true });
      }
    }
  }
  assert.deepEqual(fs.readdirSync(path.join(cwd, 's3:', BUCKET)), [], 'nothing written under a local s3: directory');
  const bad = await s3run(['dedup', 'all.jsonl', '--id-field', 'nope', '--output', 'dedup', '--out', `s3://${BUCKET}/rm-bad/kept.jsonl`, '--removed', `s3://${BUCKET}/rm-bad/removed.tsv`, '-q']);
  assert.equal(bad.code, 2, bad.stderr);
  assert.equal((await getObjects(server, BUCKET, 'rm-bad/')).size, 0, 'a failed run uploads neither');
  const same = await s3run(['dedup', 'all.jsonl', '--output', 'dedup', '--out', `s3://${BUCKET}/rm-same.tsv`, '--removed', `s3://${BUCKET}/rm-same.tsv`, '-q']);
  assert.equal(same.code, 2, same.stderr);
  assert.match(same.stderr, /--removed s3:\/\/corpus\/rm-same\.tsv is also --out/);
});

// #48: a missing bucket and a missing key are told apart in plain words, for reads (an input, a
// glob, a small GET) and writes alike; drawn bucket and key names, each missing one way or the other.
test('a missing bucket and a missing key are named as such, never "no such object (no such bucket)"', opts, async () => {
  Object.assign(process.env, S3_ENV);
  setS3Endpoint(server.endpoint);
  try {
    const segment = fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,11}$/).filter((x) => !/^[._]/.test(x) && !x.includes('..'));
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.stringMatching(/^[a-z][a-z0-9-]{2,20}$/), fc.array(segment, { minLength: 1, maxLength: 3 }), async (noBucket, b, parts) => {
        const bucket = noBucket ? `nb-${b}` : BUCKET;
        const key = `missing/${parts.join('/')}`;
        const url = `s3://${bucket}/${key}`;
        const noBucketMessage = `${url}: there is no bucket "${bucket}"`;
        if (noBucket) {
          await assert.rejects(listS3Input(url), (e: Error) => e.message === noBucketMessage);
          await assert.rejects(listS3Input(`s3://${bucket}/${parts[0]}/*.jsonl`), (e: Error) => e.message === `s3://${bucket}/${parts[0]}/*.jsonl: there is no bucket "${bucket}"`);
          await assert.rejects(s3Get(url), (e: Error) => e.message === noBucketMessage);
          await assert.rejects(s3Put(url, 'x'), (e: Error) => e.message === noBucketMessage);
        } else {
          await assert.rejects(listS3Input(url), (e: Error) => e.message === `${url}: the bucket "${bucket}" has no key "${key}" and no key under "${key}/"`);
          await assert.rejects(listS3Input(`${url}/`), (e: Error) => e.message === `${url}/: the bucket "${bucket}" has no key under "${key}/"`);
          // A key that is simply not there is no error for the reads that ask whether it is.
          assert.equal(await s3Get(url), undefined);
          assert.equal(await s3Size(url), undefined);
        }
      }),
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

test('a small object that does not parse is read again: a torn body (as s3rver serves mid-write) gives way to the whole one; one that stays torn is the parser\'s error', opts, async () => {
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
});

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
