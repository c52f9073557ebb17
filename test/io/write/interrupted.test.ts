/**
 * Issue 16 item 7: a `neardup dedup` child killed by SIGTERM or SIGINT while it writes its output
 * removes its hidden temp file and leaves no output that looks complete (the atomic writers of
 * io/write/output.ts, through the CLI's signal handling).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tmpDir as newTmpDir } from '../../cliUtil.js';
import { neardupChild } from '../../helpers/procs.js';

const cleanup: (() => void)[] = [];
after(() => {
  for (const f of cleanup.reverse()) f();
});
function tmpDir(): string {
  const d = newTmpDir();
  cleanup.push(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`item 7: ${signal} during the write removes the hidden temp file`, async () => {
    const dir = tmpDir();
    const f = path.join(dir, 'big.txt');
    // Many short distinct lines: signing is quick, the annotated output is large.
    const lines: string[] = [];
    for (let i = 0; i < 400000; i++) lines.push(`line ${i} ${(i * 2654435761) % 1000003} words ${i % 977} more ${i % 131}`);
    fs.writeFileSync(f, lines.join('\n') + '\n');
    const out = path.join(dir, 'out.txt');
    const run = neardupChild(['dedup', f, '--output', 'annotate', '-o', out, '--quiet']);
    let tmpSeen: string | undefined;
    for (let i = 0; i < 20000 && !tmpSeen && run.child.exitCode === null; i++) {
      tmpSeen = fs.readdirSync(dir).find((n) => n.startsWith('.out.txt.') && n.endsWith('.tmp'));
      if (!tmpSeen) await new Promise((r) => setTimeout(r, 2));
    }
    assert.ok(tmpSeen, 'the temp file appeared while writing');
    run.child.kill(signal);
    const res = await run.done;
    assert.equal(res.signal, signal, `died of ${signal} (code ${res.code}, ${res.stderr})`);
    assert.deepEqual(fs.readdirSync(dir).filter((n) => n.endsWith('.tmp')), [], 'no temp file left');
    assert.ok(!fs.existsSync(out), 'no output pretending to be complete');
  });
}
