/**
 * A job directory belongs to one plan and one input (#30): racing submissions, a removed or damaged
 * plan, shards changed between stages, repeated ids across shards, and every file of a finished
 * job truncated or altered. Each case ends in the right answer or an exit-2 error naming the file,
 * never another answer with exit 0.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { tmpDir } from '../../cliUtil.js';
import { cliInProcess } from '../../helpers/inProcessCli.js';
import { jsonl, plantedDocs, writeShards, type Doc } from '../../helpers/shards.js';
import { neardupAsync } from '../../helpers/procs.js';
import { removeCommand, STAGES, type StageName } from '../../../src/shard/files/job.js';
import { CLAIM_FILE } from '../../../src/io/write/outClaim.js';

/** Puts `outDir` in the state of the job planned in `work` still writing there: its claim held, no `_SUCCESS`. */
function holdClaim(work: string, outDir: string): void {
  const plan = (JSON.parse(fs.readFileSync(path.join(work, 'job.json'), 'utf8')) as { id: string }).id;
  fs.rmSync(path.join(outDir, '_SUCCESS'), { force: true });
  fs.rmSync(path.join(work, 'output.json'), { force: true });
  fs.writeFileSync(path.join(outDir, CLAIM_FILE), `${JSON.stringify({ workDir: work, plan, at: new Date().toISOString() })}\n`);
}

