/**
 * The setting of the sharded-job-in-S3 tests (test/e2e/distributed-s3*.test.ts): the 24-shard corpus
 * of test/e2e/distributed.test.ts in four formats, its single-process pairs and clusters, and a real
 * s3rver behind a proxy that fails every third request with 503 or 429, the shards uploaded. Each
 * test runs in a file of its own: together they passed the 300 s a test file may take under load.
 */
import { after, before, describe } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { REQUIRE_ALL } from './needs.js';
import { shardedCorpus, type ShardFormat } from './shards.js';
import { putObject, s3rverMissing, startFaultProxy, startS3rver, type FaultProxy, type S3Server } from './s3.js';

const FORMATS: ShardFormat[] = ['jsonl.gz', 'jsonl.zst', 'parquet', 'jsonl'];
/** The bucket the shards are in (under `shards/`). */
export const BUCKET = 'corpus';
const SHARDS = 24;

/** What a test of the setting sees, once its `before` hooks have run. */
export interface S3JobContext {
  dir: string;
  shardDir: string;
  singlePairs: string[];
  singleClusters: string[];
  server: S3Server;
  proxy: FaultProxy;
}

/** Declares the setting's suites and calls `body` inside them with the context (filled before the tests run). */
export function describeS3Job(body: (ctx: S3JobContext) => void): void {
  const missing = REQUIRE_ALL ? undefined : s3rverMissing();
  const ctx = {} as S3JobContext;
  describe('sharded dedup jobs', () => {
    before(async () => {
      Object.assign(ctx, await shardedCorpus(SHARDS, FORMATS));
    });
    after(() => fs.rmSync(ctx.dir, { recursive: true, force: true }));
    describe('with inputs, work dir and outputs in S3', missing ? { skip: missing } : {}, () => {
      before(async () => {
        ctx.server = await startS3rver(BUCKET);
        ctx.proxy = await startFaultProxy(ctx.server.port);
        for (const f of fs.readdirSync(ctx.shardDir)) await putObject(ctx.server, BUCKET, `shards/${f}`, fs.readFileSync(path.join(ctx.shardDir, f)));
      });
      after(async () => {
        await ctx.proxy?.stop();
        await ctx.server?.stop();
      });
      body(ctx);
    });
  });
}
