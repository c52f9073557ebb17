/**
 * s3:// names on the command line (src/cli/s3paths.ts, src/io/s3/staging.ts) end to end against a
 * real S3-compatible server process (s3rver), part of the time through a proxy that fails every
 * third request with 503 or 429: prefixes, globs and several inputs, job and --against inputs,
 * snapshots and reports, --removed in every format, and the errors; the results are the same bytes
 * as the same run on local files. JavaScript over the client of ./s3.test.ts, so it runs once, on
 * Node 20 (scripts/test-tier.mjs).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { neardup } from '../../cliUtil.js';
import { neardupAsync } from '../../helpers/procs.js';
import { REQUIRE_ALL } from '../../helpers/needs.js';
import { getObjects, s3rverMissing, useS3Corpus, S3_ENV, type FaultProxy, type S3Server } from '../../helpers/s3.js';

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

test('a prefix as input, clusters to an s3:// --out, and a single object, equal the local runs', opts, async () => {
  const local = neardup(['dedup', 'in', '--id-field', 'id', '--output', 'clusters', '-q'], { cwd: dir });
  assert.equal(local.code, 0, local.stderr);
  const r = await run(
    ['dedup', `s3://${BUCKET}/in`, '--id-field', 'id', '--output', 'clusters', '--out', `s3://${BUCKET}/out/clusters.jsonl`, '-q'],
    proxy.endpoint,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal((await getObjects(server, BUCKET, 'out/clusters.jsonl')).get('')!.toString(), local.stdout);
  const one = neardup(['dedup', 'all.jsonl', '--id-field', 'id', '-q'], { cwd: dir });
  const s3one = await run(['dedup', `s3://${BUCKET}/all.jsonl`, '--id-field', 'id', '-q'], server.endpoint);
  assert.equal(s3one.code, 0, s3one.stderr);
  assert.equal(s3one.stdout, one.stdout);
});

test(
  "several s3:// inputs (objects and a glob) are one corpus: dedup and job dedup --local write the local run's files under the same names",
  opts,
  async () => {
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
  },
);

test('job dedup --local (through the faults) and --against take s3:// names too', opts, async () => {
  const local = neardup(['job', 'dedup', 'in', '--local', '--work-dir', 'w1', '--id-field', 'id', '--output', 'dedup', '--out-dir', 'job-local', '-q'], {
    cwd: dir,
  });
  assert.equal(local.code, 0, local.stderr);
  const r = await run([
    'job',
    'dedup',
    `s3://${BUCKET}/in/`,
    '--local',
    '--work-dir',
    'w2',
    '--id-field',
    'id',
    '--output',
    'dedup',
    '--out-dir',
    `s3://${BUCKET}/job-out/`,
    '-q',
  ], proxy.endpoint);
  assert.equal(r.code, 0, r.stderr);
  const got = await getObjects(server, BUCKET, 'job-out/');
  assert.deepEqual([...got.keys()].sort(), fs.readdirSync(path.join(dir, 'job-local')).sort());
  for (const name of fs.readdirSync(path.join(dir, 'job-local'))) assert.ok(got.get(name)?.equals(fs.readFileSync(path.join(dir, 'job-local', name))), name);
  const against = neardup(['dedup', 'in/part-0001.jsonl.zst', '--against', 'in/part-0000.jsonl.zst', '--id-field', 'id', '-q'], { cwd: dir });
  const s3against = await run([
    'dedup',
    `s3://${BUCKET}/in/part-0001.jsonl.zst`,
    '--against',
    `s3://${BUCKET}/in/part-0000.jsonl.zst`,
    '--id-field',
    'id',
    '-q',
  ], server.endpoint);
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

test('what the CLI prints names the s3:// names, never their local stand-ins: summaries, -v, --json, the index commands', opts, async () => {
  const spool = /neardup-s3-/;
  const r = await run(['dedup', `s3://${BUCKET}/all.jsonl`, '--id-field', 'id', '-v', '--out', `s3://${BUCKET}/shown/pairs.tsv`], server.endpoint);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /s3:\/\/corpus\/all\.jsonl/);
  assert.match(r.stderr, /s3:\/\/corpus\/shown\/pairs\.tsv/);
  assert.doesNotMatch(r.stderr, spool);
  const j = await run(['dedup', `s3://${BUCKET}/in`, '--id-field', 'id', '--json', '--out', `s3://${BUCKET}/shown/pairs2.tsv`], server.endpoint);
  assert.equal(j.code, 0, j.stderr);
  assert.match(j.stdout, /"s3:\/\/corpus\/in/);
  assert.doesNotMatch(j.stdout + j.stderr, spool);
  const add = neardup(['index', 'add', 'all.jsonl', '--store', 'sqlite:shown.db', '--id-field', 'id', '-q'], { cwd: dir });
  assert.equal(add.code, 0, add.stderr);
  const snap = await run(['index', 'snapshot', '--store', 'sqlite:shown.db', '--out', `s3://${BUCKET}/shown/a.snapshot`], server.endpoint);
  assert.equal(snap.code, 0, snap.stderr);
  assert.equal(snap.stdout, `800 documents written to s3://${BUCKET}/shown/a.snapshot\n`);
});

test(
  'missing objects, s3:// shards of a job on a local work dir and a failed run are clear errors (exit 2), and a failed run writes nothing',
  opts,
  async () => {
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
  },
);

test('dedup --against s3://… --removed: reference_source names the s3:// object, never the local spool (an object, a prefix, a glob)', opts, async () => {
  const objects = new Set([`s3://${BUCKET}/all.jsonl`, ...fs.readdirSync(path.join(dir, 'in')).map((f) => `s3://${BUCKET}/in/${f}`)]);
  for (const ref of [`s3://${BUCKET}/all.jsonl`, `s3://${BUCKET}/in/`, `s3://${BUCKET}/in/*.jsonl.zst`]) {
    const removed = path.join(dir, `removed-${randomBytes(4).toString('hex')}.tsv`);
    const r = await run([
      'dedup',
      'all.jsonl',
      '--id-field',
      'id',
      '--against',
      ref,
      '--output',
      'dedup',
      '--out',
      path.join(dir, 'kept.jsonl'),
      '--removed',
      removed,
      '-q',
    ], server.endpoint);
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

test('--removed s3://… is an output uploaded with the output, in every format and spelling', opts, async () => {
  const cwd = path.join(dir, 'rm-cwd');
  fs.mkdirSync(path.join(cwd, 's3:', BUCKET), { recursive: true });
  fs.copyFileSync(path.join(dir, 'all.jsonl'), path.join(cwd, 'all.jsonl'));
  const s3run = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    neardupAsync([...args, '--s3-endpoint', server.endpoint], cwd, S3_ENV);
  let k = 0;
  for (const audit of ['removed.tsv', 'removed.jsonl.gz', 'removed.parquet']) {
    const local = neardup(
      ['dedup', 'all.jsonl', '--id-field', 'id', '--output', 'dedup', '--out', `kept-${audit}.jsonl`, '--removed', `local-${audit}`, '-q'],
      { cwd },
    );
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
        assert.ok(
          got?.equals(fs.readFileSync(path.join(cwd, `local-${audit}`))),
          `${command.join(' ')} ${spelling} ${audit}: the audit object is the local run's bytes`,
        );
        const kept = job
          ? (await getObjects(server, BUCKET, `rm/${k}/kept/`)).get('all.jsonl')
          : (await getObjects(server, BUCKET, `rm/${k}/kept.jsonl`)).get('');
        assert.ok(
          kept?.equals(fs.readFileSync(path.join(cwd, `kept-${audit}.jsonl`))),
          `${command.join(' ')} ${spelling} ${audit}: the output is the local run's`,
        );
        fs.rmSync(path.join(cwd, 'w-rm'), { recursive: true, force: true });
      }
    }
  }
  assert.deepEqual(fs.readdirSync(path.join(cwd, 's3:', BUCKET)), [], 'nothing written under a local s3: directory');
  const bad = await s3run([
    'dedup',
    'all.jsonl',
    '--id-field',
    'nope',
    '--output',
    'dedup',
    '--out',
    `s3://${BUCKET}/rm-bad/kept.jsonl`,
    '--removed',
    `s3://${BUCKET}/rm-bad/removed.tsv`,
    '-q',
  ]);
  assert.equal(bad.code, 2, bad.stderr);
  assert.equal((await getObjects(server, BUCKET, 'rm-bad/')).size, 0, 'a failed run uploads neither');
  const same = await s3run(['dedup', 'all.jsonl', '--output', 'dedup', '--out', `s3://${BUCKET}/rm-same.tsv`, '--removed', `s3://${BUCKET}/rm-same.tsv`, '-q']);
  assert.equal(same.code, 2, same.stderr);
  assert.match(same.stderr, /--removed s3:\/\/corpus\/rm-same\.tsv is also --out/);
});

// The hostile sweep found `job plan --work-dir LOCAL --out-dir s3://…` exiting 0 with a plan that
// names the local stand-in of the prefix (a temp directory removed when the command ends): the
// stages then wrote the shards there and nothing reached the bucket. Every command whose outputs
// other processes write later is refused naming the option, and leaves no plan.
test('a job with a local work dir: an s3:// output written later by other processes is refused, naming it, and no plan is left', opts, async () => {
  const cases: [string, string[]][] = [
    ['job plan --out-dir', ['job', 'plan', 'in', '--output', 'dedup', '--out-dir', `s3://${BUCKET}/later/`]],
    ['job plan --removed', ['job', 'plan', 'in', '--output', 'dedup', '--out-dir', 'later-local', '--removed', `s3://${BUCKET}/later/removed.tsv`]],
    ['job spans --plan-only --out-dir', ['job', 'spans', 'in', '--plan-only', '--out-dir', `s3://${BUCKET}/later/`]],
    ['job dedup --redis --out-dir', ['job', 'dedup', 'in', '--redis', 'redis://127.0.0.1:1', '--output', 'dedup', '--out-dir', `s3://${BUCKET}/later/`]],
  ];
  for (const [name, args] of cases) {
    const work = `w-later-${randomBytes(3).toString('hex')}`;
    const r = await run([...args, '--id-field', 'id', '--work-dir', work, '-q'], server.endpoint);
    assert.equal(r.code, 2, `${name}: ${r.stderr}`);
    assert.match(
      r.stderr,
      /(--out-dir|--removed) s3:\/\/corpus\/later\/.*in other processes, which cannot upload this machine's copy; give the job a work dir in S3/,
      name,
    );
    assert.ok(!fs.existsSync(path.join(dir, work)), `${name}: no plan left`);
  }
  assert.equal((await getObjects(server, BUCKET, 'later/')).size, 0);
});
