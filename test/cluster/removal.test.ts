/**
 * What a deduplication drops (src/cluster/removal.ts), as a class: random corpora with planted
 * chains (w0 ~ w1 ~ … ~ wn, whose ends are far apart), run through every route — the library, dedup
 * in memory and streamed, a directory of shards, and sharded jobs (--local, array stages, BullMQ
 * workers). Under the default verified rule every dropped document names a kept document at or above
 * the threshold (checked against an exact Jaccard computed here), no two kept documents are a
 * verified pair, and every route writes the same bytes. `--removal cluster` gives the old rule: one
 * survivor per connected component of the verified pairs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { tmpDir } from '../cliUtil.js';
import { cliInProcess } from '../helpers/inProcessCli.js';
import { startWorker, type WorkerChild } from '../helpers/shards.js';
import { startRedis, type RedisChild } from '../helpers/redis.js';
import { redisMissing, REQUIRE_ALL } from '../helpers/needs.js';
import { STAGES } from '../../src/shard/files/job.js';
import { createShingler } from '../../src/text/shingler.js';
import { jaccard } from '../../src/similarity/jaccard.js';
import { dedup } from '../../src/index.js';
import { decideUnits, verifiedRemoval } from '../../src/cluster/removal.js';
import { splitmix32 } from '../../src/hash/mix.js';

/** A corpus of chains: each link rewrites a few words of the one before, so neighbours are near duplicates and the ends are not. */
function chainCorpus(seed: number, chains: number, length: number, singles: number): { id: string; text: string; score: number }[] {
  const rnd = splitmix32(seed);
  const word = (): string => `w${rnd() % 5000}`;
  const docs: { id: string; text: string; score: number }[] = [];
  for (let c = 0; c < chains; c++) {
    let words = Array.from({ length: 40 + (rnd() % 20) }, word);
    for (let i = 0; i < length; i++) {
      docs.push({ id: `c${c}-${i}`, text: words.join(' '), score: rnd() % 7 });
      words = words.slice();
      for (let j = 0; j < 2; j++) words[rnd() % words.length] = word();
      // Now and then an exact copy of a link, so copy groups join the chains.
      if (rnd() % 5 === 0) docs.push({ id: `c${c}-${i}-copy`, text: docs[docs.length - 1]!.text, score: rnd() % 7 });
    }
  }
  for (let i = 0; i < singles; i++) docs.push({ id: `s${i}`, text: Array.from({ length: 50 }, word).join(' '), score: rnd() % 7 });
  // Shuffled, so chains interleave and cross shards.
  for (let i = docs.length - 1; i > 0; i--) {
    const j = rnd() % (i + 1);
    [docs[i], docs[j]] = [docs[j]!, docs[i]!];
  }
  return docs;
}

/** The audit rows (id → kept id and similarity) of a `--removed` TSV. */
function audit(file: string): Map<string, { kept: string; similarity: number }> {
  const rows = new Map<string, { kept: string; similarity: number }>();
  for (const line of fs.readFileSync(file, 'utf8').split('\n').slice(1)) {
    if (!line) continue;
    const [id, kept, sim] = line.split('\t');
    rows.set(id!, { kept: kept!, similarity: Number(sim) });
  }
  return rows;
}

/** The document-level greedy walk, written plainly: the oracle of the unit walk with copy groups. */
function plainWalk(n: number, pairs: [number, number, number][], rank: number[]): { keptBy: number[]; sim: number[] } {
  const keptBy = Array.from({ length: n }, (_, i) => i);
  const sim = new Array<number>(n).fill(NaN);
  const kept = new Set<number>();
  const pos = new Map(rank.map((d, k) => [d, k]));
  const clustered = new Set(pairs.flatMap(([a, b]) => [a, b]));
  for (const d of rank) {
    if (!clustered.has(d)) continue;
    let best = -1;
    let bestSim = NaN;
    for (const [a, b, s] of pairs) {
      const o = a === d ? b : b === d ? a : -1;
      if (o >= 0 && kept.has(o) && (best < 0 || pos.get(o)! < pos.get(best)!)) {
        best = o;
        bestSim = s;
      }
    }
    if (best < 0) kept.add(d);
    else {
      keptBy[d] = best;
      sim[d] = bestSim;
    }
  }
  return { keptBy, sim };
}

