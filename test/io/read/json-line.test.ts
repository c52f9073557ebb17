/**
 * Pass 1's bytes route: the JSON line check (src/io/read/jsonLine.ts) against JSON.parse on valid and
 * broken lines, the byte-scan kernels against JavaScript, a block read as bytes
 * (src/io/ranges/lineBlockBytes.ts) against the string route on every line format with every kind of
 * line, and signing from bytes against signing the string.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { LINE_BLANK, LINE_OBJECT, LINE_UNSURE, scanJsonLine, stringStopJs } from '../../../src/io/read/jsonLine.js';
import { parseLineBlockBytes, type BlockBytes } from '../../../src/io/ranges/lineBlockBytes.js';
import { parseLineBlock, planLineRanges, type LineParseSpec, type ParsedBlock } from '../../../src/io/ranges/lineRanges.js';
import { createTextSigner } from '../../../src/sketch/textSigner.js';
import { toSortedSet } from '../../../src/text/fingerprintSet.js';
import { signRange, closeRangeFiles } from '../../../src/parallel/rangeJobs.js';

const wasm = !process.env['NEARDUP_NO_WASM'];
const loader = createTextSigner().blockSigner;

/** The block as the scans read it: in kernel memory when there is WebAssembly, else in JavaScript. */
function loadBytes(buf: Buffer): BlockBytes {
  if (loader) return loader.load(buf);
  return { mem: buf, base: 0, stringStop: stringStopJs(buf), units: (p, e) => buf.toString('utf8', p, e).length };
}

test('the signer has a bytes route exactly when it signs through the WebAssembly symbolize path', () => {
  assert.equal(createTextSigner().blockSigner !== null, wasm);
  assert.equal(createTextSigner({ wasm: false }).blockSigner, null);
  assert.equal(createTextSigner({ shingle: { kind: 'word', k: 2 } }).blockSigner, null);
});

// ---- JSON lines: valid ones from a grammar, then broken by edits that JSON is strict about.

const ws = fc.constantFrom('', ' ', '  ', '\t', '\r', ' \t ');
const str = fc
  .oneof(fc.string({ maxLength: 10 }), fc.constantFrom('text', 'a\\b', 'é', '中文', '\u0000', '\t', '😀', '\u2028', '', 'x"y', '\ud800'))
  .map((s) => JSON.stringify(s));
const num = fc.constantFrom('0', '-0', '1', '-2.5e3', '1E+2', '3.25', '10e-1', '123456789012345678901234567890', '-1.0e0');
const name = fc.oneof(
  { arbitrary: fc.constantFrom('"text"', '"id"'), weight: 3 },
  { arbitrary: fc.constantFrom('"t\\u0065xt"', '"Text"', '"texts"', '"i\\u0064"', '""'), weight: 1 },
  { arbitrary: fc.string({ maxLength: 5 }).map((s) => JSON.stringify(s)), weight: 2 },
);
const scalar = fc.oneof(str, num, fc.constantFrom('true', 'false', 'null'));
const value = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small' }, scalar, scalar, tie('obj'), tie('arr')),
  obj: fc
    .array(fc.tuple(name, ws, ws, tie('v') as fc.Arbitrary<string>), { maxLength: 4 })
    .map((kv) => `{${kv.map(([k, a, b, v]) => `${a}${k}${b}:${a}${v}${b}`).join(',')}}`),
  arr: fc.array(fc.tuple(ws, tie('v') as fc.Arbitrary<string>), { maxLength: 3 }).map((xs) => `[${xs.map(([a, v]) => a + v).join(',')}]`),
})).v as fc.Arbitrary<string>;
const objectLine = fc
  .tuple(fc.array(fc.tuple(name, ws, ws, fc.oneof(value, str, str, num)), { maxLength: 5 }), ws, ws)
  .map(([kv, a, b]) => `${a}{${kv.map(([k, x, y, v]) => `${x}${k}${y}:${x}${v}`).join(',')}${b}}${a}`);
