/**
 * `.ci/run`'s background jobs. A CI run forks more processes than pid_max (32768 on the CI machine),
 * and bash forgets a finished job's status once one of its own later children gets that job's pid:
 * `wait PID` on a job that ended long before then fails ("pid N is not a child of this shell"), and
 * CI failed so. Every background job goes through `in_background`, whose status lands in a file;
 * this test runs those functions as the script defines them, and holds the script to them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot, tmpDir } from '../cliUtil.js';

const script = fs.readFileSync(path.join(repoRoot, '.ci/run'), 'utf8');

/** The text of shell function `name` as `.ci/run` defines it (a one-line one, or up to its closing brace). */
function shellFunction(name: string): string {
  const lines = script.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`${name}() {`));
  assert.ok(start >= 0, `.ci/run defines ${name}`);
  if (lines[start]!.trimEnd().endsWith('}')) return lines[start]!;
  const end = lines.findIndex((l, i) => i > start && l === '}');
  return lines.slice(start, end + 1).join('\n');
}

test('.ci/run: in_background and status_of give each job its exit status, after the shell has forked many more processes', () => {
  const dir = tmpDir();
  const body = [
    'set -euo pipefail',
    `nodes=${JSON.stringify(dir)}`,
    shellFunction('in_background'),
    shellFunction('ended'),
    shellFunction('status_of'),
    'three() { echo "in a function: $1"; return 3; }',
    'in_background ok true',
    'in_background seven bash -c "echo out; exit 7" >"$nodes/seven.log" 2>&1',
    'in_background fn three x >"$nodes/fn.log" 2>&1',
    'in_background slow sleep 30',
    'in_background env env X=5 bash -c \'exit "$X"\'',
    'for i in $(seq 1 200); do /bin/true; done',
    'kill "$(cat "$nodes/slow.pid")"',
    'for j in ok seven fn slow env; do s=0; status_of "$j" || s=$?; echo "$j $s"; done',
    'cat "$nodes/seven.log" "$nodes/fn.log"',
  ].join('\n');
  const r = spawnSync('bash', ['-c', body], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'ok 0\nseven 7\nfn 3\nslow 143\nenv 5\nout\nin a function: x\n');
});

test('.ci/run: no job is put in the background nor waited for by its pid outside in_background', () => {
  const inside = shellFunction('in_background');
  const rest = script.replace(inside, '');
  const code = rest.split('\n').filter((l) => !l.trimStart().startsWith('#'));
  assert.deepEqual(
    code.filter((l) => /&\s*$/.test(l) && !/&&\s*$/.test(l)),
    [],
    'a line ending in & (a background job) outside in_background',
  );
  assert.deepEqual(
    code.filter((l) => /\bwait\b/.test(l)),
    [],
    '`wait` outside in_background',
  );
});
