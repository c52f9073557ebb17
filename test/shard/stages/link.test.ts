/**
 * The link stage (src/shard/stages/link.ts, starGraph.ts, linkDriver.ts) as a class: its graph steps,
 * driven round by round over random graphs cut into random partitions, give union-find's components
 * (each labelled by its smallest node); and a job whose one giant chain component is cut across
 * every shard group gives neardup dedup's bytes on every
 * output and both removal rules, with link rounds run by the local runner (on task processes, and in
 * the job's process) and by array members, together or one member alone.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { tmpDir, neardup } from '../../cliUtil.js';
import { neardupAsync } from '../../helpers/procs.js';
import { cliInProcess } from '../../helpers/inProcessCli.js';
import { giantChainCorpus } from '../../helpers/shards.js';
import { clustersOfPairs } from '../../../src/cluster/clusters.js';
import { EdgeOut, largeStar, neighbours, smallStar } from '../../../src/shard/stages/starGraph.js';
import { rangeOf } from '../../../src/shard/files/job.js';
import { splitmix32 } from '../../../src/hash/mix.js';

/** The link rounds over edges (a[i], b[i]), a[i]'s partition holding the pair, in memory: each node's label and the rounds run. */
function linkInMemory(a: number[], b: number[], starts: Float64Array): { label: Map<number, number>; rounds: number } {
  const G = starts.length - 1;
  let outs: { u: Float64Array; v: Float64Array; pstart: Float64Array }[] = [];
  for (let q = 0; q < G; q++) {
    const idx = a.flatMap((x, i) => (rangeOf(starts, x) === q ? [i] : []));
    const { docs, order, start } = clustersOfPairs(Float64Array.from(idx, (i) => a[i]!), Float64Array.from(idx, (i) => b[i]!), idx.length);
    const out = new EdgeOut(starts);
    for (let k = 0; k + 1 < start.length; k++) for (let j = start[k]! + 1; j < start[k + 1]!; j++) out.both(docs[order[j]!]!, docs[order[start[k]!]!]!);
    outs.push(out.columns());
  }
  for (let r = 1; r < 200; r++) {
    const next: typeof outs = [];
    const label = new Map<number, number>();
    let star = true;
    for (let q = 0; q < G; q++) {
      const u: number[] = [];
      const v: number[] = [];
      for (const o of outs) for (let i = o.pstart[q]!; i < o.pstart[q + 1]!; i++) (u.push(o.u[i]!), v.push(o.v[i]!));
      const lo = starts[q]!;
      const g = neighbours(Float64Array.from(u), Float64Array.from(v), lo, starts[q + 1]! - lo);
      const out = new EdgeOut(starts);
      if (r % 2 === 1) {
        star = largeStar(g, lo, out).star && star;
        for (let d = 0; d + 1 < g.start.length; d++) if (g.start[d + 1]! > g.start[d]!) label.set(lo + d, Math.min(lo + d, g.nbr[g.start[d]!]!));
      } else smallStar(g, lo, out);
      next.push(out.columns());
    }
    if (r % 2 === 1 && star) return { label, rounds: r + 1 };
    outs = next;
  }
  throw new Error('did not converge');
}

/** Each node's smallest component member, by union-find. */
function unionFind(a: number[], b: number[]): Map<number, number> {
  const parent = new Map<number, number>();
  const find = (x: number): number => {
    while (parent.get(x)! !== x) x = parent.get(x)!;
    return x;
  };
  for (const x of [...a, ...b]) if (!parent.has(x)) parent.set(x, x);
  for (let i = 0; i < a.length; i++) {
    const [x, y] = [find(a[i]!), find(b[i]!)];
    if (x !== y) parent.set(Math.max(x, y), Math.min(x, y));
  }
  return new Map([...parent.keys()].map((x) => [x, find(x)]));
}

