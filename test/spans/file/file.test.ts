/**
 * `dedupSpansFile` (the two passes `neardup spans` runs) on random JSONL, TSV and CSV files
 * against the brute-force oracle: records left untouched are the input's bytes, a changed record
 * differs only in its text field (re-encoded), dropped records are gone, the audit is the oracle's;
 * byte-order marks, CRLF records, escapes and a last line without a break included.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { dedupSpansFile } from '../../../src/spans/file/file.js';
import { spansOracle, type OracleAudit } from '../../helpers/spansOracle.js';

const POOL = [
  'Accept all cookies.',
  'accept  ALL cookies.',
  'Read more…',
  '我喜欢猫。',
  'Emoji 😀 here.',
  'say "hi", then go',
  'Unique text here',
  'Ünïcödé ok',
];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spans-file-'));

function docArb(seps: string[]): fc.Arbitrary<string> {
  return fc.array(fc.tuple(fc.integer({ min: 0, max: POOL.length - 1 }), fc.integer({ min: 0, max: seps.length - 1 })), { minLength: 0, maxLength: 6 }).map((
    parts,
  ) => parts.map(([p, s], i) => POOL[p]! + (i + 1 < parts.length ? seps[s]! : '')).join(''));
}

function readAudit(file: string): OracleAudit[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l).map((l) => {
    const r = JSON.parse(l) as Record<string, unknown>;
    return {
      id: r.id,
      start: r.start,
      end: r.end,
      byteStart: r.byte_start,
      byteEnd: r.byte_end,
      keptId: r.kept_id,
      keptStart: r.kept_start,
      keptByteStart: r.kept_byte_start,
      count: r.count,
      docs: r.docs,
    } as OracleAudit;
  });
}

/** JSON with every non-ASCII character escaped: the rewrite must keep the other fields' escapes as written. */
const escaped = (s: string): string => JSON.stringify(s).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

let run = 0;

test('JSONL: untouched records byte for byte, changed ones only in their text field, audit as the oracle', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(docArb(['\n', '\r\n', '\n\n', ' ']), { minLength: 1, maxLength: 6 }),
      fc.constantFrom('line' as const, 'paragraph' as const, 'sentence' as const),
      fc.option(fc.constant(2), { nil: undefined }),
      fc.boolean(),
      fc.boolean(),
      fc.boolean(),
      async (texts, unit, minDocs, bom, crlf, finalBreak) => {
        const ids = texts.map((_, i) => `d${i}`);
        const eol = crlf ? '\r\n' : '\n';
        const lines = texts.map((t, i) =>
          `{"id":${JSON.stringify(ids[i])}, "meta":{"n":1.50,"s":"\\u00e9"},"text":${i % 2 ? escaped(t) : JSON.stringify(t)} ,"z":[1]}`
        );
        const input = path.join(tmp, `in${run}.jsonl`);
        const out = path.join(tmp, `out${run}.jsonl`);
        const audit = path.join(tmp, `removed${run++}.jsonl`);
        fs.writeFileSync(input, (bom ? '\ufeff' : '') + lines.join(eol) + (finalBreak ? eol : ''));
        const opts = { unit, minDocs, window: unit === 'sentence' ? 2 : undefined };
        await dedupSpansFile(input, { read: { fields: { id: 'id' } }, spans: opts, out, removed: audit });
        const want = spansOracle(texts, ids, opts);
        const expected = lines.flatMap((l, i) => {
          const w = want.docs[i]!;
          if (w.dropped) return [];
          const line = w.changed ? l.replace(/"text":.* ,"z"/, `"text":${JSON.stringify(w.text)} ,"z"`) : l;
          return [line + (i + 1 < lines.length || finalBreak ? eol : '\n')];
        });
        assert.equal(fs.readFileSync(out, 'utf8'), (bom ? '\ufeff' : '') + expected.join(''));
        assert.deepEqual(readAudit(audit), want.audit);
      },
    ),
    { numRuns: 60, seed: 51 },
  );
});