/** Edits JSON is strict about: any byte JSON gives a meaning, control characters, non-JSON spaces. */
const piece = fc.constantFrom(
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  '"',
  '\\',
  '\\u',
  '\\x',
  '\t',
  '\u0001',
  '0',
  '01',
  '-',
  '.',
  'e',
  '+',
  'tru',
  'nul',
  ' ',
  '\u00a0',
  '\ufeff',
  'é',
  '1.',
  '.5',
);
const broken = fc.tuple(objectLine, fc.array(fc.tuple(fc.nat(), fc.nat({ max: 3 }), piece), { minLength: 1, maxLength: 3 })).map(([l, edits]) => {
  let s = l;
  for (const [at, del, ins] of edits) {
    const i = at % (s.length + 1);
    s = s.slice(0, i) + ins + s.slice(i + del);
  }
  return s;
});
const anyLine = fc.oneof(objectLine, broken, broken, value, fc.constantFrom('', '   ', '\t', '\u00a0', '[]', '"text"', '{"text":"a"} x', '{"text":"a"}}'));

function parsed(l: string): { ok: boolean; obj?: Record<string, unknown> } {
  try {
    const v = JSON.parse(l) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? { ok: true, obj: v as Record<string, unknown> } : { ok: false };
  } catch {
    return { ok: false };
  }
}

const KEYS = [Buffer.from('text'), Buffer.from('id')];

test('scanJsonLine: never calls an object what JSON.parse rejects; finds every top-level key JSON.parse finds, with its value', () => {
  let objects = 0;
  let unsure = 0;
  let blank = 0;
  fc.assert(
    fc.property(anyLine, fc.string({ maxLength: 6 }), (l, pad) => {
      // The line inside a larger buffer, as a block's lines are.
      const before = Buffer.from(pad.replace(/\n/g, ' ') + '\n');
      const buf = Buffer.concat([before, Buffer.from(l), Buffer.from('\n{"text":"next"}\n')]);
      const start = before.length;
      const end = start + Buffer.byteLength(l);
      const loaded = loadBytes(buf);
      const found = new Int32Array(6);
      const kind = scanJsonLine(loaded.mem, loaded.base + start, loaded.base + end, KEYS, found, loaded.stringStop);
      // The JavaScript scan gives the same answer and spans.
      const found2 = new Int32Array(6);
      assert.equal(scanJsonLine(buf, start, end, KEYS, found2, stringStopJs(buf)), kind);
      // What the line's bytes say (a lone surrogate in \`l\` was written as U+FFFD).
      const p = parsed(buf.toString('utf8', start, end));
      if (kind === LINE_BLANK) {
        blank++;
        assert.match(l, /^[ \t\r]*$/);
        return;
      }
      if (kind === LINE_UNSURE) {
        unsure++;
        return;
      }
      assert.equal(kind, LINE_OBJECT);
      assert.ok(p.ok, `an object for JSON.parse: ${JSON.stringify(l)}`);
      objects++;
      for (let k = 0; k < KEYS.length; k++) {
        const key = KEYS[k]!.toString();
        const own = Object.prototype.hasOwnProperty.call(p.obj, key);
        assert.equal(found[3 * k]! >= 0, own, `key ${key} found as JSON.parse finds it`);
        if (!own) continue;
        assert.deepEqual([found2[3 * k]!, found2[3 * k + 1]!], [found[3 * k]! - loaded.base, found[3 * k + 1]! - loaded.base]);
        const tok = buf.toString('utf8', found[3 * k]! - loaded.base, found[3 * k + 1]! - loaded.base);
        assert.deepEqual(JSON.parse(tok), p.obj![key]);
        assert.equal(found[3 * k + 2] === 1, typeof p.obj![key] === 'string' && tok.includes('\\'));
      }
    }),
    { numRuns: 3000, seed: 7 },
  );
  assert.ok(objects > 500 && unsure > 500 && blank > 10, `every answer is exercised (${objects} objects, ${unsure} unsure, ${blank} blank)`);
});

test('scanJsonLine: answers for every object line JSON.stringify writes with plain, distinct top-level names', () => {
  const plainName = fc.string({ maxLength: 6 }).filter((s) => JSON.stringify(s) === `"${s}"`);
  fc.assert(
    fc.property(fc.dictionary(plainName, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }), fc.string(), (obj, text) => {
      const withText = { ...obj, text };
      const l = JSON.stringify(withText);
      const buf = Buffer.from(l);
      const loaded = loadBytes(buf);
      const found = new Int32Array(6);
      assert.equal(scanJsonLine(loaded.mem, loaded.base, loaded.base + buf.length, KEYS, found, loaded.stringStop), LINE_OBJECT, l);
      assert.equal(JSON.parse(buf.toString('utf8', found[0]! - loaded.base, found[1]! - loaded.base)), text);
    }),
    { numRuns: 500, seed: 8 },
  );
  // Nested deeper than 256: left to JSON.parse.
  const deep = `{"a":${'['.repeat(300)}${']'.repeat(300)},"text":"x"}`;
  assert.equal(scanJsonLine(Buffer.from(deep), 0, deep.length, KEYS, new Int32Array(6), stringStopJs(Buffer.from(deep))), LINE_UNSURE);
});

