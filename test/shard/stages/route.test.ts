/**
 * The route stage's spread of candidates over the verify tasks (src/shard/stages/route.ts): its
 * cuts, as a function, on random groups; and a job whose candidate pairs all lie among the first
 * group's documents (a planted skew), whose verify tasks then hold about equal shares, cut between
 * first documents, while its outputs stay neardup dedup's bytes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { tmpDir, neardup } from '../../cliUtil.js';
import { verifyCuts } from '../../../src/shard/stages/route.js';
import { ColumnFile } from '../../../src/shard/files/columns.js';
import { splitmix32 } from '../../../src/hash/mix.js';

/** A group's first rows per document (`start`, as route's neighbours give them) from each document's row count. */
function startsOf(counts: readonly number[]): Float64Array {
  const start = new Float64Array(counts.length + 1);
  for (let d = 0; d < counts.length; d++) start[d + 1] = start[d]! + counts[d]!;
  return start;
}

describe('verifyCuts', () => {
  it("cuts each group at its first documents' boundaries, in order, every row to one task; one group alone is cut within ⌈rows/V⌉ + one document", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.nat(6), { maxLength: 40 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 9 }),
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 6, maxLength: 6 }),
        (groups, V, repeats) => {
          // Candidate rows read per group (with repeats) ≥ its distinct rows.
          const distinct = groups.map((c) => c.reduce((x, y) => x + y, 0));
          const rows = distinct.map((m, q) => m * repeats[q]!);
          const before = new Float64Array(groups.length + 1);
          for (let q = 0; q < groups.length; q++) before[q + 1] = before[q]! + rows[q]!;
          let lastTask = 0;
          for (let q = 0; q < groups.length; q++) {
            const start = startsOf(groups[q]!);
            const ps = verifyCuts({ spread: { before }, tasks: V, q, rows: rows[q]!, start });
            assert.equal(ps.length, V + 1);
            assert.equal(ps[0], 0);
            assert.equal(ps[V], distinct[q]);
            const bounds = new Set(start);
            for (let t = 0; t < V; t++) {
              assert.ok(ps[t]! <= ps[t + 1]!);
              assert.ok(bounds.has(ps[t + 1]!), `cut ${ps[t + 1]} between first documents`);
              // The groups' shares follow one another: a group's first task is no earlier than the last one's last.
              if (ps[t + 1]! > ps[t]!) {
                assert.ok(t >= lastTask, `group ${q} task ${t} after ${lastTask}`);
                lastTask = t;
              }
            }
            if (groups.length === 1) {
              const largest = Math.max(0, ...groups[q]!);
              for (let t = 0; t < V; t++) assert.ok(ps[t + 1]! - ps[t]! <= Math.ceil(distinct[q]! / V) + largest);
            }
          }
        },
      ),
      { numRuns: 300, seed: 47 },
    );
  });

  it('refuses join files and markers that disagree', () => {
    assert.throws(
      () => verifyCuts({ spread: { before: Float64Array.from([0, 5, 9]) }, tasks: 2, q: 0, rows: 4, start: startsOf([2, 2]) }),
      /hold 4 candidate rows of its group, their markers 5/,
    );
  });
});

/** Shard 0: families of near duplicates (and a few exact copies); shards 1 to SHARDS − 1: unrelated documents. */
function skewedShards(seed: number, shards: number): string[][] {
  const rnd = splitmix32(seed);
  const word = (): string => `w${rnd() % 20000}`;
  const lines: string[][] = Array.from({ length: shards }, () => []);
  let id = 0;
  const push = (s: number, text: string): void => void lines[s]!.push(JSON.stringify({ id: `d${id++}`, text }));
  for (let f = 0; f < 120; f++) {
    let words = Array.from({ length: 60 }, word);
    const size = 2 + (rnd() % 5);
    for (let i = 0; i < size; i++) {
      push(0, words.join(' '));
      if (rnd() % 9 === 0) push(0, words.join(' '));
      words = words.slice();
      words[rnd() % words.length] = word();
    }
  }
  for (let s = 1; s < shards; s++) for (let i = 0; i < 120; i++) push(s, Array.from({ length: 60 }, word).join(' '));
  return lines;
}

