/**
 * Pass 1's table grows once to the units projected from the share of the input read
 * (src/spans/deduper.ts, `growAhead`): the share is of the input's bytes, as its reader reports
 * them, so records whose text is a small part of their bytes (a large other field) do not make it
 * project many times the units there are. Drawn record shapes, lines of drawn lengths, and a field
 * beside the text of 0 to 40 times the text's size: the table ends at most 5 times the units it
 * was told of (the distinct units, or the hint it reserved from the input's size), where growth by
 * doubling at a load of 1/2 and a tenth more leaves it (4.4 times). Sized from the texts' share,
 * it ended 6–90 times larger.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SpanDeduper } from '../../src/spans/deduper.js';

test("pass 1's table is sized from the share of the input read, whatever the text's part of a record", () => {
  fc.assert(
    fc.property(
      fc.record({
        docs: fc.integer({ min: 8_000, max: 16_000 }),
        lines: fc.integer({ min: 3, max: 8 }),
        lineLength: fc.integer({ min: 6, max: 30 }),
        padTimes: fc.constantFrom(0, 1, 5, 40),
        seed: fc.integer({ min: 1, max: 2 ** 30 }),
      }),
      ({ docs, lines, lineLength, padTimes, seed }) => {
        let s = seed;
        const next = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0);
        const texts: string[] = [];
        for (let i = 0; i < docs; i++) {
          const ls: string[] = [];
          for (let j = 0; j < lines; j++) ls.push(next().toString(36).padEnd(lineLength, 'x').slice(0, lineLength));
          texts.push(ls.join('\n'));
        }
        // Each record's bytes: its text, a field of padTimes its size, and the JSON around them.
        const recordBytes = texts.map((t) => 30 + t.length * (1 + padTimes));
        const total = recordBytes.reduce((a, b) => a + b, 0);
        const d = new SpanDeduper({ unit: 'line' });
        d.expectBytes(total);
        for (let i = 0; i < docs; i++) {
          d.readBytes(recordBytes[i]!);
          d.observe(texts[i]!);
        }
        const units = docs * lines;
        // What expectBytes reserves: a 32nd of a line every 128 bytes of input, at most 2^20.
        const told = Math.max(units, Math.min(2 ** 20, Math.floor(total / 128 / 32)));
        assert.ok(d.tableSlots <= 5 * told, `${d.tableSlots} slots for ${units} units (text ${(100 / (1 + padTimes)).toFixed(0)} % of the bytes)`);
      },
    ),
    { numRuns: 12, seed: 5 },
  );
});