test('the byte-scan kernels give what JavaScript gives, at every offset and length', { skip: !wasm && 'no WebAssembly' }, () => {
  const unit = fc.constantFrom('a', ' ', '"', '\\', '\t', '\u0000', '\u001f', '\u007f', 'é', '中', '😀', 'x', 'yz', '\u0080');
  fc.assert(
    fc.property(fc.array(unit, { maxLength: 80 }).map((x) => x.join('')), fc.nat(), fc.nat(), (s, a, b) => {
      const buf = Buffer.from(s, 'utf8');
      const loaded = loader!.load(buf);
      const p = a % (buf.length + 1);
      const e = p + (b % (buf.length - p + 1));
      assert.equal(loaded.stringStop(loaded.base + p, loaded.base + e) - loaded.base, stringStopJs(buf)(p, e));
      // UTF-16 length over a whole string's bytes (valid UTF-8).
      assert.equal(loaded.units(loaded.base, loaded.base + buf.length), s.length);
    }),
    { numRuns: 1500, seed: 9 },
  );
});

// ---- Blocks: the bytes route against the string route, line for line.

const jsonlLine = fc.oneof(
  { arbitrary: objectLine, weight: 2 },
  {
    arbitrary: fc.tuple(fc.string({ maxLength: 30 }), fc.oneof(fc.string({ maxLength: 4 }), fc.integer({ min: -99, max: 99 }))).map(([t, id]) =>
      JSON.stringify({ id, text: t })
    ),
    weight: 4,
  },
  { arbitrary: fc.string({ maxLength: 30 }).map((t) => JSON.stringify({ text: t, meta: { text: 1 } })), weight: 2 },
  { arbitrary: anyLine, weight: 2 },
  {
    arbitrary: fc.constantFrom(
      '{"text":1}',
      '{"id":[1],"text":"a"}',
      '{"id":null,"text":"a"}',
      '{"text":"a","text":"b"}',
      '{"id":1.50,"text":"é"}',
      '{"id":"1e3","text":"a\\nb"}',
      '{"text":"😀 x"}',
      '{"text":"\\u00e9t\\u00e9"}',
    ),
    weight: 2,
  },
);
const textLine = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.tuple(fc.string({ maxLength: 6 }), fc.string({ maxLength: 20 })).map(([a, b]) => `${a}\t${b}`),
  fc.constantFrom('', ' ', '\u00a0', 'a\tb', '\tx', 'id\t', '😀\tx', '\u00a0\tb', 'é\ttext', 'x\ty\tz'),
).map((s) => s.replace(/[\n]/g, ' '));
const eol = fc.constantFrom('\n', '\n', '\r\n', '\r\r\n');

function block(lines: string[], eols: string[], last: boolean, bom: boolean): Buffer {
  const body = lines.map((l, i) => l + (i < lines.length - 1 || last ? eols[i % eols.length] : '')).join('');
  return Buffer.from((bom ? '\ufeff' : '') + body, 'utf8');
}

