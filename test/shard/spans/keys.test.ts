/**
 * The spans-text task's stream of texts (src/shard/spans/keys.ts): every text added reads back as
 * itself from where {@link KeyStream.add} put it, for drawn sequences of overlapping windows (of a
 * document, with gaps, repeats of earlier texts, texts that share a hash but differ, periodic
 * texts, empty ones); and overlapping windows cost their new code units only.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KeyStream } from '../../../src/shard/spans/keys.js';
import { rng } from '../../helpers/spansSets.js';

const codes = (s: string): Uint16Array => Uint16Array.from(s, (c) => c.charCodeAt(0));

describe('KeyStream', () => {
  it('reads every text back from where it was put (drawn windows)', () => {
    for (let seed = 0; seed < 300; seed++) {
      const r = rng(seed);
      const alphabet = r.pick(['ab', 'abc', 'a', 'abcdefgh\u0001']);
      const doc = Array.from({ length: 20 + r.int(300) }, () => alphabet[r.int(alphabet.length)]!).join('');
      const keys = new KeyStream();
      const put: [string, number][] = [];
      let a = 0;
      for (let i = 0; i < 200 && a < doc.length; i++) {
        const len = r.chance(0.05) ? 0 : 1 + r.int(40);
        const t = doc.slice(a, a + len);
        // Few hash values, so that different texts share one.
        const hi = r.chance(0.5) ? t.length : r.int(3);
        put.push([t, keys.add(hi, 7, codes(t))]);
        a += r.chance(0.2) ? r.int(30) : 1 + r.int(3);
        if (r.chance(0.05)) a = r.int(doc.length);
      }
      const stream = String.fromCharCode(...keys.units.subarray(0, keys.used));
      for (const [t, at] of put) assert.equal(stream.slice(at, at + t.length), t, `seed ${seed}`);
    }
  });

  it('windows sliding by one character cost one code unit each; a text written before costs nothing', () => {
    const doc = 'the quick brown fox jumps over the lazy dog '.repeat(3);
    const keys = new KeyStream();
    for (let a = 0; a + 20 <= doc.length; a++) keys.add(a, 0, codes(doc.slice(a, a + 20)));
    assert.equal(keys.used, doc.length);
    const before = keys.used;
    keys.add(5, 0, codes(doc.slice(5, 25)));
    assert.equal(keys.used, before);
  });
});
