/**
 * The published type declarations compile in a strict consumer project: the test packs the tarball
 * (`npm pack`), installs it with TypeScript 7 (latest) and 5 into a fresh project in a temp
 * directory, and compiles test/fixtures/consumer/use.ts, which uses the API
 * docs/api.md documents, under `strict` with `skipLibCheck: false`, for NodeNext and bundler module
 * resolution. Before @types/node was a dependency and index.d.ts referenced it, TypeScript 7 found
 * 11 errors inside neardup's .d.ts (`Cannot find name 'Buffer'`, `node:stream`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot, tmpDir } from '../cliUtil.js';

/**
 * The environment without the npm_* variables `npm test` sets (they would redirect the child npm).
 * npm's own cache is kept, and preferred to the registry: the package's dependencies are there
 * from the repo's `npm ci`, so only the compilers the repo does not use are fetched (a cache of
 * its own in the temp directory fetched every dependency again, each run).
 */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
  env.npm_config_prefer_offline = 'true';
  env.npm_config_update_notifier = 'false';
  return env;
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): string {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} (in ${cwd}) failed:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

test('the packed .d.ts compile in a strict consumer project on TypeScript 7 and 5', { timeout: 600_000 }, () => {
  const dir = tmpDir();
  const env = cleanEnv();
  const packed = run('npm', ['pack', '--silent', '--pack-destination', dir], repoRoot, env).trim().split('\n').pop()!;
  const tarball = path.join(dir, packed);
  assert.ok(fs.existsSync(tarball), `npm pack made ${tarball}`);
  const project = path.join(dir, 'consumer');
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  fs.copyFileSync(path.join(repoRoot, 'test/fixtures/consumer/use.ts'), path.join(project, 'use.ts'));
  const base = { target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, noUncheckedIndexedAccess: true, exactOptionalPropertyTypes: true };
  const configs = {
    'tsconfig.nodenext.json': { compilerOptions: { ...base, module: 'NodeNext', moduleResolution: 'NodeNext' }, files: ['use.ts'] },
    'tsconfig.bundler.json': { compilerOptions: { ...base, module: 'ESNext', moduleResolution: 'Bundler' }, files: ['use.ts'] },
  };
  for (const [name, config] of Object.entries(configs)) fs.writeFileSync(path.join(project, name), JSON.stringify(config));
  // Nothing but the package and the compilers: TypeScript 7 as `typescript`, 5 under an alias.
  run('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', tarball, 'typescript@7', 'ts5@npm:typescript@5'], project, env);
  const installed = fs.readdirSync(path.join(project, 'node_modules')).filter((n) => !n.startsWith('.')).sort();
  assert.ok(!installed.includes('bullmq'), 'bullmq is an optional peer: a library install does not pull it in');
  for (const [compiler, major] of [['typescript', '7'], ['ts5', '5']] as const) {
    const version = run(process.execPath, [path.join(project, 'node_modules', compiler, 'bin/tsc'), '--version'], project, env);
    assert.match(version, new RegExp(`Version ${major}\\.`));
    for (const name of Object.keys(configs)) run(process.execPath, [path.join(project, 'node_modules', compiler, 'bin/tsc'), '-p', name], project, env);
  }
  fs.rmSync(dir, { recursive: true, force: true });
});
