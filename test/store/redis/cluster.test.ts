/**
 * The Redis store against a real Redis Cluster (three masters on loopback, slots spread over all
 * three): the same answers as the memory store for both layouts, keys on every node, and two
 * index instances sharing the cluster see each other's writes.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NearDupIndex } from '../../../src/index.js';
import { storeScenario } from '../../helpers/storeScenario.js';
import { startRedisCluster, type RedisClusterChild } from '../../helpers/redis.js';
import { needsRedis } from '../../helpers/needs.js';
import { kijijiTexts } from '../../helpers/kijiji.js';

const dir = mkdtempSync(path.join(tmpdir(), 'nd-cluster-parity-'));
let cluster: RedisClusterChild;
let reference: unknown[];

const needs = needsRedis(true);
before(async () => {
  if (needs.skip) return;
  cluster = await startRedisCluster(3);
  reference = await storeScenario(dir, 'memory');
});
after(async () => {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Keys with the given prefix on each node (SCAN on the node itself, not through the cluster). */
function keysPerNode(prefix: string): number[] {
  return cluster.ports.map((p) => {
    const out = spawnSync('redis-cli', ['-p', String(p), '--scan', '--pattern', `${prefix}:*`], { encoding: 'utf8' });
    assert.equal(out.status, 0, out.stderr);
    return out.stdout.split('\n').filter((l) => l.length > 0).length;
  });
}

for (const layout of ['log', 'sets'] as const) {
  test(`redis cluster (${layout} layout): the parity scenario gives the memory store's answers; keys spread over every node`, needs, async () => {
    const prefix = `cl${layout}`;
    const got = await storeScenario(dir, `${cluster.url}&prefix=${prefix}&layout=${layout}`);
    assert.deepEqual(got, reference);
    const perNode = keysPerNode(prefix);
    // Hundreds of document records (and, for sets, band keys) hash to slots on all three masters.
    for (const n of perNode) assert.ok(n > 50, `keys per node: ${perNode.join(', ')}`);
  });
}

test('redis cluster (log layout): two index instances see each other’s adds and removals', needs, async () => {
  const texts = kijijiTexts();
  const url = `${cluster.url}&prefix=share`;
  const opts = { shingle: { k: 10, normalize: { preset: 'seed000' as const } }, threshold: 0.8 };
  const a = await NearDupIndex.open({ ...opts, store: url });
  const b = await NearDupIndex.open({ store: url });
  try {
    await a.addMany(texts.slice(0, 200).map((text, i) => ({ id: `k${i}`, text })));
    // Kijiji holds many exact re-posts: ad 0 is repeated within the first 200.
    const fromB = await b.query(texts[0]!);
    assert.ok(fromB.some((m) => m.id === 'k0' && m.similarity === 1), JSON.stringify(fromB.slice(0, 3)));
    assert.equal(await b.size(), 200);
    assert.equal(await b.remove('k0'), true);
    const afterRemove = await a.query(texts[0]!);
    assert.ok(!afterRemove.some((m) => m.id === 'k0'));
    assert.equal(await a.size(), 199);
    const dup = await b.add('fresh', texts[1]!);
    assert.ok(dup.some((m) => m.id === 'k1'));
    assert.deepEqual((await a.get('fresh'))?.id, 'fresh');
  } finally {
    await a.close();
    await b.close();
  }
});