function outcome(run: () => ParsedBlock | undefined): { block?: ParsedBlock; error?: string } {
  try {
    return { block: run() };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/**
 * Reads `buf` both ways and asserts the bytes route gives parseLineBlock's records (texts decoded
 * from their spans), rows, lines, byte places, skips and error; returns how many texts each kind had.
 */
async function sameAsStringRoute(buf: Buffer, spec: LineParseSpec, firstLine: number, stripBom: boolean): Promise<{ bytes: number; strings: number }> {
  const want = await parseLineBlock(buf, spec, firstLine, stripBom).then(
    (b) => ({ block: b as ParsedBlock | undefined, error: undefined as string | undefined }),
    (e: Error) => ({ block: undefined, error: e.message }),
  );
  const got = outcome(() => parseLineBlockBytes(buf, spec, { firstLine, stripBom, load: loadBytes }));
  assert.equal(got.error, want.error);
  const counts = { bytes: 0, strings: 0 };
  if (!want.block) return counts;
  const b = got.block as ReturnType<typeof parseLineBlockBytes>;
  assert.ok(b, 'the route reads valid UTF-8 blocks of this spec');
  const texts = b.records.map((r, i) => {
    if (b.spans[2 * i]! < 0) {
      counts.strings++;
      return r.text;
    }
    assert.equal(r.text, '');
    counts.bytes++;
    return buf.toString('utf8', b.spans[2 * i]!, b.spans[2 * i + 1]!);
  });
  const strip = (x: ParsedBlock): unknown => ({ ...x, records: x.records.map((r) => ({ id: r.id, row: r.row, line: r.line })) });
  const { spans: _s, units, ...rest } = b;
  assert.deepEqual(strip(rest), strip(want.block));
  assert.deepEqual(texts, want.block.records.map((r) => r.text));
  assert.deepEqual(Array.from(units), texts.map((t) => t.length));
  return counts;
}

for (const format of ['jsonl', 'text', 'idtext'] as const) {
  test(`parseLineBlockBytes (${format}): the same records, rows, lines, byte places, skips and errors as parseLineBlock`, async () => {
    const lineArb = format === 'jsonl' ? jsonlLine : textLine;
    let bytesTexts = 0;
    let stringTexts = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(lineArb, { minLength: 1, maxLength: 8 }),
        fc.array(eol, { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        fc.integer({ min: 1, max: 50 }),
        async (lines, eols, last, bom, skipInvalid, withId, firstLine) => {
          const buf = block(lines, eols, last, bom);
          const spec: LineParseSpec = { path: 'x', name: 'in.jsonl', format, skipInvalid, fields: withId ? { id: 'id' } : undefined };
          const n = await sameAsStringRoute(buf, spec, firstLine, bom);
          bytesTexts += n.bytes;
          stringTexts += n.strings;
        },
      ),
      { numRuns: 400, seed: 11 },
    );
    assert.ok(
      bytesTexts > 200 && (format === 'text' || stringTexts > 50),
      `both kinds of texts are exercised (${bytesTexts} as bytes, ${stringTexts} as strings)`,
    );
  });
}

test('parseLineBlockBytes (tsv): the same records, rows, lines, byte places, skips and errors as parseLineBlock, first block or not, one text column or several', async () => {
  const headers = ['text', 'id\ttext', 'a\ttext\tb', 'id\tTitle\tText\tbody', 'Text '];
  const field = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('', 'é中😀', '"quoted"', ' x ', '\r')).map((f) => f.replace(/[\t\n]/g, ' '));
  const row = fc.array(field, { minLength: 1, maxLength: 5 }).map((fs) => fs.join('\t'));
  // Mostly rows as wide as the header; some ragged, empty or a lone tab.
  const rowsFor = (header: string): fc.Arbitrary<string[]> => {
    const n = header.split('\t').length;
    const fit = fc.array(field, { minLength: n, maxLength: n }).map((fs) => fs.join('\t'));
    return fc.array(fc.oneof({ arbitrary: fit, weight: 6 }, { arbitrary: row, weight: 1 }, { arbitrary: fc.constantFrom('', '\t', 'x'), weight: 1 }), {
      maxLength: 8,
    });
  };
  const headerAndRows = fc.constantFrom(...headers).chain((h) => rowsFor(h).map((rows) => [h, rows] as const));
  let bytesTexts = 0;
  let stringTexts = 0;
  await fc.assert(
    fc.asyncProperty(
      headerAndRows,
      fc.array(eol, { minLength: 1, maxLength: 3 }),
      fc.boolean(),
      fc.boolean(),
      fc.boolean(),
      fc.constantFrom<LineParseSpec['columns']>(
        undefined,
        { text: ['text'] },
        { text: ['a', 'text'] },
        { text: ['title', 'BODY'], id: 'Id' },
        { text: ['body'], id: 'id' },
        { id: 'ID' },
        { text: ['nope'] },
      ),
      fc.boolean(),
      async ([header, lines], eols, last, first, skipInvalid, columns, leadingBlank) => {
        // The first block holds the header line (after blank lines, maybe); a later one is read after it.
        const body = first ? [...(leadingBlank ? [''] : []), header, ...lines] : lines;
        if (body.length === 0) return;
        const buf = block(body, eols, last, first && leadingBlank);
        const spec: LineParseSpec = { path: 'x', name: 'in.tsv', format: 'tsv', skipInvalid, columns, header: first ? undefined : header };
        const firstLine = first ? 1 : 7;
        const n = await sameAsStringRoute(buf, spec, firstLine, first);
        bytesTexts += n.bytes;
        stringTexts += n.strings;
      },
    ),
    { numRuns: 600, seed: 13 },
  );
  assert.ok(bytesTexts > 200 && stringTexts > 40, `both kinds of texts are exercised (${bytesTexts} as bytes, ${stringTexts} as strings)`);
});

test('parseLineBlockBytes: declines several or dotted JSONL text fields, and invalid UTF-8 (the string route locates it)', () => {
  const buf = Buffer.from('{"key":1,"body":"a"}\n');
  const spec = (s: Partial<LineParseSpec>): LineParseSpec => ({ path: 'x', name: 'x', format: 'jsonl', skipInvalid: false, ...s });
  let loads = 0;
  const load = (b: Buffer): BlockBytes => (loads++, loadBytes(b));
  assert.equal(
    parseLineBlockBytes(buf, spec({ format: 'tsv' }), { firstLine: 1, stripBom: false, load }),
    undefined,
    'a later TSV block without the header line',
  );
  assert.equal(parseLineBlockBytes(buf, spec({ fields: { text: ['a', 'b'] } }), { firstLine: 1, stripBom: true, load }), undefined);
  assert.equal(parseLineBlockBytes(buf, spec({ fields: { text: ['meta.text'] } }), { firstLine: 1, stripBom: true, load }), undefined);
  assert.equal(parseLineBlockBytes(Buffer.from('{"text":"\xff"}\n', 'latin1'), spec({}), { firstLine: 1, stripBom: true, load }), undefined);
  assert.equal(loads, 0, 'the block is not loaded when the route declines it');
  assert.ok(parseLineBlockBytes(buf, spec({ fields: { text: ['body'], id: 'key' } }), { firstLine: 1, stripBom: true, load }));
});

// ---- Signing from bytes.

test("signSpan gives signInto's signature and fingerprintSpan the set for any text, preset and k, or both decline (then the string is used)", {
  skip: !wasm && 'no WebAssembly',
}, () => {
  const unit = fc.constantFrom(
    'a',
    'b',
    'Z',
    ' ',
    '  ',
    '\n',
    '\t',
    '.',
    'é',
    'É',
    'ß',
    '\u0301',
    'д',
    'Ж',
    'ש',
    'ع',
    '\u07ff',
    '\u0800',
    '中',
    '\u00a0',
    '\u3000',
    '😀',
    'ﬁ',
    'Σ',
    '1',
    '\r',
  );
  // Most texts hold only characters the kernels handle under every preset; the others may hold
  // some left to JavaScript (marks, ligatures, final sigma, characters outside the BMP): declined.
  const simple = fc.constantFrom('a', 'b', 'Z', ' ', '  ', '\n', '\t', '.', 'é', 'É', 'д', 'Ж', 'ש', 'ع', '\u07ff', '\u0800', '中', '\u3000', '1');
  const text = fc.oneof(
    { arbitrary: fc.array(simple, { maxLength: 300 }).map((xs) => xs.join('')), weight: 3 },
    { arbitrary: fc.array(unit, { maxLength: 300 }).map((xs) => xs.join('')), weight: 1 },
  );
  let signed = 0;
  let declined = 0;
  fc.assert(
    fc.property(
      fc.array(text, { minLength: 1, maxLength: 6 }),
      fc.constantFrom('default', 'lowercase-collapse', 'none'),
      fc.integer({ min: 1, max: 9 }),
      fc.constantFrom('oph', 'classic'),
      (texts, preset, k, method) => {
        const signer = createTextSigner({ shingle: { k, normalize: { preset: preset as 'default' } }, minhash: { method: method as 'oph', numPerm: 64 } });
        const bs = signer.blockSigner!;
        const parts = texts.map((t) => Buffer.from(t, 'utf8'));
        const buf = Buffer.concat(parts.flatMap((p) => [Buffer.from('{"text":"'), p, Buffer.from('"}\n')]));
        bs.load(buf);
        let at = 0;
        for (let i = 0; i < texts.length; i++) {
          const s = at + 9;
          const e = s + parts[i]!.length;
          at = e + 3;
          const got = new Uint32Array(64);
          const want = new Uint32Array(64);
          const ok = bs.signSpan(s, e, got);
          const wantOk = signer.signInto(texts[i]!, want);
          // The sharded verification's route: the span's fingerprints make the string's set, or both decline.
          const fps = bs.fingerprintSpan(s, e);
          assert.equal(fps === null, ok === null);
          if (fps) assert.deepEqual(toSortedSet(fps.slice()), signer.set(texts[i]!));
          if (ok === null) {
            declined++;
            continue;
          }
          signed++;
          assert.equal(ok, wantOk);
          if (ok) assert.deepEqual(got, want);
        }
      },
    ),
    { numRuns: 200, seed: 12 },
  );
  assert.ok(signed > 200 && declined > 20, `both outcomes are exercised (${signed} signed, ${declined} declined)`);
});

test('signRange: the same reply through the bytes route as through strings, for every line format, with errors and skips', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'nd-bytes-'));
  try {
    const docs = ['the quick brown fox jumps', 'über straße café', '中文文本在这里', 'emoji 😀 here and there', 'a\\nb', 'short', 'x'.repeat(200)];
    const files: [LineParseSpec['format'], string, boolean][] = [
      [
        'jsonl',
        docs.map((t, i) => JSON.stringify({ id: i % 2 ? i : `d${i}`, text: t.replace('\\n', '\n') })).join('\r\n') + '\n\n  \n{"text":"\\u00e9t\\u00e9 x"}',
        false,
      ],
      ['jsonl', docs.map((t) => JSON.stringify({ text: t })).join('\n') + '\n{"text":1}\n[1]\n{"text":"a",}\n', true],
      ['text', '\ufeff' + docs.join('\n') + '\r\n\n\u00a0\n', false],
      ['idtext', docs.map((t, i) => `${i}\t${t}`).join('\n') + '\nno tab here\n\u00a0\n', true],
      ['tsv', '\ufeffid\ttitle\ttext\r\n' + docs.map((t, i) => `${i}\tT${i}\t${t}`).join('\r\n') + '\n\nragged\trow\n9\tx\tlast', true],
    ];
    // One signer for every range: its block space grows (and its memory with it) from range to range.
    const bytesSigner = createTextSigner();
    const stringSigner = createTextSigner({ wasm: false });
    let ranges = 0;
    for (const [format, body, skipInvalid] of files) {
      const file = path.join(dir, `f.${format}`);
      // The longer file last, and large enough to need more block space than the first ranges; a
      // long text signed from bytes, then one declined (signed from the block's decoded bytes).
      writeFileSync(file, format === 'idtext' ? body + `${'9\t' + 'long text '.repeat(20_000)}\n10\t😀 declined after it\n` : body);
      // The whole file first: the long text grows the memory in the middle of a range.
      for (const chunk of [1 << 20, 40]) {
        for (const range of planLineRanges(file, chunk).ranges) {
          for (const withId of [false, true]) {
            const spec: LineParseSpec = {
              ...{ path: file, name: file, format, skipInvalid, fields: withId && format === 'jsonl' ? { id: 'id' } : undefined },
              ...(format === 'tsv' ? { header: 'id\ttitle\ttext', columns: withId ? { id: 'id', text: ['title', 'text'] } : undefined } : {}),
            };
            const req = { id: 1, kind: 'signRange' as const, spec, ...range, first: range.start === 0, bands: { bands: 8, rows: 4 }, withSignatures: true };
            const viaBytes = (await signRange(req, bytesSigner)).reply;
            const viaStrings = (await signRange(req, stringSigner)).reply;
            // The text hashes that fold copies are of the bytes on one route and of the string on the
            // other (two domains by design: a text hashed both ways misses a fold, never makes a wrong one).
            assert.equal(viaBytes.th.length, 2 * viaBytes.count);
            const { th: _b, ...bytesReply } = viaBytes;
            const { th: _s, ...stringsReply } = viaStrings;
            assert.deepEqual(bytesReply, stringsReply, `${format} ${withId ? 'with ids' : ''} [${range.start}, ${range.end})`);
            ranges++;
          }
        }
      }
    }
    assert.ok(ranges > 20);
  } finally {
    closeRangeFiles();
    rmSync(dir, { recursive: true, force: true });
  }
});
