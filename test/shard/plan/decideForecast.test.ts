/**
 * Decide's memory forecast after link (src/shard/plan/decideForecast.ts): on a job with a planted
 * chain component at a fixed seed, the link markers' counts are each decide task's input exactly
 * (its clustered documents as decide counts them, every verified pair once), the largest forecast
 * is the chain's task, its bytes follow the per-row costs, and a plan whose --task-memory the
 * forecast passes is warned of on stderr (naming task, forecast and budget) while the job goes on;
 * past the spill limit a task's forecast holds only the limit's pairs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tmpDir, neardup } from '../../cliUtil.js';
import { splitmix32 } from '../../../src/hash/mix.js';
import { DECIDE_BYTES, decidePeak, decideWarnings, forecastDecide, largestDecide, type LinkCounts } from '../../../src/shard/plan/decideForecast.js';

/** A chain of `giant` near duplicates (each one word from the last), small chains, unrelated documents and a few copies, shuffled. */
function chainCorpus(seed: number, giant: number): { id: string; text: string }[] {
  const rnd = splitmix32(seed);
  const word = (): string => `w${rnd() % 8000}`;
  const docs: { id: string; text: string }[] = [];
  const chain = (name: string, length: number): void => {
    let words = Array.from({ length: 60 }, word);
    for (let i = 0; i < length; i++) {
      docs.push({ id: `${name}-${i}`, text: words.join(' ') });
      if (rnd() % 11 === 0) docs.push({ id: `${name}-${i}-copy`, text: words.join(' ') });
      words = words.slice();
      words[rnd() % words.length] = word();
    }
  };
  chain('giant', giant);
  for (let c = 0; c < 20; c++) chain(`c${c}`, 2 + (rnd() % 5));
  for (let i = 0; i < 150; i++) docs.push({ id: `s${i}`, text: Array.from({ length: 60 }, word).join(' ') });
  for (let i = docs.length - 1; i > 0; i--) {
    const j = rnd() % (i + 1);
    [docs[i], docs[j]] = [docs[j]!, docs[i]!];
  }
  return docs;
}