describe('job directories: one plan, one input, no torn files', () => {
  let dir: string;
  let docs: Doc[];
  let shards: string;
  const want: Record<string, string> = {};

  /** dedup's pairs of the concatenation at a threshold. */
  async function single(threshold: string, extra: string[] = []): Promise<string> {
    const out = path.join(dir, `single-${threshold}-${extra.join('')}.tsv`);
    const r = await cliInProcess(['dedup', path.join(dir, 'all.jsonl'), '--id-field', 'id', '--threshold', threshold, ...extra, '--out', out, '-q']);
    assert.equal(r.code, 0, r.stderr);
    return fs.readFileSync(out, 'utf8');
  }

  before(async () => {
    dir = tmpDir();
    docs = plantedDocs(600, 0.4, 5);
    shards = path.join(dir, 'shards');
    await writeShards(shards, docs, 6, ['jsonl']);
    fs.writeFileSync(path.join(dir, 'all.jsonl'), jsonl(docs));
    want['0.8'] = await single('0.8');
    want['0.5'] = await single('0.5');
    assert.notEqual(want['0.8'], want['0.5']);
    assert.ok(want['0.8']!.split('\n').length > 50);
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('two submissions with different options racing on one new --work-dir: exactly one runs, the other is refused', async () => {
    for (let round = 0; round < 8; round++) {
      const work = path.join(dir, `race${round}`);
      const runs = await Promise.all(
        ['0.8', '0.5'].map((t) =>
          neardupAsync([
            'job',
            'dedup',
            shards,
            '--local',
            '--work-dir',
            work,
            '--id-field',
            'id',
            '--threshold',
            t,
            '--out',
            path.join(dir, `race${round}-${t}.tsv`),
            '-q',
          ], dir)
        ),
      );
      const ok = runs.map((r, i) => [r, ['0.8', '0.5'][i]!] as const).filter(([r]) => r.code === 0);
      assert.equal(ok.length, 1, `round ${round}: ${runs.map((r) => `${r.code} ${r.stderr}`).join(' | ')}`);
      const refused = runs.find((r) => r.code !== 0)!;
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /already holds a different job/);
      const [, t] = ok[0]!;
      assert.equal(fs.readFileSync(path.join(dir, `race${round}-${t}.tsv`), 'utf8'), want[t], `round ${round}: the job that ran gives dedup's answer at ${t}`);
    }
  });

  it('a removed or damaged job.json never lets old tasks count; the refusal says what to do', async () => {
    const work = path.join(dir, 'removed');
    const first = await cliInProcess(['job', 'dedup', shards, '--local', '--work-dir', work, '--id-field', 'id', '--out', path.join(dir, 'r1.tsv'), '-q']);
    assert.equal(first.code, 0, first.stderr);
    fs.rmSync(path.join(work, 'job.json'));
    const again = await cliInProcess([
      'job',
      'dedup',
      shards,
      '--local',
      '--work-dir',
      work,
      '--id-field',
      'id',
      '--threshold',
      '0.5',
      '--out',
      path.join(dir, 'r2.tsv'),
      '-q',
    ]);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /holds .* but no job\.json: .*use a new --work-dir, or remove the whole directory \(rm -r /);
    // A work dir in object storage is removed with the AWS CLI, not rm.
    for (const w of ['s3://b/jobs/x', 's3://b/jobs/x/', 's3://b']) assert.equal(removeCommand(w), `aws s3 rm --recursive ${w.replace(/\/*$/, '/')}`);
    assert.ok(!fs.existsSync(path.join(dir, 'r2.tsv')));
    // A damaged plan: cut, not JSON, a field of the wrong type.
    const work2 = path.join(dir, 'damaged');
    assert.equal((await cliInProcess(['job', 'plan', shards, '--work-dir', work2, '--id-field', 'id', '-q'])).code, 0);
    const good = fs.readFileSync(path.join(work2, 'job.json'), 'utf8');
    for (const bad of [good.slice(0, good.length / 2), 'null', good.replace(/"partitions": \d+/, '"partitions": "six"'), '']) {
      fs.writeFileSync(path.join(work2, 'job.json'), bad);
      for (
        const args of [['stage', 'sign', '--work-dir', work2, '--all'], ['job', 'report', '--work-dir', work2], ['job', 'status', '--work-dir', work2], [
          'job',
          'dedup',
          shards,
          '--local',
          '--work-dir',
          work2,
          '--id-field',
          'id',
          '-q',
        ]]
      ) {
        const r = await cliInProcess(args);
        assert.equal(r.code, 2, `${args[0]} ${args[1]}: ${r.stderr}`);
        assert.match(r.stderr, /job\.json is damaged .*remove the directory \(rm -r /, `${args.join(' ')}`);
      }
    }
  });

  it('a shard rewritten, appended to or touched after planning is an input error naming it', async () => {
    const copy = path.join(dir, 'changing');
    fs.cpSync(shards, copy, { recursive: true });
    const victim = path.join(copy, 'part-0002.jsonl');
    const original = fs.readFileSync(victim, 'utf8');
    // Rewritten after sign with the same record count: the next stage must refuse, not mix two
    // versions (route, for plain shards, which have no gather tasks; gather, for the others).
    for (const [name, next] of [['jsonl', 'route'], ['jsonl.gz', 'gather']] as const) {
      const c = path.join(dir, `changing-${name}`);
      fs.mkdirSync(c);
      const v = path.join(c, `part-0002.${name}`);
      const write = (text: string): void => fs.writeFileSync(v, name === 'jsonl' ? text : zlib.gzipSync(text));
      write(original);
      fs.copyFileSync(path.join(copy, 'part-0001.jsonl'), path.join(c, 'part-0001.jsonl'));
      const work = path.join(dir, `w-rewrite-${name}`);
      assert.equal((await cliInProcess(['job', 'plan', c, '--work-dir', work, '--id-field', 'id', '-q'])).code, 0);
      assert.equal((await cliInProcess(['stage', 'sign', '--work-dir', work, '--all'])).code, 0);
      assert.equal((await cliInProcess(['stage', 'join', '--work-dir', work, '--all'])).code, 0);
      if (next === 'gather') assert.equal((await cliInProcess(['stage', 'route', '--work-dir', work, '--all'])).code, 0);
      write(original.replace(/"text":"(\w)/g, '"text":"$1$1'));
      const g = await cliInProcess(['stage', next, '--work-dir', work, '--all']);
      assert.equal(g.code, 2, `${name}: ${g.stderr}`);
      assert.ok(g.stderr.includes(`${v}: changed since the job`), g.stderr);
    }
    // Appended to, then the same command submitted again: refused, never yesterday's answer.
    fs.writeFileSync(victim, original);
    const work2 = path.join(dir, 'w-append');
    const args = ['job', 'dedup', copy, '--local', '--work-dir', work2, '--id-field', 'id', '--out', path.join(dir, 'ap.tsv'), '-q'];
    assert.equal((await cliInProcess(args)).code, 0);
    fs.appendFileSync(victim, jsonl([{ id: 'new1', text: docs[0]!.text }]));
    const r = await cliInProcess(args);
    assert.equal(r.code, 2, r.stderr);
    assert.ok(r.stderr.includes(`${victim}: changed since the job`) && r.stderr.includes('bytes when the job was planned'), r.stderr);
    // Same bytes, new modification time: still a different file as far as the plan knows.
    fs.writeFileSync(victim, original);
    const t = await cliInProcess(args);
    assert.equal(t.code, 2, t.stderr);
    assert.match(t.stderr, /modified since the job was planned|bytes when the job was planned/);
  });

  it('repeated ids across shards are refused as dedup refuses them, naming both shards and lines', async () => {
    const copy = path.join(dir, 'dupids');
    fs.cpSync(shards, copy, { recursive: true });
    const f = path.join(copy, 'part-0004.jsonl');
    const lines = fs.readFileSync(f, 'utf8').split('\n');
    lines[3] = JSON.stringify({ id: docs[1]!.id, text: 'some other text entirely, not a copy of anything at all' });
    fs.writeFileSync(f, lines.join('\n'));
    const d = await cliInProcess(['dedup', copy, '--id-field', 'id', '-q', '--out', path.join(dir, 'dup.tsv')]);
    assert.equal(d.code, 2);
    const j = await cliInProcess([
      'job',
      'dedup',
      copy,
      '--local',
      '--work-dir',
      path.join(dir, 'w-dup'),
      '--id-field',
      'id',
      '--output',
      'dedup',
      '--out-dir',
      path.join(dir, 'dup-out'),
      '-q',
    ]);
    assert.equal(j.code, 2, j.stderr);
    assert.ok(j.stderr.includes(`${f}:4: duplicate id "${docs[1]!.id}" (first on ${path.join(copy, 'part-0000.jsonl')}:2)`), j.stderr);
    assert.ok(!fs.existsSync(path.join(dir, 'dup-out', '_SUCCESS')));
  });

  it('ids repeated or not, in any spelling (escapes, non-ASCII, numbers): the job refuses exactly when dedup does, naming a real repeat (property)', async () => {
    // Ids from a small pool, so repeats happen: within a shard, across shards, or none at all.
    const pool = ['a', 'b', 'A', 'é', 'e\u0301', 'tab\there', 'q"x', '7', '07', 'x/y', '😀', ' a'];
    let k = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uniqueArray(fc.constantFrom(...pool), { minLength: 1, maxLength: 6 }), { minLength: 2, maxLength: 3 }),
        fc.boolean(),
        async (shardIds, numeric) => {
          const base = path.join(dir, `ids-${k++}`);
          fs.mkdirSync(base, { recursive: true });
          const files = shardIds.map((ids, s) => {
            const f = path.join(base, `part-${s}.jsonl`);
            // An id of digits may be written as a JSON number: its literal is its spelling.
            fs.writeFileSync(
              f,
              ids.map((
                id,
                i,
              ) => (numeric && /^[1-9][0-9]*$/.test(id) ? `{"id":${id},"text":"doc ${s} ${i} words"}` : JSON.stringify({ id, text: `doc ${s} ${i} words` })))
                .join('\n') + '\n',
            );
            return f;
          });
          const all = shardIds.flatMap((ids, s) => ids.map((id, i) => ({ id, at: `${files[s]!}:${i + 1}` })));
          const repeated = new Set(all.map((x) => x.id)).size < all.length;
          const d = await cliInProcess(['dedup', ...files, '--id-field', 'id', '-q', '--out', path.join(base, 'd.tsv')]);
          const j = await cliInProcess([
            'job',
            'dedup',
            ...files,
            '--local',
            '--work-dir',
            path.join(base, 'w'),
            '--id-field',
            'id',
            '--out',
            path.join(base, 'j.tsv'),
            '-q',
          ]);
          assert.equal(d.code, repeated ? 2 : 0, d.stderr);
          assert.equal(j.code, d.code, j.stderr);
          if (!repeated) return;
          const m = /^neardup: (.*):(\d+): duplicate id "(.*)" \(first on (?:line (\d+)|(.*):(\d+))\); ids must be unique$/m.exec(j.stderr);
          assert.ok(m, j.stderr);
          const at = `${m[1]!}:${m[2]!}`;
          const first = m[4] !== undefined ? `${m[1]!}:${m[4]}` : `${m[5]!}:${m[6]!}`;
          const here = all.findIndex((x) => x.at === at);
          const there = all.findIndex((x) => x.at === first);
          assert.ok(here >= 0 && there >= 0 && there < here, j.stderr);
          assert.equal(all[here]!.id, all[there]!.id);
          assert.equal(m[3], all[here]!.id);
          assert.equal(all.findIndex((x) => x.id === all[here]!.id), there, "first on: the id's first place");
        },
      ),
      { numRuns: 25, seed: 36 },
    );
  });

  it('every file of a finished job, truncated or altered, is an error naming it, or is not read and the answer is unchanged', async () => {
    const base = path.join(dir, 'w-damage');
    const args = (
      work: string,
      out: string,
      mode: string,
    ): string[] => [
      'job',
      'dedup',
      shards,
      '--local',
      '--work-dir',
      work,
      '--id-field',
      'id',
      '--task-bytes',
      '30000',
      '--output',
      mode,
      ...(mode === 'dedup' ? ['--out-dir', out] : ['--out', out]),
      '-q',
    ];
    for (const mode of ['pairs', 'clusters', 'dedup']) {
      const work = `${base}-${mode}`;
      const ref = path.join(dir, `damage-ref-${mode}`);
      assert.equal((await cliInProcess(args(work, ref, mode))).code, 0);
      const files: string[] = [];
      for (const stage of fs.readdirSync(work)) {
        const sd = path.join(work, stage);
        if (!fs.statSync(sd).isDirectory()) continue;
        // The link stage's rounds hold task directories of their own (link/r0000/00000).
        const tasks = fs.readdirSync(sd).flatMap((t) => (/^r\d+$/.test(t) ? fs.readdirSync(path.join(sd, t)).map((u) => path.join(t, u)) : [t]));
        for (const task of tasks) for (const f of fs.readdirSync(path.join(sd, task))) files.push(path.join(stage, task, f));
      }
      assert.ok(files.length > 20, `${files.length} files`);
      // Every kind of file (stage, round or not, name), cut in the first task holding one and flipped
      // in the last: the other tasks' files of a kind are read by the same code (every file took over
      // 300 s; both damages in both tasks, 230 s). A kind held by one task gets both damages.
      const kinds = new Map<string, string[]>();
      for (const f of files.sort()) {
        const [stage, ...rest] = f.split(path.sep);
        const kind = [stage, rest.length === 3 ? 'round' : 'task', rest[rest.length - 1]].join('/');
        kinds.set(kind, [...(kinds.get(kind) ?? []), f]);
      }
      const chosen = [...kinds.values()].flatMap((
        fs_,
      ): [string, 'cut' | 'flip'][] => (fs_.length === 1 ? [[fs_[0]!, 'cut'], [fs_[0]!, 'flip']] : [[fs_[0]!, 'cut'], [fs_[fs_.length - 1]!, 'flip']]));
      const read = (
        p: string,
      ): string => (fs.statSync(p).isDirectory()
        ? fs.readdirSync(p).sort().map((f) => fs.readFileSync(path.join(p, f), 'utf8')).join('')
        : fs.readFileSync(p, 'utf8'));
      const expected = read(ref);
      let named = 0;
      for (const [i, [rel, how]] of chosen.entries()) {
        const work2 = `${work}-${i}-${how}`;
        fs.cpSync(work, work2, { recursive: true });
        const file = path.join(work2, rel);
        const bytes = fs.readFileSync(file);
        if (bytes.length === 0) continue;
        if (how === 'cut') fs.writeFileSync(file, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
        else {
          const at = Math.floor(bytes.length * 0.7);
          bytes[at] = bytes[at]! ^ 0x20;
          fs.writeFileSync(file, bytes);
        }
        // The damaged task's stage is done; every later stage runs again and reads it.
        const stage = rel.split(path.sep)[0]!;
        const later = STAGES.slice(STAGES.indexOf(stage as StageName) + 1);
        for (const s of later) fs.rmSync(path.join(work2, s), { recursive: true, force: true });
        // The later stages run as array stages in this process (`stage S --all`, then `job report`):
        // the same readers as `job dedup --local`, without starting a task process per stage for
        // each of the ~70 damaged jobs. The output directory of --output dedup is part of the plan:
        // its shards go to the same one again.
        const out = mode === 'dedup' ? ref : path.join(dir, `damage-out-${mode}-${i}-${how}`);
        // Each copy is the job resumed while it holds its claim on that directory (src/io/write/outClaim.ts):
        // the copies share one plan id, and each rerun's _SUCCESS supersedes the one the others recorded.
        if (mode === 'dedup') holdClaim(work2, ref);
        let r = { code: 0, stderr: '' };
        for (const s of later) {
          if (s === 'filter' && mode !== 'dedup') break;
          r = await cliInProcess(['stage', s, '--work-dir', work2, '--all']);
          if (r.code !== 0) break;
        }
        if (r.code === 0) r = await cliInProcess(['job', 'report', '--work-dir', work2, ...(mode === 'dedup' ? [] : ['--out', out]), '-q']);
        const what = `${mode}: ${rel} ${how}`;
        assert.notEqual(r.code, 1, `${what}: ${r.stderr}`);
        if (r.code === 2) {
          assert.ok(r.stderr.includes(file), `${what}: the error names the file: ${r.stderr}`);
          named++;
        } else assert.equal(read(out), expected, `${what}: exit 0 with another answer`);
        fs.rmSync(work2, { recursive: true, force: true });
      }
      assert.ok(named > chosen.length / 2, `${mode}: most damage is read and named (${named} of ${chosen.length})`);
    }
  });
});
