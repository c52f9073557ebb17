/**
 * Decide out of core, end to end: a job whose decide tasks are forced to spill their verified pairs
 * (the `decideSpillRows` fault hook, buckets of a few rows) over a corpus with one giant chain component (cut
 * across every shard group, with exact copies) gives `neardup dedup`'s bytes on every output, both
 * removal rules and several keep policies, and with `--against`, and its summary; every decide task says it spilled, and
 * no spill file is left in a committed task.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tmpDir, neardup } from '../../cliUtil.js';
import { faultEnv } from '../../helpers/faults.js';
import { giantChainCorpus } from '../../helpers/shards.js';

describe('decide out of core', () => {
  let dir: string;
  let shards: string;
  let corpus: string;
  let ref: string;
  const SHARDS = 5;
  before(() => {
    dir = tmpDir();
    const docs = giantChainCorpus(11, 300, { chains: 20, singles: 100 });
    shards = path.join(dir, 'shards');
    fs.mkdirSync(shards);
    for (let s = 0; s < SHARDS; s++)
      fs.writeFileSync(
        path.join(shards, `part-${s}.jsonl`),
        docs.filter((_, i) => i % SHARDS === s).map((d) => JSON.stringify(d) + '\n').join(''),
      );
    // With --against: the first shard is the reference, the others the corpus.
    [corpus, ref] = [path.join(dir, 'corpus'), path.join(dir, 'ref')];
    fs.mkdirSync(corpus);
    fs.mkdirSync(ref);
    fs.copyFileSync(path.join(shards, 'part-0.jsonl'), path.join(ref, 'part-0.jsonl'));
    for (let s = 1; s < SHARDS; s++) fs.copyFileSync(path.join(shards, `part-${s}.jsonl`), path.join(corpus, `part-${s}.jsonl`));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const common = ['--id-field', 'id', '--threshold', '0.85', '-k', '3'];
  const read = (
    p: string,
  ): string => (fs.statSync(p).isDirectory()
    ? fs.readdirSync(p).sort().map((f) => `${f}\n${fs.readFileSync(path.join(p, f), 'utf8')}`).join('')
    : fs.readFileSync(p, 'utf8'));
  // Output, removal rule, keep policy, bucket rows, task processes, --against. One combination runs
  // its decide tasks on task processes (2: the fault hook reaches them through their environment),
  // the others in the job's own process (1): the spill is the same code in either, and a task process
  // started per stage cost ~6 of a run's 7 s of CPU here. Task processes over every stage are job-local's subject.
  const combos = [
    ['clusters', 'verified', 'first', '3', '1'],
    ['dedup', 'verified', 'max:score', '1', '2'],
    ['dedup', 'cluster', 'first', '5', '1'],
    ['annotate', 'cluster', 'longest', '2', '1'],
    ['annotate', 'verified', 'min:score', '4', '1'],
    ['pairs', 'verified', 'first', '3', '1'],
    ['dedup', 'verified', 'first', '2', '1', 'against'],
  ] as const;
  for (const [mode, rule, keep, rows, processes, against] of combos) {
    it(`gives dedup's bytes: --output ${mode} --removal ${rule} --keep ${keep}${against ? ' --against' : ''}, buckets of ${rows} rows, ${processes} task process(es)`, () => {
      const tag = `${mode}-${rule}-${keep.replace(':', '')}${against ? '-against' : ''}`;
      const opts = [...common, '--output', mode, '--removal', rule, '--keep', keep, ...(against ? ['--against', ref] : [])];
      const input = against ? corpus : shards;
      const file = mode === 'clusters' || mode === 'pairs';
      const out = (
        who: string,
      ): string[] => (file
        ? ['-o', path.join(dir, `${who}-${tag}.txt`)]
        : ['--out-dir', path.join(dir, `${who}-${tag}`), ...(mode === 'dedup' ? ['--removed', path.join(dir, `${who}-${tag}.tsv`)] : [])]);
      const d = neardup(['dedup', input, ...opts, ...out('one'), '--json'], { cwd: dir });
      assert.equal(d.code, 0, d.stderr);
      const work = path.join(dir, `w-${tag}`);
      const j = neardup(
        ['job', 'dedup', input, ...opts, ...out('job'), '--local', '--processes', processes, '--task-bytes', '1', '--work-dir', work, '--json'],
        {
          cwd: dir,
          env: faultEnv({ decideSpillRows: Number(rows) }),
        },
      );
      assert.equal(j.code, 0, j.stderr);
      for (const x of file ? [`-${tag}.txt`] : [`-${tag}`, ...(mode === 'dedup' ? [`-${tag}.tsv`] : [])]) {
        const [one, job] = [read(path.join(dir, `one${x}`)), read(path.join(dir, `job${x}`))];
        assert.ok(one === job, `${x}: the job's bytes are dedup's`);
      }
      const [ds, js] = [JSON.parse(d.stdout), JSON.parse(j.stdout)];
      // dedup's summaries of the pairs output and of --against lack counts a job's have: compared where both have them.
      if (mode !== 'pairs' && !against) {
        assert.deepEqual(js.removal, ds.removal);
        assert.equal(js.clusters, ds.clusters);
        assert.equal(js.duplicates, ds.duplicates);
      }
      // Every decide task with pairs spilled them (over `rows` pairs), and left no spill file.
      const tasks = fs.readdirSync(path.join(work, 'decide')).filter((t) => /^\d+$/.test(t));
      let spilled = 0;
      for (const t of tasks) {
        const m = JSON.parse(fs.readFileSync(path.join(work, 'decide', t, '_SUCCESS.json'), 'utf8')) as { spilled?: number };
        spilled += m.spilled ?? 0;
        assert.ok(!fs.existsSync(path.join(work, 'decide', t, 'spill')));
      }
      assert.ok(spilled > (against ? 20 : 300), `${spilled} pairs spilled`);
    });
  }
});
