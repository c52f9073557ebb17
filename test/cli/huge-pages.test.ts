/**
 * `serve` and `index` start again in place with glibc's huge-page tunable (src/cli/hugePages.ts):
 * the decision over every combination of what it reads, and a real `neardup serve` whose
 * environment (/proc/PID/environ, the same process id after the restart) has the tunable exactly
 * when this Node can restart a process in place and the machine gives huge pages on request.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HUGE_PAGES_ENV, HUGE_PAGES_TUNABLE, hugePagesWanted, startWithHugePages, type Execve, type HugePagesContext } from '../../src/cli/hugePages.js';
import { startServe } from '../helpers/procs.js';

test('huge pages are asked for a store command on Linux with glibc and a kernel that gives them, unless the user set GLIBC_TUNABLES or turned it off', () => {
  const commands = ['serve', 'index', 'dedup', 'spans', 'job', undefined];
  const envs: NodeJS.ProcessEnv[] = [{}, { GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }, { [HUGE_PAGES_ENV]: '0' }, { [HUGE_PAGES_ENV]: '1' }];
  const thps = ['always [madvise] never', '[always] madvise never', 'always madvise [never]', ''];
  let asked = 0;
  for (const command of commands)
    for (const env of envs)
      for (const platform of ['linux', 'darwin'] as const)
        for (const canExec of [true, false])
          for (const thp of thps)
            for (const glibc of ['2.36', undefined]) {
              let reads = 0;
              const c: HugePagesContext = {
                command,
                env,
                platform,
                canExec,
                thp: () => (reads++, thp),
                glibc: () => (reads++, glibc),
              };
              const want = (command === 'serve' || command === 'index')
                && platform === 'linux'
                && canExec
                && env.GLIBC_TUNABLES === undefined
                && env[HUGE_PAGES_ENV] !== '0'
                && !thp.includes('[never]')
                && thp !== ''
                && glibc !== undefined;
              assert.equal(hugePagesWanted(c), want, JSON.stringify({ command, env, platform, canExec, thp, glibc }));
              if (want) asked++;
              // The files are read only for a store command that could restart.
              if (!(command === 'serve' || command === 'index') || platform !== 'linux' || !canExec) assert.equal(reads, 0);
            }
  assert.equal(asked, 2 * 2 * 2);
});

test('a start again that fails leaves the process running as it is', () => {
  const saved = { argv: process.argv, tunables: process.env.GLIBC_TUNABLES, off: process.env[HUGE_PAGES_ENV] };
  const calls: { file: string; args: string[]; tunables: string | undefined }[] = [];
  const refusing: Execve = (file, args, env) => {
    calls.push({ file, args, tunables: env.GLIBC_TUNABLES });
    throw Object.assign(new Error('execve refused'), { code: 'EACCES' });
  };
  try {
    process.argv = [process.execPath, '/x/main.js', 'serve', '--store', 'file:/nowhere'];
    delete process.env.GLIBC_TUNABLES;
    delete process.env[HUGE_PAGES_ENV];
    assert.doesNotThrow(() => startWithHugePages(refusing));
    const thp = (() => {
      try {
        return readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8');
      } catch {
        return '';
      }
    })();
    // Asked only where the machine gives huge pages; then with this process's arguments and the tunable.
    if (/\[(madvise|always)\]/.test(thp)) {
      assert.equal(calls.length, 1);
      assert.deepEqual(calls[0], {
        file: process.execPath,
        args: [process.execPath, ...process.execArgv, '/x/main.js', 'serve', '--store', 'file:/nowhere'],
        tunables: HUGE_PAGES_TUNABLE,
      });
    } else assert.equal(calls.length, 0);
    process.argv = [process.execPath, '/x/main.js', 'dedup', 'in.tsv'];
    startWithHugePages(refusing);
    assert.ok(calls.length <= 1, 'dedup is not started again');
  } finally {
    process.argv = saved.argv;
    if (saved.tunables !== undefined) process.env.GLIBC_TUNABLES = saved.tunables;
    if (saved.off !== undefined) process.env[HUGE_PAGES_ENV] = saved.off;
  }
});

/** The environment of process `pid`, as the kernel holds it. */
function environOf(pid: number): Map<string, string> {
  const env = new Map<string, string>();
  for (const kv of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
    const eq = kv.indexOf('=');
    if (eq > 0) env.set(kv.slice(0, eq), kv.slice(eq + 1));
  }
  return env;
}

/** `neardup serve` on a new file store with `env` added to this process's environment: the served process's GLIBC_TUNABLES. */
async function servedTunables(env: Record<string, string>): Promise<string | undefined> {
  const dir = mkdtempSync(path.join(tmpdir(), 'nd-huge-'));
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    const s = await startServe(['--store', `file:${path.join(dir, 'st')}`]);
    try {
      const stats = (await (await fetch(`${s.url}/v1/stats`)).json()) as { documents: number };
      assert.equal(stats.documents, 0);
      return environOf(s.child.pid!).get('GLIBC_TUNABLES');
    } finally {
      await s.stop();
    }
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

test('neardup serve runs with the huge-page tunable where this Node and machine allow it, and never over the user’s GLIBC_TUNABLES', async () => {
  const canExec = typeof (process as unknown as { execve?: unknown }).execve === 'function';
  const thp = (() => {
    try {
      return readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8');
    } catch {
      return '';
    }
  })();
  const glibc = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime;
  const expected = canExec && /\[(madvise|always)\]/.test(thp) && glibc !== undefined ? HUGE_PAGES_TUNABLE : undefined;
  const had = process.env.GLIBC_TUNABLES;
  delete process.env.GLIBC_TUNABLES;
  try {
    assert.equal(await servedTunables({ [HUGE_PAGES_ENV]: '' }), expected);
    assert.equal(await servedTunables({ [HUGE_PAGES_ENV]: '0' }), undefined);
    assert.equal(await servedTunables({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }), 'glibc.malloc.arena_max=2');
  } finally {
    if (had !== undefined) process.env.GLIBC_TUNABLES = had;
  }
});
