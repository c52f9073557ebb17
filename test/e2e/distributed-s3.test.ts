/**
 * Sharded dedup jobs with their inputs, work dir and outputs in S3 (#13): a real s3rver behind
 * a proxy that fails every third request with 503 or 429, in one machine's task processes and on
 * three BullMQ workers that share nothing but Redis and the bucket; they must give exactly the
 * pairs, clusters and output shards of single-process `neardup dedup` (the same corpus as
 * distributed.test.ts, in a file of its own so that CI runs it on Node 20 only: the S3 client on
 * every Node is covered by test/io/s3/s3.test.ts, which scripts/test-tier.mjs runs on Node 22 and 24 too). This file: one machine's task processes (the output shards) and the job's own process (the pairs); the
 * BullMQ workers are in distributed-s3-bullmq.test.ts (the two together passed the 300 s a test
 * file may take, under load).
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { neardup } from '../cliUtil.js';
import { sortedLines } from '../helpers/shards.js';
import { neardupAsync } from '../helpers/procs.js';
import { getObjects, S3_JOB_ENV } from '../helpers/s3.js';
import { BUCKET, describeS3Job } from '../helpers/s3Job.js';

describeS3Job((ctx) => {
  it("--local, through the faults: neardup dedup's output shards byte for byte, and its pairs", async () => {
    const single = neardup(['dedup', ctx.shardDir, '--id-field', 'id', '--output', 'dedup', '--out-dir', 's3-single', '-q'], { cwd: ctx.dir });
    assert.equal(single.code, 0, single.stderr);
    const before = ctx.proxy.stats.failed;
    const job = ['--local', '--processes', '2', '--task-bytes', '150000', '--partitions', '2', '--id-field', 'id', '--s3-endpoint', ctx.proxy.endpoint];
    const r = await neardupAsync(
      ['job', 'dedup', `s3://${BUCKET}/shards/`, ...job, '--work-dir', `s3://${BUCKET}/jobs/d`, '--output', 'dedup', '--out-dir', `s3://${BUCKET}/clean/`],
      ctx.dir,
      S3_JOB_ENV,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.ok(ctx.proxy.stats.failed > before, 'the proxy failed some requests');
    assert.match(r.stderr, /output +dedup: [\d,]+ records → s3:\/\/corpus\/clean\n/);
    const got = await getObjects(ctx.server, BUCKET, 'clean/');
    const want = fs.readdirSync(path.join(ctx.dir, 's3-single')).sort();
    assert.deepEqual([...got.keys()].sort(), want, 'one object per corpus shard, and _SUCCESS');
    for (const name of want) assert.ok(got.get(name)!.equals(fs.readFileSync(path.join(ctx.dir, 's3-single', name))), `${name}: the same bytes`);
    // The pairs in the job's own process (--processes 1): its tasks read and write the same objects
    // through the same client as on task processes, which the job above ran on (and a task process
    // per stage, each loading the S3 client, was most of this job's CPU).
    const inProcess = job.map((x, i) => (job[i - 1] === '--processes' ? '1' : x));
    const p = await neardupAsync(
      [
        'job',
        'dedup',
        `s3://${BUCKET}/shards/*.{parquet,jsonl*}`,
        ...inProcess,
        '--work-dir',
        `s3://${BUCKET}/jobs/p`,
        '--out',
        `s3://${BUCKET}/pairs.tsv`,
        '-q',
      ],
      ctx.dir,
      S3_JOB_ENV,
    );
    assert.equal(p.code, 0, p.stderr);
    assert.deepEqual(sortedLines((await getObjects(ctx.server, BUCKET, 'pairs.tsv')).get('')!.toString()), ctx.singlePairs);
  });
});
