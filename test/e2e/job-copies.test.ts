/**
 * Exact copies in a sharded job (#48): join folds them as `neardup dedup` does, so 3,000 copies of
 * one page cost one document. At the default --max-pairs (50M candidate rows a join partition) a job
 * refused such a group, unfolded 16 bands × 3,000·2,999/2 rows, where dedup answered. Now every
 * output, the audit and the summary's counts are dedup's, and the job's candidate rows stay few.
 * The runs whose --json summary is read (on standard output) are processes; the others run here (cliIn).
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { neardup, tmpDir } from '../cliUtil.js';
import { plantedDocs } from '../helpers/shards.js';
import { cliIn } from '../helpers/inProcessCli.js';

/** JSONL records: ordinary documents with near duplicates, `big` copies of one page spread among them, and small copy groups whose scores differ. */
function corpus(big: number): string[] {
  const docs = plantedDocs(600, 0.3, 48);
  const page = 'Accept cookies? This site uses cookies to improve your experience; by browsing on you agree to our cookie policy and terms.';
  const texts: string[] = [];
  for (let i = 0; i < docs.length; i++) {
    texts.push(docs[i]!.text);
    // Copies of ordinary documents (some of which have near duplicates), a few of each.
    if (i % 50 === 7) { for (let k = 0; k < 3; k++) texts.push(docs[i]!.text); }
  }
  for (let k = 0; k < big; k++) texts.splice((k * 7919) % (texts.length + 1), 0, page);
  return texts.map((text, i) => JSON.stringify({ id: `d${i}`, score: (i * 13) % 7, text }));
}

/** Writes the records as `n` shards, every other one gzipped; returns their paths. */
function writeShards(dir: string, lines: string[], n: number): string[] {
  fs.mkdirSync(dir, { recursive: true });
  const per = Math.ceil(lines.length / n);
  return Array.from({ length: n }, (_, s) => {
    const text = lines.slice(s * per, (s + 1) * per).map((l) => l + '\n').join('');
    const file = path.join(dir, `part-${s}.jsonl${s % 2 ? '.gz' : ''}`);
    fs.writeFileSync(file, s % 2 ? zlib.gzipSync(text) : text);
    return file;
  });
}

function shardBytes(dir: string, shards: string[]): string {
  return shards
    .map((s) => {
      const b = fs.readFileSync(path.join(dir, path.basename(s)));
      return (s.endsWith('.gz') ? zlib.gunzipSync(b) : b).toString('utf8');
    })
    .join('');
}

const COUNTS = ['candidates', 'pairs', 'clusters', 'docsInClusters', 'duplicates', 'removal'] as const;