describe('decide forecast', () => {
  let dir: string;
  let shards: string;
  const SHARDS = 4;
  before(() => {
    dir = tmpDir();
    shards = path.join(dir, 'shards');
    fs.mkdirSync(shards);
    const docs = chainCorpus(47, 400);
    for (let s = 0; s < SHARDS; s++)
      fs.writeFileSync(
        path.join(shards, `part-${s}.jsonl`),
        docs.filter((_, i) => i % SHARDS === s).map((d) => JSON.stringify(d) + '\n').join(''),
      );
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const common = ['--id-field', 'id', '--threshold', '0.9', '-k', '4', '--output', 'clusters', '--removal', 'cluster'];
  const marker = <T>(work: string, stage: string, t: number): T =>
    JSON.parse(fs.readFileSync(path.join(work, stage, String(t).padStart(5, '0'), '_SUCCESS.json'), 'utf8')) as T;

  it("is each decide task's input exactly, the chain's task the largest, at 50 MB + 72 B a pair + 250 B a document; past the plan's --task-memory, the decide stage warns and runs", () => {
    const work = path.join(dir, 'w');
    const plan = neardup(['job', 'plan', shards, ...common, '--task-bytes', '1', '--work-dir', work, '--estimate', '--task-memory', '50', '-q'], { cwd: dir });
    assert.equal(plan.code, 0, plan.stderr);
    const job = JSON.parse(fs.readFileSync(path.join(work, 'job.json'), 'utf8')) as { taskMemoryBudget?: number; groups: number[] };
    assert.equal(job.taskMemoryBudget, 50 * 2 ** 20);
    const G = job.groups.length - 1;
    assert.equal(G, SHARDS);
    for (const s of ['sign', 'join', 'route', 'verify', 'link']) assert.equal(neardup(['stage', s, '--work-dir', work, '--all'], { cwd: dir }).code, 0);
    const links = Array.from({ length: G }, (_, t) => marker<LinkCounts>(work, 'link', t));
    const f = forecastDecide(links, G)!;
    assert.ok(f);
    const decided = neardup(['stage', 'decide', '--work-dir', work, '--all'], { cwd: dir });
    assert.equal(decided.code, 0, decided.stderr);
    // Every verified pair goes to one decide task; each task's documents are those it clusters.
    const verified = Array.from({ length: G }, (_, t) => marker<{ pairs: number }>(work, 'verify', t).pairs).reduce((a, b) => a + b, 0);
    assert.equal(f.reduce((a, x) => a + x.pairs, 0), verified);
    for (const x of f) assert.equal(x.docs, marker<{ docsInClusters: number }>(work, 'decide', x.task).docsInClusters, `decide task ${x.task}`);
    for (const x of f) assert.equal(x.bytes, DECIDE_BYTES.base + 72 * x.pairs + 250 * x.docs);
    // The chain (400 documents, with its copies) is in one component: its task holds the most.
    const top = largestDecide(f)!;
    assert.ok(top.docs >= 400, `largest decide task: ${JSON.stringify(top)}`);
    assert.equal(top.bytes, decidePeak(top.pairs, top.docs));
    process.stdout.write(`# forecast: ${f.map((x) => `task ${x.task} ${x.pairs} pairs ${x.docs} docs ${x.bytes} B`).join('; ')}\n`);
    // Warned of: every task with clustered documents passes a budget of 50 MB (a task process's own size), named with forecast and budget.
    const over = f.filter((x) => x.docs > 0 || x.pairs > 0);
    assert.ok(over.length > 0);
    assert.deepEqual(decideWarnings(f, 50 * 2 ** 20).length, over.length);
    for (const x of over)
      assert.match(
        decided.stderr,
        new RegExp(
          `warning: decide task ${x.task} is forecast to peak at ${Math.round(x.bytes / 2 ** 20)} MB \\(${x.pairs.toLocaleString('en-US')} verified pairs, ${
            x.docs.toLocaleString('en-US')
          } clustered documents\\), above the task-memory budget of 50 MB`,
        ),
      );
    // job status shows the largest task's forecast.
    const st = neardup(['job', 'status', '--work-dir', work], { cwd: dir });
    assert.equal(st.code, 0, st.stderr);
    assert.match(
      st.stdout,
      new RegExp(
        `forecast {4}decide: task ${top.task} peaks at ~.* \\(${top.pairs.toLocaleString('en-US')} verified pairs, ${
          top.docs.toLocaleString('en-US')
        } clustered documents: the largest decide task, above the plan's --task-memory`,
      ),
    );
    const js = JSON.parse(neardup(['job', 'status', '--work-dir', work, '--json'], { cwd: dir }).stdout) as {
      decideForecast: { task: number; bytes: number; budget: number };
    };
    assert.deepEqual([js.decideForecast.task, js.decideForecast.bytes, js.decideForecast.budget], [top.task, top.bytes, 50 * 2 ** 20]);
  });

  it("holds a task's pairs only up to the spill limit: past it, the forecast stops growing with the pairs and says the task spills", () => {
    const f = forecastDecide([{ decide: [0, 1000, 50, 1, 5000, 50] }], 2, 2000)!;
    assert.deepEqual(f.map((x) => [x.pairs, x.bytes, x.spills]), [
      [1000, decidePeak(1000, 50), undefined],
      [5000, decidePeak(2000, 50), true],
    ]);
    assert.equal(decidePeak(10 ** 9, 50, 2000), decidePeak(2000, 50));
    assert.match(decideWarnings(f, 1)[1]!, /its pairs are spilled, but each component's documents are held whole$/);
    assert.match(decideWarnings(f, 1)[0]!, /its components are decided whole$/);
  });

  it('waits for every link task', () => {
    assert.equal(forecastDecide([{ decide: [0, 3, 4] }, undefined], 2), undefined);
    assert.deepEqual(forecastDecide([{ decide: [0, 3, 4, 1, 0, 2] }, { decide: [1, 5, 6] }], 2)!.map((x) => [x.task, x.pairs, x.docs]), [[0, 3, 4], [1, 5, 8]]);
  });
});