describe("a planted skew: every candidate pair among the first group's documents", () => {
  let dir: string;
  let shards: string;
  const SHARDS = 6;
  before(() => {
    dir = tmpDir();
    shards = path.join(dir, 'shards');
    fs.mkdirSync(shards);
    skewedShards(47, SHARDS).forEach((l, s) => fs.writeFileSync(path.join(shards, `part-${s}.jsonl`), l.join('\n') + '\n'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const common = ['--id-field', 'id', '--threshold', '0.8', '-k', '4'];
  const marker = (work: string, stage: string, t: number): Record<string, number> =>
    JSON.parse(fs.readFileSync(path.join(work, stage, String(t).padStart(5, '0'), '_SUCCESS.json'), 'utf8')) as Record<string, number>;

  // --output dedup on task processes (2), pairs in the job's own process (1): the route and verify
  // tasks write the same files in either; a task process started per stage was most of a run's CPU.
  for (const [mode, processes] of [['dedup', '2'], ['pairs', '1']] as const) {
    it(`spreads the verify tasks' candidates within ⌈total/V⌉ + one first document's, and writes dedup's bytes (--output ${mode}, ${processes} task process(es))`, () => {
      const out = (
        who: string,
      ): string[] => (mode === 'pairs'
        ? ['-o', path.join(dir, `${who}-pairs.tsv`)]
        : ['--out-dir', path.join(dir, `${who}-dedup`), '--removed', path.join(dir, `${who}-removed.tsv`)]);
      const opts = [...common, '--output', mode];
      const d = neardup(['dedup', shards, ...opts, ...out('one'), '--json'], { cwd: dir });
      assert.equal(d.code, 0, d.stderr);
      const work = path.join(dir, `w-${mode}`);
      const j = neardup([
        'job',
        'dedup',
        shards,
        ...opts,
        ...out('job'),
        '--local',
        '--processes',
        processes,
        '--task-bytes',
        '1',
        '--partitions',
        '3',
        '--work-dir',
        work,
        '--json',
      ], { cwd: dir });
      assert.equal(j.code, 0, j.stderr);
      const read = (
        p: string,
      ): string => (fs.statSync(p).isDirectory()
        ? fs.readdirSync(p).sort().map((f) => `${f}\n${fs.readFileSync(path.join(p, f), 'utf8')}`).join('')
        : fs.readFileSync(p, 'utf8'));
      for (const x of mode === 'pairs' ? ['-pairs.tsv'] : ['-dedup', '-removed.tsv'])
        assert.ok(read(path.join(dir, `one${x}`)) === read(path.join(dir, `job${x}`)), `${x}: the job's bytes are dedup's`);
      const [ds, js] = [JSON.parse(d.stdout), JSON.parse(j.stdout)];
      assert.equal(js.candidates, ds.candidates);
      assert.equal(js.pairs, ds.pairs);
      // (Nearly) every candidate's first document is in group 0: routed whole to verify task 0, as before, it would hold them.
      const routed = Array.from({ length: SHARDS }, (_, q) => marker(work, 'route', q).candidates!);
      const verified = Array.from({ length: SHARDS }, (_, t) => marker(work, 'verify', t).candidates!);
      const total = routed.reduce((x, y) => x + y, 0);
      assert.ok(total > 500, `${total} candidates`);
      assert.ok(routed[0]! >= 0.99 * total, `routed per group ${routed.join(' ')}`);
      assert.equal(verified.reduce((x, y) => x + y, 0), total);
      const f = ColumnFile.open(path.join(work, 'route', '00000', 'pairs.bin'), 'routed', JSON.parse(fs.readFileSync(path.join(work, 'job.json'), 'utf8')).id);
      let largest = 0;
      try {
        const comp = f.f64('comp');
        for (let i = 0, run = 0; i < comp.length; i++) largest = Math.max(largest, run = i > 0 && comp[i] === comp[i - 1] ? run + 1 : 1);
      } finally {
        f.close();
      }
      process.stdout.write(`# skew: routed per group ${routed.join(' ')}; verified per task ${verified.join(' ')}; largest first document ${largest}\n`);
      for (const v of verified) assert.ok(v <= Math.ceil(total / SHARDS) + largest, `verify task of ${v} candidates: ${verified.join(' ')}`);
      assert.ok(Math.min(...verified) > 0);
    });
  }
});