test('TSV (sentence windows) and CSV (quoted paragraphs): only the text column changes', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(docArb([' ', '  ']), { minLength: 1, maxLength: 6 }),
      fc.array(docArb(['\n', '\n\n', '\r\n\r\n']), { minLength: 6, maxLength: 6 }),
      async (tsvTexts, csvTexts) => {
        const ids = tsvTexts.map((_, i) => `d${i}`);
        const tsv = path.join(tmp, `in${run}.tsv`);
        const tsvOut = path.join(tmp, `out${run++}.tsv`);
        const rows = tsvTexts.map((t, i) => `${ids[i]}\t${t}\tx"${i}`);
        fs.writeFileSync(tsv, `id\ttext\tother\n${rows.join('\n')}\n`);
        await dedupSpansFile(tsv, { read: { columns: { id: 'id' } }, spans: { unit: 'sentence', window: 2 }, out: tsvOut });
        const wt = spansOracle(tsvTexts, ids, { unit: 'sentence', window: 2 });
        const et = rows.flatMap((r, i) => (wt.docs[i]!.dropped ? [] : [`${ids[i]}\t${wt.docs[i]!.text}\tx"${i}\n`]));
        assert.equal(fs.readFileSync(tsvOut, 'utf8'), `id\ttext\tother\n${et.join('')}`);

        const cids = csvTexts.map((_, i) => `c${i}`);
        const csv = path.join(tmp, `in${run}.csv`);
        const csvOut = path.join(tmp, `out${run++}.csv`);
        const q = (s: string): string => `"${s.replace(/"/g, '""')}"`;
        const needs = (s: string): boolean => /[",\r\n]/.test(s);
        const field = (s: string, i: number): string => (needs(s) || i % 3 === 0 ? q(s) : s);
        const crows = csvTexts.map((t, i) => `${cids[i]},${field(t, i)},"o,${i}"`);
        fs.writeFileSync(csv, `id,text,other\n${crows.join('\n')}\n`);
        await dedupSpansFile(csv, { read: { columns: { id: 'id' } }, spans: { unit: 'paragraph', minDocWords: 0 }, out: csvOut });
        const wc = spansOracle(csvTexts, cids, { unit: 'paragraph', minDocWords: 0 });
        const ec = crows.map((r, i) => {
          const w = wc.docs[i]!;
          const t = csvTexts[i]!;
          const quoted = needs(t) || i % 3 === 0;
          return w.changed ? `${cids[i]},${quoted || needs(w.text) ? q(w.text) : w.text},"o,${i}"\n` : `${r}\n`;
        });
        assert.equal(fs.readFileSync(csvOut, 'utf8'), `id,text,other\n${ec.join('')}`);
      },
    ),
    { numRuns: 40, seed: 52 },
  );
});

test('--output annotate: every record kept as is, with spans_removed (code points and bytes) and spans_dropped', async () => {
  const input = path.join(tmp, 'ann.jsonl');
  fs.writeFileSync(input, '{"text":"😀 a\\nfooter"}\n{"text":"b\\nfooter"}\n');
  const out = path.join(tmp, 'ann.out.jsonl');
  await dedupSpansFile(input, { mode: 'annotate', out });
  assert.equal(
    fs.readFileSync(out, 'utf8'),
    '{"text":"😀 a\\nfooter","spans_removed":[],"spans_dropped":false}\n{"text":"b\\nfooter","spans_removed":[{"start":2,"end":8,"byte_start":2,"byte_end":8}],"spans_dropped":false}\n',
  );
});