describe('link rounds in memory', () => {
  it("give union-find's components on random graphs of chains, stars and random pairs, cut into random partitions", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 400 }), fc.integer({ min: 1, max: 9 }), fc.integer({ min: 0, max: 2 ** 31 }), (n, G, seed) => {
        const rnd = splitmix32(seed);
        const a: number[] = [];
        const b: number[] = [];
        const edge = (x: number, y: number): void => {
          if (x === y) return;
          // Either orientation, and some pairs twice (join rows repeat a pair once per shared band).
          if (rnd() % 2) (a.push(x), b.push(y));
          else (a.push(y), b.push(x));
          if (rnd() % 4 === 0) (a.push(x), b.push(y));
        };
        const nodes = Array.from({ length: n }, (_, i) => i);
        for (let i = n - 1; i > 0; i--) {
          const j = rnd() % (i + 1);
          [nodes[i], nodes[j]] = [nodes[j]!, nodes[i]!];
        }
        // A long chain in shuffled order, another in corpus order, a star, and random pairs.
        const third = Math.floor(n / 3);
        for (let i = 1; i < third; i++) edge(nodes[i - 1]!, nodes[i]!);
        for (let i = third + 1; i < 2 * third; i++) edge(i - 1, i);
        for (let i = 2 * third + 1; i < n; i++) if (rnd() % 2) edge(nodes[2 * third]!, nodes[i]!);
        for (let k = rnd() % (n + 1); k > 0; k--) edge(rnd() % n, rnd() % n);
        const cuts = [...new Set(Array.from({ length: G - 1 }, () => rnd() % (n + 1)))].sort((x, y) => x - y);
        const starts = Float64Array.from([0, ...cuts, n]);
        const got = linkInMemory(a, b, starts);
        const want = unionFind(a, b);
        assert.deepEqual([...got.label].sort((x, y) => x[0] - y[0]), [...want].sort((x, y) => x[0] - y[0]));
        // O(log² n) rounds at most; in practice a few more than log n.
        assert.ok(got.rounds <= 2 * Math.ceil(Math.log2(n + 2)) ** 2 + 4, `${got.rounds} rounds for ${n} nodes`);
      }),
      { numRuns: 300, seed: 47 },
    );
  });
});

