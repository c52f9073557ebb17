/**
 * The setting of the work-dir-in-S3 tests (test/e2e/s3-job*.test.ts): a real s3rver behind a proxy
 * that fails every third request with 503 or 429 and, as S3 does, answers a conditional PUT of an
 * existing key with 412; 600 planted documents in 6 shards uploaded under `in/`, and the
 * single-process pairs of the same corpus. The tests are in two files: together they came near the
 * 300 s a test file may take under load.
 */
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { neardup, tmpDir } from '../cliUtil.js';
import { plantedDocs, sortedLines, writeShards, jsonl } from './shards.js';
import { neardupAsync } from './procs.js';
import { REQUIRE_ALL } from './needs.js';
import { getObjects, putObject, s3rverMissing, startFaultProxy, startS3rver, S3_JOB_ENV, type FaultProxy, type S3Server } from './s3.js';

/** The bucket (shards under `in/`). */
export const BUCKET = 'corpus';

/** What a test of the setting sees, once its `before` hook has run. */
export interface S3WorkDirSetting {
  /** Test options: skipped when s3rver is missing (never under CI). */
  opts: { skip?: string };
  server: S3Server;
  proxy: FaultProxy;
  /** The temp directory commands run in (`all.jsonl` is the whole corpus). */
  dir: string;
  /** neardup dedup's pairs of the corpus, sorted. */
  single: string[];
  /** neardup with the server's credentials, through the proxy (or straight to s3rver: `direct`). */
  run(args: string[], env?: Record<string, string>, direct?: boolean): Promise<{ code: number; stdout: string; stderr: string }>;
  /** `run`, asserting exit 0; its stdout. */
  ok(args: string[], env?: Record<string, string>, direct?: boolean): Promise<string>;
  /** The attempt ids under `prefix` (a task's prefix in the work dir). */
  attempts(prefix: string): Promise<string[]>;
  /** The attempt a marker object names. */
  markerAttempt(key: string): Promise<string>;
  /** Runs each stage's tasks, in order. */
  stages(work: string, names: string[]): Promise<void>;
}

/** Registers the setting's hooks in the calling test file and returns it (filled before the tests run). */
export function s3WorkDirSetting(): S3WorkDirSetting {
  const missing = REQUIRE_ALL ? undefined : s3rverMissing();
  const ctx = { opts: missing ? { skip: missing } : {} } as S3WorkDirSetting;
  before(async () => {
    if (missing) return;
    ctx.server = await startS3rver(BUCKET);
    ctx.proxy = await startFaultProxy(ctx.server.port, undefined, true);
    ctx.dir = tmpDir();
    const docs = plantedDocs(600, 0.35, 5);
    const files = await writeShards(path.join(ctx.dir, 'in'), docs, 6, ['jsonl', 'jsonl.gz']);
    for (const f of files) await putObject(ctx.server, BUCKET, `in/${path.basename(f)}`, fs.readFileSync(f));
    fs.writeFileSync(path.join(ctx.dir, 'all.jsonl'), jsonl(docs));
    const r = neardup(['dedup', 'all.jsonl', '--id-field', 'id', '-q'], { cwd: ctx.dir });
    assert.equal(r.code, 0, r.stderr);
    ctx.single = sortedLines(r.stdout);
    assert.ok(ctx.single.length > 100, `only ${ctx.single.length} pairs`);
  });
  after(async () => {
    if (missing) return;
    await ctx.proxy.stop();
    await ctx.server.stop();
    fs.rmSync(ctx.dir, { recursive: true, force: true });
  });
  ctx.run = (args, env = {}, direct = false) =>
    neardupAsync([...args, '--s3-endpoint', direct ? ctx.server.endpoint : ctx.proxy.endpoint], ctx.dir, { ...S3_JOB_ENV, ...env });
  ctx.ok = async (args, env = {}, direct = false) => {
    const r = await ctx.run(args, env, direct);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  ctx.attempts = async (prefix) => {
    const keys = [...(await getObjects(ctx.server, BUCKET, prefix)).keys()];
    return [...new Set(keys.flatMap((k) => /^attempt-([0-9a-f]+)\//.exec(k)?.[1] ?? []))].sort();
  };
  ctx.markerAttempt = async (key) => JSON.parse((await getObjects(ctx.server, BUCKET, key)).get('')!.toString()).attempt;
  ctx.stages = async (work, names) => {
    for (const s of names) await ctx.ok(['stage', s, '--all', '--work-dir', work]);
  };
  return ctx;
}
