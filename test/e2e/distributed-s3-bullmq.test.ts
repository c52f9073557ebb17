/**
 * Sharded dedup jobs with their inputs, work dir and outputs in S3 (#13): a real s3rver behind
 * a proxy that fails every third request with 503 or 429, in one machine's task processes and on
 * three BullMQ workers that share nothing but Redis and the bucket; they must give exactly the
 * pairs, clusters and output shards of single-process `neardup dedup` (the same corpus as
 * distributed.test.ts, in a file of its own so that CI runs it on Node 20 only: the S3 client on
 * every Node is covered by test/io/s3/s3.test.ts, which scripts/test-tier.mjs runs on Node 22 and 24 too). This file: three BullMQ workers; one machine's
 * task processes are in distributed-s3.test.ts.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startRedis } from '../helpers/redis.js';
import { needsRedis } from '../helpers/needs.js';
import { sortedLines, startWorker } from '../helpers/shards.js';
import { neardupAsync } from '../helpers/procs.js';
import { S3_JOB_ENV } from '../helpers/s3.js';
import { BUCKET, describeS3Job } from '../helpers/s3Job.js';

describeS3Job((ctx) => {
  it('three BullMQ workers in their own directories, sharing only Redis and the bucket: the same pairs and clusters', needsRedis(), async () => {
    const redis = await startRedis();
    const ws = [0, 1, 2].map((i) => startWorker(redis.url, path.join(ctx.dir, `s3w${i}`), ['--s3-endpoint', ctx.proxy.endpoint], S3_JOB_ENV));
    try {
      await Promise.all(ws.map((w) => w.waitFor(/worker ready/)));
      const common = [
        `s3://${BUCKET}/shards/`,
        '--redis',
        redis.url,
        '--id-field',
        'id',
        '--task-bytes',
        '150000',
        '--partitions',
        '3',
        '--s3-endpoint',
        ctx.proxy.endpoint,
        '-q',
      ];
      const r = await neardupAsync(['job', 'dedup', ...common, '--work-dir', `s3://${BUCKET}/jobs/q`, '--out', 's3q.tsv'], ctx.dir, S3_JOB_ENV);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(sortedLines(fs.readFileSync(path.join(ctx.dir, 's3q.tsv'), 'utf8')), ctx.singlePairs);
      assert.ok(ws.filter((w) => /task done/.test(w.log())).length >= 2, 'the workers shared the tasks');
      const c = await neardupAsync(
        ['job', 'dedup', ...common, '--work-dir', `s3://${BUCKET}/jobs/qc`, '--output', 'clusters', '--out', 's3q.jsonl'],
        ctx.dir,
        S3_JOB_ENV,
      );
      assert.equal(c.code, 0, c.stderr);
      assert.deepEqual(sortedLines(fs.readFileSync(path.join(ctx.dir, 's3q.jsonl'), 'utf8')), ctx.singleClusters);
    } finally {
      for (const w of ws) await w.kill();
      await redis.stop();
    }
  });
});