describe('verified removal: the unit walk', () => {
  it('with copy groups, equals the plain document-level walk over every pair (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e9 }), fc.integer({ min: 2, max: 30 }), fc.boolean(), (seed, n, byValue) => {
        const rnd = splitmix32(seed);
        // Copy groups: each document joins an earlier group now and then.
        const groupOf: number[] = [];
        let groups = 0;
        for (let d = 0; d < n; d++) groupOf.push(d > 0 && rnd() % 3 === 0 ? groupOf[rnd() % d]! : groups++);
        const gpairs: [number, number, number][] = [];
        for (let g = 0; g < groups; g++) for (let h = g + 1; h < groups; h++) if (rnd() % 4 === 0) gpairs.push([g, h, 0.5 + (rnd() % 50) / 100]);
        const start = new Int32Array(groups + 1);
        for (const g of groupOf) start[g + 1]!++;
        for (let g = 0; g < groups; g++) start[g + 1]! += start[g]!;
        const fill = start.slice(0, groups);
        const members = new Int32Array(n);
        for (let d = 0; d < n; d++) members[fill[groupOf[d]!]!++] = d;
        const values = Float64Array.from({ length: n }, () => rnd() % 4);
        const ranking = byValue ? { values, sign: 1 as const } : {};
        const got = verifiedRemoval(
          n,
          {
            units: groups,
            count: gpairs.length,
            a: gpairs.map((p) => p[0]),
            b: gpairs.map((p) => p[1]),
            similarity: gpairs.map((p) => p[2]),
          },
          ranking,
          { start, members },
        );
        // The same corpus at the document level: copies pair at similarity 1, groups' pairs for every member pair.
        const dpairs: [number, number, number][] = [];
        for (let a = 0; a < n; a++) {
          for (let b = a + 1; b < n; b++) {
            if (groupOf[a] === groupOf[b]) dpairs.push([a, b, 1]);
            else {
              const p = gpairs.find(([g, h]) => (g === groupOf[a] && h === groupOf[b]) || (h === groupOf[a] && g === groupOf[b]));
              if (p) dpairs.push([a, b, p[2]]);
            }
          }
        }
        const rank = Array.from({ length: n }, (_, i) => i).sort((x, y) => (byValue ? values[y]! - values[x]! : 0) || x - y);
        const want = plainWalk(n, dpairs, rank);
        assert.deepEqual(Array.from(got.keptBy), want.keptBy);
        assert.deepEqual(Array.from(got.similarity), want.sim);
      }),
      { numRuns: 300, seed: 47 },
    );
  });

  it('keeps no two neighbours and drops each unit for its earliest kept neighbour', () => {
    // A path 0 - 1 - 2 - 3: 0 kept, 1 dropped for 0, 2 kept, 3 dropped for 2.
    const d = decideUnits({ units: 4, count: 3, a: [0, 1, 2], b: [1, 2, 3], similarity: [0.9, 0.85, 0.8] }, [0, 1, 2, 3]);
    assert.deepEqual(Array.from(d.via), [0, 0, 2, 2]);
    assert.deepEqual(Array.from(d.similarity), [NaN, 0.9, NaN, 0.8]);
  });
});

type Route = 'library' | 'memory' | 'stream' | 'shards' | 'local' | 'array' | 'bullmq';