test('TSV with a byte-order mark, CRLF rows and no final line break: every untouched byte kept, dropped rows gone', async () => {
  const input = path.join(tmp, 'odd.tsv');
  fs.writeFileSync(input, '\ufeffid\ttext\tn\r\n1\t😀 Emoji here. 我喜欢猫。\t1\r\n2\t我喜欢猫。 Other words.\t2\r\n3\t😀 emoji HERE.\t3');
  const out = path.join(tmp, 'odd.out.tsv');
  const audit = path.join(tmp, 'odd.removed.jsonl');
  await dedupSpansFile(input, { read: { columns: { id: 'id' } }, spans: { unit: 'sentence', window: 1 }, out, removed: audit });
  assert.equal(fs.readFileSync(out, 'utf8'), '\ufeffid\ttext\tn\r\n1\t😀 Emoji here. 我喜欢猫。\t1\r\n2\tOther words.\t2\r\n');
  assert.deepEqual(readAudit(audit).map((r) => [r.id, r.start, r.end, r.byteStart, r.byteEnd, r.keptId, r.keptStart, r.keptByteStart]), [
    ['2', 0, 6, 0, 16, '1', 14, 17],
    ['3', 0, 13, 0, 16, '1', 0, 0],
  ]);
});

test('a table that grows many times (over 4,096 distinct lines, twice): pass 1 lists each repeat by slot, and the slots follow the table as it grows', async () => {
  // Lines drawn from 8,300 distinct ones, non-ASCII in some, so repeats are listed before and after each growth of the table.
  const line = (n: number): string => (n % 7 === 0 ? `Zeile ${n} ü` : `line ${n}`);
  let x = 7;
  const next = (m: number): number => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0), (x >>> 8) % m);
  const texts = Array.from({ length: 3000 }, () => Array.from({ length: 1 + next(8) }, () => line(next(next(2) ? 8000 : 300))).join('\n'));
  const ids = texts.map((_, i) => `d${i}`);
  const input = path.join(tmp, 'grow.jsonl');
  const out = path.join(tmp, 'grow.out.jsonl');
  const audit = path.join(tmp, 'grow.removed.jsonl');
  fs.writeFileSync(input, texts.map((t, i) => JSON.stringify({ id: ids[i], text: t })).join('\n') + '\n');
  for (const minDocs of [undefined, 2]) {
    const r = await dedupSpansFile(input, { read: { fields: { id: 'id' } }, spans: { unit: 'line', minDocs }, out, removed: audit });
    const want = spansOracle(texts, ids, { unit: 'line', minDocs });
    assert.ok(r.summary.distinctUnits > 4096, `${r.summary.distinctUnits} distinct lines`);
    const got = fs.readFileSync(out, 'utf8').split('\n').filter((l) => l).map((l) => JSON.parse(l) as { id: string; text: string });
    assert.deepEqual(got, want.docs.flatMap((d, i) => (d.dropped ? [] : [{ id: ids[i], text: d.text }])));
    assert.deepEqual(readAudit(audit), want.audit);
  }
});

test('an output that is the input (out or removed, through a link too) is refused before anything is written, the input intact; out and removed one file too', async () => {
  const dir = fs.mkdtempSync(path.join(tmp, 'alias-'));
  const input = path.join(dir, 'in.jsonl');
  const data = '{"id":"a","text":"Cheap.\\nSub!\\n"}\n{"id":"b","text":"Hot.\\nSub!\\n"}\n{"id":"c","text":"sub!"}\n';
  fs.writeFileSync(input, data);
  fs.linkSync(input, path.join(dir, 'hard.jsonl'));
  const other = path.join(dir, 'other.jsonl');
  for (
    const o of [{ out: input }, { out: path.join(dir, 'hard.jsonl') }, { out: other, removed: input }, { mode: 'none' as const, removed: input }, {
      out: other,
      removed: other,
    }]
  ) {
    await assert.rejects(dedupSpansFile(input, { read: { fields: { id: 'id' } }, ...o }), /same file/, JSON.stringify(o));
    assert.equal(fs.readFileSync(input, 'utf8'), data, `${JSON.stringify(o)}: the input is intact`);
    assert.ok(!fs.existsSync(other), `${JSON.stringify(o)}: nothing written`);
  }
});