describe('a giant component cut across every shard group', () => {
  let dir: string;
  let shards: string;
  let concat: string;
  /** Exact copies among the giant chain's documents: join folds them, so its star in the link stage lacks them. */
  let giantCopies = 0;
  const SHARDS = 6;
  before(() => {
    dir = tmpDir();
    const docs = giantChainCorpus(5, 500);
    const giant = docs.filter((d) => d.id.startsWith('giant-'));
    giantCopies = giant.length - new Set(giant.map((d) => d.text)).size;
    shards = path.join(dir, 'shards');
    fs.mkdirSync(shards);
    for (let s = 0; s < SHARDS; s++)
      fs.writeFileSync(
        path.join(shards, `part-${s}.jsonl`),
        docs.filter((_, i) => i % SHARDS === s).map((d) => JSON.stringify(d) + '\n').join(''),
      );
    concat = path.join(dir, 'all.jsonl');
    fs.writeFileSync(concat, [...Array(SHARDS).keys()].map((s) => fs.readFileSync(path.join(shards, `part-${s}.jsonl`), 'utf8')).join(''));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const common = ['--id-field', 'id', '--threshold', '0.9', '-k', '4'];
  // One combination runs its stages and link rounds on task processes (2), the others in the job's
  // own process (1): a task writes the same files in either, and a task process started per stage
  // cost ~7 of a run's 8 s of CPU here. Task processes over every stage are job-local's subject.
  for (
    const [mode, rule, keep, processes] of [
      ['clusters', 'verified', 'first', '1'],
      ['dedup', 'verified', 'max:score', '1'],
      [
        'dedup',
        'cluster',
        'first',
        '2',
      ],
      ['annotate', 'cluster', 'longest', '1'],
      ['annotate', 'verified', 'first', '1'],
    ] as const
  ) {
    it(`job --local gives dedup's bytes: --output ${mode} --removal ${rule} --keep ${keep}, ${processes} task process(es)`, () => {
      const tag = `${mode}-${rule}-${keep.replace(':', '')}`;
      const opts = [...common, '--output', mode, '--removal', rule, '--keep', keep];
      const out = (
        who: string,
      ): string[] => (mode === 'clusters'
        ? ['-o', path.join(dir, `${who}-${tag}.jsonl`)]
        : ['--out-dir', path.join(dir, `${who}-${tag}`), ...(mode === 'dedup' ? ['--removed', path.join(dir, `${who}-${tag}.tsv`)] : [])]);
      const d = neardup(['dedup', shards, ...opts, ...out('one'), '--json'], { cwd: dir });
      assert.equal(d.code, 0, d.stderr);
      const work = path.join(dir, `w-${tag}`);
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
        '--work-dir',
        work,
        '--json',
      ], {
        cwd: dir,
      });
      assert.equal(j.code, 0, j.stderr);
      const read = (
        p: string,
      ): string => (fs.statSync(p).isDirectory()
        ? fs.readdirSync(p).sort().map((f) => `${f}\n${fs.readFileSync(path.join(p, f), 'utf8')}`).join('')
        : fs.readFileSync(p, 'utf8'));
      for (const x of mode === 'clusters' ? [`-${tag}.jsonl`] : [`-${tag}`, ...(mode === 'dedup' ? [`-${tag}.tsv`] : [])]) {
        assert.ok(read(path.join(dir, `one${x}`)) === read(path.join(dir, `job${x}`)), `${x}: the job's bytes are dedup's`);
      }
      const [ds, js] = [JSON.parse(d.stdout), JSON.parse(j.stdout)];
      assert.deepEqual(js.removal, ds.removal);
      assert.equal(js.clusters, ds.clusters);
      assert.equal(js.duplicates, ds.duplicates);
      // The giant component spans every group: the link stage took rounds, and the largest cluster is it.
      const link = JSON.parse(fs.readFileSync(path.join(work, 'link', '00000', '_SUCCESS.json'), 'utf8')) as { round: number };
      assert.ok(link.round >= 1);
      if (rule === 'cluster') {
        assert.ok(ds.removal.largestCluster >= 400, `largest cluster ${ds.removal.largestCluster}`);
        // The link stage's components are the verified graph's: its largest star is the giant chain (copies folded).
        const stars = fs.readdirSync(path.join(work, 'link', `r${String(link.round).padStart(4, '0')}`)).map((t) =>
          (JSON.parse(fs.readFileSync(path.join(work, 'link', `r${String(link.round).padStart(4, '0')}`, t, '_SUCCESS.json'), 'utf8')) as { largest?: number })
            .largest ?? 0
        );
        assert.ok(giantCopies > 0);
        assert.equal(Math.max(...stars), ds.removal.largestCluster - giantCopies);
      }
    });
  }

  it('array members run the rounds together, or one member alone runs them all', async () => {
    const ref = path.join(dir, 'ref-pairs.tsv');
    // Plan, stages and report in this process (no start-up per command); the link members as processes of their own, racing.
    assert.equal((await cliInProcess(['dedup', concat, ...common, '-o', ref, '-q'])).code, 0);
    for (const together of [true, false]) {
      const work = path.join(dir, `w-array-${together}`);
      assert.equal((await cliInProcess(['job', 'plan', shards, ...common, '--task-bytes', '1', '--work-dir', work, '-q'])).code, 0);
      for (const s of ['sign', 'join', 'route', 'verify']) assert.equal((await cliInProcess(['stage', s, '--work-dir', work, '--all'])).code, 0);
      const members = together ? [0, 1, 2] : [0];
      const runs = await Promise.all(
        members.map((i) =>
          neardupAsync(['stage', 'link', '--work-dir', work, '--task', String(i), '--tasks', '3', '--steal-after', together ? '60' : '0'], dir)
        ),
      );
      for (const r of runs) assert.equal(r.code, 0, r.stderr);
      if (!together) {
        // The lone member committed its own link tasks; the others' are left to their members (here: --all).
        assert.ok(fs.existsSync(path.join(work, 'link', '00000', '_SUCCESS.json')));
        assert.ok(!fs.existsSync(path.join(work, 'link', '00001', '_SUCCESS.json')));
        assert.equal((await cliInProcess(['stage', 'link', '--work-dir', work, '--all'])).code, 0);
      }
      for (const s of ['decide', 'components']) assert.equal((await cliInProcess(['stage', s, '--work-dir', work, '--all'])).code, 0);
      const out = path.join(dir, `array-${together}.tsv`);
      const rep = await cliInProcess(['job', 'report', '--work-dir', work, '-o', out, '-q']);
      assert.equal(rep.code, 0, rep.stderr);
      assert.equal(fs.readFileSync(out, 'utf8').split('\n').sort().join('\n'), fs.readFileSync(ref, 'utf8').split('\n').sort().join('\n'));
    }
  });
});
