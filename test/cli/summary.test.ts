/**
 * The typed summary builder of the dedup routes (src/cli/summary.ts): one label column for every
 * line, and one key order for every route's `--json` object, whatever order a route gives its fields.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { docsLine, outputJson, outputLine, removedJson, summaryJson, summaryLine } from '../../src/cli/summary.js';

test('summary lines: the label padded to one column, then the text', () => {
  assert.equal(summaryLine('pairs', '12 (exact Jaccard ≥ 0.8)'), 'pairs       12 (exact Jaccard ≥ 0.8)');
  assert.equal(summaryLine('candidates', '1,234'), 'candidates  1,234');
  assert.equal(summaryLine('throughput', 'x'), 'throughput  x');
  assert.equal(docsLine({ docs: 2627, from: 'ads.tsv [tsv]', empty: 3, skipped: 2 }), 'docs        2,627 from ads.tsv [tsv]: 3 empty, 2 invalid skipped');
  assert.equal(docsLine({ docs: 5, from: '2 shards', empty: 0 }), 'docs        5 from 2 shards: 0 empty');
  assert.equal(outputLine('dedup', 1200, 'out.tsv'), 'output      dedup: 1,200 records → out.tsv');
});

test('--json: the keys in one order for every route, absent fields left out, null kept', () => {
  const json = summaryJson({
    timings: { total: 1 },
    output: outputJson({ mode: 'dedup', path: 'o.tsv', records: 3, dryRun: true }),
    pairs: 2,
    lsh: null,
    input: { docs: 4 },
    command: 'dedup',
    ...removedJson('r.tsv', 1),
    ...removedJson('never.tsv', undefined),
    matched: undefined,
  });
  assert.deepEqual(Object.keys(json), ['command', 'input', 'lsh', 'pairs', 'output', 'removed', 'timings']);
  assert.equal(JSON.stringify(json.output), '{"mode":"dedup","path":"o.tsv","records":3,"dryRun":true}');
  assert.deepEqual(json.removed, { path: 'r.tsv', records: 1 });
  // A route that names the pair format has the key (undefined for outputs other than pairs, so JSON leaves it out).
  assert.deepEqual(Object.keys(outputJson({ mode: 'pairs', path: undefined, records: 0, format: 'tsv' })), ['mode', 'path', 'records', 'format']);
  assert.deepEqual(Object.keys(outputJson({ mode: 'pairs', path: undefined, records: 0 })), ['mode', 'path', 'records']);
});