describe('verified removal on every route (property over planted chains)', () => {
  let root: string;
  let redis: RedisChild | undefined;
  const workers: WorkerChild[] = [];

  before(async () => {
    root = tmpDir();
    if (!redisMissing() || REQUIRE_ALL) {
      redis = await startRedis();
      for (let i = 0; i < 2; i++)
        workers.push(startWorker(redis.url, path.join(root, `w${i}`), ['--queue', 'removal', '--lock-ms', '5000', '--stalled-ms', '1000']));
      await Promise.all(workers.map((w) => w.waitFor(/worker ready/)));
    }
  });

  after(async () => {
    for (const w of workers) await w.kill();
    await redis?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('every dropped document has a kept one at ≥ the threshold, no two kept ones are a pair, every route the same bytes; cluster: one survivor per component', async () => {
    let k = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          seed: fc.integer({ min: 1, max: 1e9 }),
          threshold: fc.constantFrom(0.5, 0.7, 0.8),
          keep: fc.constantFrom('first', 'longest', 'max:score', 'min:score', 'none'),
          removal: fc.constantFrom('verified', 'cluster'),
          shards: fc.integer({ min: 1, max: 4 }),
        }),
        async (c) => {
          const dir = path.join(root, `case${k++}`);
          fs.mkdirSync(path.join(dir, 'sx'), { recursive: true });
          const docs = chainCorpus(c.seed, 3, 8, 6);
          const lines = docs.map((d) => JSON.stringify(d) + '\n');
          const single = path.join(dir, 'all.jsonl');
          fs.writeFileSync(single, lines.join(''));
          const shardFiles: string[] = [];
          const per = Math.ceil(lines.length / c.shards);
          for (let s = 0; s < c.shards; s++) {
            const f = path.join(dir, 'sx', `part-${s}.jsonl`);
            fs.writeFileSync(f, lines.slice(s * per, (s + 1) * per).join(''));
            shardFiles.push(f);
          }
          const opts = ['--id-field', 'id', '--threshold', String(c.threshold), '--keep', c.keep, '--removal', c.removal, '--candidates', 'lsh', '-q'];
          const routes: Route[] = ['memory', 'stream', 'shards', 'local', 'array', ...(redis ? (['bullmq'] as const) : [])];
          const audits = new Map<Route, string>();
          const outputs = new Map<Route, string>();
          for (const route of routes) {
            const rm = path.join(dir, `${route}.removed.tsv`);
            const out = path.join(dir, `${route}.out`);
            const work = path.join(dir, `${route}.work`);
            let r;
            if (route === 'memory' || route === 'stream')
              r = await cliInProcess([
                'dedup',
                single,
                ...opts,
                route === 'stream' ? '--stream' : '--no-stream',
                '--output',
                'dedup',
                '-o',
                out,
                '--removed',
                rm,
              ]);
            else if (route === 'shards')
              r = await cliInProcess(['dedup', path.join(dir, 'sx'), ...opts, '--output', 'dedup', '--out-dir', out, '--removed', rm]);
            else if (route === 'array') {
              r = await cliInProcess([
                'job',
                'plan',
                path.join(dir, 'sx'),
                ...opts,
                '--output',
                'dedup',
                '--out-dir',
                out,
                '--removed',
                rm,
                '--work-dir',
                work,
              ]);
              for (const stage of STAGES) if (r.code === 0) r = await cliInProcess(['stage', stage, '--work-dir', work, '--all']);
              if (r.code === 0) r = await cliInProcess(['job', 'report', '--work-dir', work, '-q']);
            } else {
              const how = route === 'local' ? ['--local'] : ['--redis', redis!.url, '--queue', 'removal'];
              r = await cliInProcess([
                'job',
                'dedup',
                path.join(dir, 'sx'),
                ...opts,
                '--output',
                'dedup',
                '--out-dir',
                out,
                '--removed',
                rm,
                ...how,
                '--work-dir',
                work,
              ]);
            }
            assert.equal(r.code, 0, `${route} (${JSON.stringify(c)}): ${r.stderr}`);
            audits.set(route, fs.readFileSync(rm, 'utf8'));
            const text = fs.statSync(out).isDirectory()
              ? shardFiles.map((f) => fs.readFileSync(path.join(out, path.basename(f)), 'utf8')).join('')
              : fs.readFileSync(out, 'utf8');
            outputs.set(route, text);
          }
          for (const route of routes) {
            assert.equal(audits.get(route), audits.get('memory'), `${route}'s --removed audit differs from dedup's in memory (${JSON.stringify(c)})`);
            assert.equal(outputs.get(route), outputs.get('memory'), `${route}'s output differs from dedup's in memory (${JSON.stringify(c)})`);
          }
          // The library: the same documents dropped, for the same kept ones.
          const lib = dedup(docs, { threshold: c.threshold, keep: c.keep as 'first', removal: c.removal as 'verified' });
          const rows = audit(path.join(dir, 'memory.removed.tsv'));
          assert.deepEqual(
            lib.removed.map((x) => [x.id, x.duplicateOf ?? '']),
            docs.filter((d) => rows.has(d.id)).map((d) => [d.id, rows.get(d.id)!.kept]),
            'the library drops what the CLI drops',
          );
          // The verified pairs (the same LSH candidates, verified exactly).
          const pr = await cliInProcess([
            'dedup',
            single,
            ...opts.filter((o, i) => !['--keep', '--removal'].includes(opts[i - 1]!) && !['--keep', '--removal'].includes(o)),
            '--output',
            'pairs',
            '-o',
            path.join(dir, 'pairs.tsv'),
          ]);
          assert.equal(pr.code, 0, pr.stderr);
          const pairs = fs.readFileSync(path.join(dir, 'pairs.tsv'), 'utf8').split('\n').filter(Boolean).map((l) => l.split('\t'));
          const byId = new Map(docs.map((d) => [d.id, d]));
          const sh = createShingler({});
          const exact = (a: string, b: string): number => jaccard(sh.set(byId.get(a)!.text), sh.set(byId.get(b)!.text));
          if (c.removal === 'verified') {
            for (const [id, r] of rows) {
              if (c.keep === 'none') {
                assert.equal(r.kept, '', `${id}: --keep none names no kept document`);
                continue;
              }
              assert.ok(!rows.has(r.kept), `${id} names ${r.kept}, which is dropped too`);
              const s = exact(id, r.kept);
              assert.ok(s >= c.threshold, `${id} dropped for ${r.kept} at Jaccard ${s} < ${c.threshold}`);
              assert.equal(r.similarity, Number(s.toFixed(6)), `${id}: the audit's similarity is the exact Jaccard`);
            }
            if (c.keep !== 'none') { for (const [a, b] of pairs) assert.ok(rows.has(a!) || rows.has(b!), `kept ${a} and ${b} are a verified pair`); }
          } else {
            // One survivor per component of the verified pairs: every member of a component but one is dropped.
            const parent = new Map<string, string>();
            const find = (x: string): string => {
              while (parent.has(x) && parent.get(x) !== x) x = parent.get(x)!;
              return x;
            };
            for (const [a, b] of pairs) {
              for (const x of [a!, b!]) if (!parent.has(x)) parent.set(x, x);
              const ra = find(a!);
              const rb = find(b!);
              if (ra !== rb) parent.set(ra, rb);
            }
            const size = new Map<string, number>();
            for (const x of parent.keys()) size.set(find(x), (size.get(find(x)) ?? 0) + 1);
            const want = [...size.values()].reduce((a, s) => a + s - (c.keep === 'none' ? 0 : 1), 0);
            assert.equal(rows.size, want, 'the cluster rule drops all but one of each component');
            if (c.keep !== 'none') {
              for (const [id, r] of rows)
                assert.equal(find(id), find(r.kept), `${id} and its survivor ${r.kept} are in one component`);
            }
          }
        },
      ),
      { numRuns: REQUIRE_ALL ? 8 : 5, seed: 4747 },
    );
  });
});
