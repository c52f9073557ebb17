/**
 * src/shard/workdir/workDir.ts: `job clean --all` removes what the job wrote in its work dir (its plan and
 * stage directories) and nothing else. Drawn over where outputs can sit in the work dir (`--out`,
 * `--removed`, `--out-dir`, a file of the user's, a directory of the user's), for a job run to its end
 * and for a plan alone: every one of them stays, byte for byte, and no plan or stage directory is left.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tmpDir } from '../../cliUtil.js';
import { cliInProcess } from '../../helpers/inProcessCli.js';
import { isJobEntry } from '../../../src/shard/files/job.js';
import { CLAIM_FILE } from '../../../src/io/write/outClaim.js';

function doc(id: string, n: number): string {
  return JSON.stringify({ id, text: `a flat near the station number ${n} with a small garden and a view ${n}` }) + '\n';
}

/** Every file below `dir`, relative, with its bytes. */
function tree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) out.set(path.relative(dir, path.join(e.parentPath, e.name)), fs.readFileSync(path.join(e.parentPath, e.name), 'utf8'));
  }
  return out;
}

describe('job clean --all', () => {
  // Outputs and other files a user may keep inside the work dir J.
  const PLACES: { name: string; run: (J: string) => string[]; report?: (J: string) => string[]; user?: (J: string) => void }[] = [
    { name: 'job report --out J/pairs.tsv', run: () => ['--output', 'pairs'], report: (J) => ['--out', path.join(J, 'pairs.tsv')] },
    { name: 'job dedup --out J/pairs.tsv', run: (J) => ['--output', 'pairs', '--out', path.join(J, 'pairs.tsv')] },
    {
      name: '--out-dir J/clean --removed J/removed.tsv',
      run: (J) => ['--output', 'dedup', '--out-dir', path.join(J, 'clean'), '--removed', path.join(J, 'removed.tsv')],
    },
    { name: '--out-dir J/clean/x (nested)', run: (J) => ['--output', 'annotate', '--out-dir', path.join(J, 'clean', 'x')] },
    {
      name: "a user's file and directory in J",
      run: () => ['--output', 'clusters'],
      user: (
        J,
      ) => (fs.writeFileSync(path.join(J, 'notes.txt'), 'mine\n'),
        fs.mkdirSync(path.join(J, 'mine')),
        fs.writeFileSync(path.join(J, 'mine', 'a.jsonl'), doc('u', 1))),
    },
  ];

  for (const place of PLACES) {
    for (const how of ['job dedup --local', 'job plan'] as const) {
      if (how === 'job plan' && (place.report || place.name.startsWith('job dedup'))) continue;
      it(`${how}, ${place.name}: only the plan and stage directories go`, async () => {
        const root = fs.realpathSync(tmpDir());
        const input = path.join(root, 'in');
        fs.mkdirSync(input);
        for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(input, `p${i}.jsonl`), doc(`a${i}`, i) + doc(`b${i}`, i));
        const J = path.join(root, 'J');
        // An existing, empty work dir (--removed must name a file in an existing directory).
        fs.mkdirSync(J);
        const args = how === 'job plan' ? ['job', 'plan'] : ['job', 'dedup', '--local'];
        const r = await cliInProcess([...args, input, '--id-field', 'id', '--work-dir', J, ...place.run(J), '-q']);
        assert.equal(r.code, 0, r.stderr);
        if (place.report) {
          const rep = await cliInProcess(['job', 'report', '--work-dir', J, ...place.report(J), '-q']);
          assert.equal(rep.code, 0, rep.stderr);
        }
        place.user?.(J);
        const jobEntries = fs.readdirSync(J).filter(isJobEntry);
        assert.ok(jobEntries.includes('job.json'), 'the job wrote its plan');
        // The job's claim on its --out-dir (an unfinished job's) is the job's own: it goes too.
        const claim = [...tree(J).keys()].find((rel) => path.basename(rel) === CLAIM_FILE);
        const keep = new Map([...tree(J)].filter(([rel]) => !jobEntries.includes(rel.split(path.sep)[0]!) && rel !== claim));
        assert.ok(how === 'job plan' || keep.size > 0, 'outputs inside J');
        const c = await cliInProcess(['job', 'clean', '--work-dir', J, '--all', '-q']);
        assert.equal(c.code, 0, c.stderr);
        assert.deepEqual(tree(J), keep, 'every output and user file stays, byte for byte');
        for (const n of jobEntries) assert.ok(!fs.existsSync(path.join(J, n)), `${n} removed`);
        if (claim) assert.ok(!fs.existsSync(path.join(J, claim)), 'the claim is released');
        // Nothing of the job's own left: the work dir goes with it when nothing else is there.
        if (keep.size === 0) assert.ok(!fs.existsSync(J));
      });
    }
  }
});
