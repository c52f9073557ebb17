/** The one place that turns CLI flags into pipeline options (cli/pipelineOptions.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pipelineOptionsFrom } from '../../src/cli/pipelineOptions.js';

test('pipelineOptionsFrom: engine flags are checked before reader flags, and the pair format follows --out', () => {
  const flags = {
    format: 'auto' as const,
    delimiter: ',',
    shingle: 'char' as const,
    normalize: 'lowercase-collapse' as const,
    numPerm: 128,
    method: 'oph' as const,
    seed: 1,
    threshold: 0.8,
    out: 'pairs.csv',
  };
  const o = pipelineOptionsFrom(flags);
  assert.equal(o.pairFormat, 'csv');
  assert.deepEqual(o.dedup.shingle, { kind: 'char', normalize: { preset: 'lowercase-collapse' } });
  assert.equal(o.read.delimiter, ',');
  assert.throws(() => pipelineOptionsFrom({ ...flags, delimiter: ';;' }), /--delimiter must be one character/);
  assert.throws(() => pipelineOptionsFrom({ ...flags, delimiter: ';;', buckets: 5 }), /--buckets applies to --candidates sketch only/);
});
