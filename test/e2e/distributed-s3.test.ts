/**
 * Sharded dedup jobs with their inputs, work dir and outputs in S3 (#13): a real s3rver behind
 * a proxy that fails every third request with 503 or 429, in one machine's task processes and on
 * three BullMQ workers that share nothing but Redis and the bucket; they must give exactly the
 * pairs, clusters and output shards of single-process `neardup dedup` (the same corpus as
 * distributed.test.ts, in a file of its own so that CI runs it on Node 20 only: the S3 client on
 * every Node is covered by test/io/s3/s3.test.ts and test/e2e/s3-job.test.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { neardup } from '../cliUtil.js';
import { startRedis } from '../helpers/redis.js';
import { needsRedis, REQUIRE_ALL } from '../helpers/needs.js';
import { neardupAsync, shardedCorpus, sortedLines, startWorker, type ShardFormat } from '../helpers/shards.js';
import { getObjects, putObject, s3rverMissing, startFaultProxy, startS3rver, S3_ENV, type FaultProxy, type S3Server } from '../helpers/s3.js';

const FORMATS: ShardFormat[] = ['jsonl.gz', 'jsonl.zst', 'parquet', 'jsonl'];
const BUCKET = 'corpus';
const S3_MISSING = REQUIRE_ALL ? undefined : s3rverMissing();
const S3_OPTS = S3_MISSING ? { skip: S3_MISSING } : {};
const SHARDS = 24;

describe('sharded dedup jobs', () => {
  let dir: string;
  let shardDir: string;
  let singlePairs: string[];
  let singleClusters: string[];

  before(async () => {
    ({ dir, shardDir, singlePairs, singleClusters } = await shardedCorpus(SHARDS, FORMATS));
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  describe('with inputs, work dir and outputs in S3', S3_OPTS, () => {
    let server: S3Server;
    let proxy: FaultProxy;
    before(async () => {
      server = await startS3rver(BUCKET);
      proxy = await startFaultProxy(server.port);
      for (const f of fs.readdirSync(shardDir)) await putObject(server, BUCKET, `shards/${f}`, fs.readFileSync(path.join(shardDir, f)));
    });
    after(async () => {
      await proxy?.stop();
      await server?.stop();
    });

    it('--local, through the faults: neardup dedup\'s output shards byte for byte, and its pairs', async () => {
      const single = neardup(['dedup', shardDir, '--id-field', 'id', '--output', 'dedup', '--out-dir', 's3-single', '-q'], { cwd: dir });
      assert.equal(single.code, 0, single.stderr);
      const before = proxy.stats.failed;
      const job = ['--local', '--processes', '2', '--task-bytes', '150000', '--partitions', '2', '--id-field', 'id', '--s3-endpoint', proxy.endpoint];
      const r = await neardupAsync(['job', 'dedup', `s3://${BUCKET}/shards/`, ...job, '--work-dir', `s3://${BUCKET}/jobs/d`, '--output', 'dedup', '--out-dir', `s3://${BUCKET}/clean/`], dir, S3_ENV);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(proxy.stats.failed > before, 'the proxy failed some requests');
      assert.match(r.stderr, /output +dedup: [\d,]+ records → s3:\/\/corpus\/clean\n/);
      const got = await getObjects(server, BUCKET, 'clean/');
      const want = fs.readdirSync(path.join(dir, 's3-single')).sort();
      assert.deepEqual([...got.keys()].sort(), want, 'one object per corpus shard, and _SUCCESS');
      for (const name of want) assert.ok(got.get(name)!.equals(fs.readFileSync(path.join(dir, 's3-single', name))), `${name}: the same bytes`);
      const p = await neardupAsync(['job', 'dedup', `s3://${BUCKET}/shards/*.{parquet,jsonl*}`, ...job, '--work-dir', `s3://${BUCKET}/jobs/p`, '--out', `s3://${BUCKET}/pairs.tsv`, '-q'], dir, S3_ENV);
      assert.equal(p.code, 0, p.stderr);
      assert.deepEqual(sortedLines((await getObjects(server, BUCKET, 'pairs.tsv')).get('')!.toString()), singlePairs);
    });

    it('three BullMQ workers in their own directories, sharing only Redis and the bucket: the same pairs and clusters', needsRedis(), async () => {
      const redis = await startRedis();
      const ws = [0, 1, 2].map((i) => startWorker(redis.url, path.join(dir, `s3w${i}`), ['--s3-endpoint', proxy.endpoint], S3_ENV));
      try {
        await Promise.all(ws.map((w) => w.waitFor(/worker ready/)));
        const common = [`s3://${BUCKET}/shards/`, '--redis', redis.url, '--id-field', 'id', '--task-bytes', '150000', '--partitions', '3', '--s3-endpoint', proxy.endpoint, '-q'];
        const r = await neardupAsync(['job', 'dedup', ...common, '--work-dir', `s3://${BUCKET}/jobs/q`, '--out', 's3q.tsv'], dir, S3_ENV);
        assert.equal(r.code, 0, r.stderr);
        assert.deepEqual(sortedLines(fs.readFileSync(path.join(dir, 's3q.tsv'), 'utf8')), singlePairs);
        assert.ok(ws.filter((w) => /task done/.test(w.log())).length >= 2, 'the workers shared the tasks');
        const c = await neardupAsync(['job', 'dedup', ...common, '--work-dir', `s3://${BUCKET}/jobs/qc`, '--output', 'clusters', '--out', 's3q.jsonl'], dir, S3_ENV);
        assert.equal(c.code, 0, c.stderr);
        assert.deepEqual(sortedLines(fs.readFileSync(path.join(dir, 's3q.jsonl'), 'utf8')), singleClusters);
      } finally {
        for (const w of ws) await w.kill();
        await redis.stop();
      }
    });
  });
});