describe('a job folds exact copies before LSH, as dedup does', () => {
  let dir: string;
  let shards: string[];
  let all: string;
  before(() => {
    dir = tmpDir();
    const lines = corpus(3000);
    shards = writeShards(path.join(dir, 'shards'), lines, 4);
    all = path.join(dir, 'all.jsonl');
    fs.writeFileSync(all, lines.map((l) => l + '\n').join(''));
  });

  it("3,000 identical documents and ordinary ones at the default options: dedup's output, audit and counts, with few candidate rows", () => {
    const d = neardup([
      'dedup',
      all,
      '--id-field',
      'id',
      '--output',
      'dedup',
      '--out',
      path.join(dir, 'd.jsonl'),
      '--removed',
      path.join(dir, 'd.removed.jsonl'),
      '--json',
    ], { cwd: dir });
    assert.equal(d.code, 0, d.stderr);
    const work = path.join(dir, 'w');
    const j = neardup([
      'job',
      'dedup',
      ...shards,
      '--id-field',
      'id',
      '--output',
      'dedup',
      '--out-dir',
      path.join(dir, 'j'),
      '--removed',
      path.join(dir, 'j.removed.jsonl'),
      '--local',
      '--task-bytes',
      '100000',
      '--work-dir',
      work,
      '--json',
    ], { cwd: dir });
    assert.equal(j.code, 0, j.stderr);
    assert.equal(shardBytes(path.join(dir, 'j'), shards), fs.readFileSync(path.join(dir, 'd.jsonl'), 'utf8'));
    assert.equal(fs.readFileSync(path.join(dir, 'j.removed.jsonl'), 'utf8'), fs.readFileSync(path.join(dir, 'd.removed.jsonl'), 'utf8'));
    const [dj, jj] = [JSON.parse(d.stdout) as Record<string, unknown>, JSON.parse(j.stdout) as Record<string, unknown>];
    for (const k of COUNTS) assert.deepEqual(jj[k], dj[k], k);
    assert.ok((dj.copies as number) >= 2999, `dedup folded the copies: ${String(dj.copies)}`);
    // Folded: the join wrote pairs among representatives only (unfolded, the big group alone was ~72M rows).
    let rows = 0;
    for (const t of fs.readdirSync(path.join(work, 'join')))
      rows += (JSON.parse(fs.readFileSync(path.join(work, 'join', t, '_SUCCESS.json'), 'utf8')) as { pairRows: number }).pairRows;
    assert.ok(rows < 100_000, `${rows} candidate pair rows`);
  });

  for (
    const opts of [
      ['--output', 'clusters', '--removal', 'cluster', '--keep', 'max:score'],
      ['--output', 'annotate', '--keep', 'min:score'],
      ['--output', 'annotate', '--removal', 'cluster', '--keep', 'longest'],
      ['--output', 'dedup', '--keep', 'none'],
    ]
  ) {
    it(`${opts.join(' ')}: dedup's bytes`, async () => {
      const tag = opts.join('').replace(/[^a-z]/g, '');
      const shardOut = opts[1] !== 'clusters';
      const dOut = ['--out', path.join(dir, `d-${tag}.jsonl`)];
      const jOut = shardOut ? ['--out-dir', path.join(dir, `j-${tag}`)] : ['--out', path.join(dir, `j-${tag}.jsonl`)];
      const d = await cliIn(['dedup', all, '--id-field', 'id', ...opts, ...dOut, '-q'], { cwd: dir });
      assert.equal(d.code, 0, d.stderr);
      const j = await cliIn([
        'job',
        'dedup',
        ...shards,
        '--id-field',
        'id',
        ...opts,
        ...jOut,
        '--local',
        '--task-bytes',
        '100000',
        '--work-dir',
        path.join(dir, `w-${tag}`),
        '-q',
      ], { cwd: dir });
      assert.equal(j.code, 0, j.stderr);
      if (shardOut) assert.equal(shardBytes(path.join(dir, `j-${tag}`), shards), fs.readFileSync(path.join(dir, `d-${tag}.jsonl`), 'utf8'));
      else assert.equal(fs.readFileSync(path.join(dir, `j-${tag}.jsonl`), 'utf8'), fs.readFileSync(path.join(dir, `d-${tag}.jsonl`), 'utf8'));
    });
  }

  it('--output pairs lists every pair of copies, as dedup does, and refuses past --max-pairs where dedup does', async () => {
    const lines = corpus(150);
    const small = writeShards(path.join(dir, 'small'), lines, 3);
    const concat = path.join(dir, 'small.jsonl');
    fs.writeFileSync(concat, lines.map((l) => l + '\n').join(''));
    const d = neardup(['dedup', concat, '--id-field', 'id', '--output', 'pairs', '--out', path.join(dir, 'pairs-d.tsv'), '--json'], { cwd: dir });
    assert.equal(d.code, 0, d.stderr);
    const j = neardup([
      'job',
      'dedup',
      ...small,
      '--id-field',
      'id',
      '--output',
      'pairs',
      '--out',
      path.join(dir, 'pairs-j.tsv'),
      '--local',
      '--task-bytes',
      '30000',
      '--work-dir',
      path.join(dir, 'w-pairs'),
      '--json',
    ], { cwd: dir });
    assert.equal(j.code, 0, j.stderr);
    assert.equal(fs.readFileSync(path.join(dir, 'pairs-j.tsv'), 'utf8'), fs.readFileSync(path.join(dir, 'pairs-d.tsv'), 'utf8'));
    const pairs = (JSON.parse(d.stdout) as { pairs: number }).pairs;
    assert.ok(pairs > (150 * 149) / 2, `${pairs} pairs`);
    assert.equal((JSON.parse(j.stdout) as { pairs: number }).pairs, pairs);
    // Below the pairs the copies stand for (above the candidate rows of any partition): both refuse.
    const limit = String(pairs - 1);
    const dr = await cliIn(['dedup', concat, '--id-field', 'id', '--output', 'pairs', '--max-pairs', limit, '--out', path.join(dir, 'x.tsv')], { cwd: dir });
    const jr = await cliIn([
      'job',
      'dedup',
      ...small,
      '--id-field',
      'id',
      '--output',
      'pairs',
      '--max-pairs',
      limit,
      '--out',
      path.join(dir, 'y.tsv'),
      '--local',
      '--work-dir',
      path.join(dir, 'w-pairs-limit'),
    ], { cwd: dir });
    assert.equal(dr.code, 2, dr.stderr);
    assert.equal(jr.code, 2, jr.stderr);
    assert.match(jr.stderr, /raise --max-pairs/);
  });
});
