/**
 * Issue #31, item 1: JSONL records pass through byte for byte. `--output annotate` keeps each input
 * line's bytes and appends the two fields before the closing brace; `--output dedup` writes input
 * lines unchanged; ids keep their literal JSON text (a number id over 2^53 is not rounded) in pairs,
 * clusters, annotate and `index add`. In one process, streamed (byte ranges) and with workers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { appendJsonFields, jsonTopNames, rawJsonValue } from '../../../src/io/read/jsonRaw.js';
import { neardup, tmpDir } from '../../cliUtil.js';

const ws = fc.constantFrom('', ' ', '\t', '  ', ' \t');
const numLit = fc.constantFrom(
  '1e400',
  '-0.0',
  '-0',
  '19.90',
  '1E+2',
  '9007199254740993',
  '123456789012345678901234567890',
  '0.1e-400',
  '-1.5e-3',
  '0',
  '2.50',
);
const strLit = fc.oneof(
  fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s)),
  fc.constantFrom('"\\u00e9"', '"\\/"', '"\\ud83d\\ude00"', '"é"', '"😀"', '"\\n\\t\\""', '"\\u2028"', '"中文"', '"a\\\\b"'),
);
/** Keys other than text and id (a key spelling either would replace the document's field). */
const keyLit = fc.constantFrom('"a"', '"b"', '"2"', '"1"', '"é"', '"\\u0061"', '"cluster"', '"duplicate_of"', '"x y"', '"\\ud83d\\ude00"');
const value = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, numLit, strLit, fc.constantFrom('true', 'false', 'null'), tie('array'), tie('object')),
  array: fc.array(fc.tuple(ws, tie('value'), ws), { maxLength: 3 }).map((xs) => `[${xs.map(([a, v, b]) => `${a}${v as string}${b}`).join(',')}]`),
  object: fc.array(fc.tuple(keyLit, ws, tie('value')), { maxLength: 3 }).map((xs) => `{${xs.map(([k, w, v]) => `${k}${w}:${w}${v as string}`).join(',')}}`),
})).value as fc.Arbitrary<string>;

const WORDS = ['lorem', 'ipsum', 'dolor', 'sit', 'amet', 'é', '😀', 'consectetur', 'adipiscing', 'elit'];
/** A text, written plainly or with its non-ASCII characters escaped (the same string either way). */
const textLit = fc
  .tuple(fc.array(fc.constantFrom(...WORDS.slice(0, 4)), { minLength: 6, maxLength: 9 }), fc.constantFrom(...WORDS), fc.boolean())
  .map(([w, tail, esc]) => {
    const s = JSON.stringify([...w, tail].join(' '));
    return esc ? s.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : s;
  });

/** One record line: the id and text among other members, in any order, with odd spacing. */
const recordArb = fc
  .tuple(textLit, fc.array(fc.tuple(keyLit, value), { maxLength: 4 }), fc.nat(5), fc.nat(5), ws, ws, ws)
  .map(([text, others, ti, ii, w1, w2, w3]) => ({ text, others, ti, ii, w1, w2, w3 }));

/** Ids: consecutive integers around 2^53 (neighbours round to the same double) and beyond 2^63. */
function idLiteral(i: number, base: bigint): string {
  return String(base + BigInt(i));
}

function renderLine(r: { text: string; others: [string, string][]; ti: number; ii: number; w1: string; w2: string; w3: string }, id: string): string {
  const members = r.others.map(([k, v]) => `${k}${r.w2}:${v}`);
  members.splice(Math.min(r.ti, members.length), 0, `"text":${r.w2}${r.text}`);
  members.splice(Math.min(r.ii, members.length), 0, `"id"${r.w2}:${id}`);
  return `${r.w1}{${r.w1}${members.join(`,${r.w3}`)}${r.w3}}${r.w1}`;
}

const ROUTES: string[][] = [[], ['--stream'], ['--stream', '--workers', '2']];

test('annotate and dedup of JSONL keep every line byte for byte; big ids survive pairs, clusters and annotate, on every route', () => {
  const dir = tmpDir();
  let runs = 0;
  fc.assert(
    fc.property(
      fc.array(recordArb, { minLength: 2, maxLength: 8 }),
      fc.constantFrom(9007199254740990n, 18446744073709551610n),
      fc.constantFrom('\n', '\r\n'),
      (records, base, eol) => {
        const ids = records.map((_, i) => idLiteral(i, base));
        const lines = records.map((r, i) => renderLine(r, ids[i]!));
        const file = path.join(dir, `in${runs++}.jsonl`);
        fs.writeFileSync(file, lines.map((l) => l + eol).join(''));
        const route = ROUTES[runs % ROUTES.length]!;
        const args = ['dedup', file, '--id-field', 'id', '--threshold', '0.5', '-q', ...route];
        const ann = neardup([...args, '--output', 'annotate']);
        assert.equal(ann.code, 0, ann.stderr);
        const out = ann.stdout.split(eol === '\r\n' ? '\r\n' : '\n');
        assert.equal(out.pop(), '');
        assert.equal(out.length, lines.length);
        const kept: string[] = [];
        const dupOf = new Map<string, string>();
        for (let i = 0; i < lines.length; i++) {
          const inp = lines[i]!;
          const close = inp.lastIndexOf('}');
          const o = out[i]!;
          assert.ok(o.startsWith(inp.slice(0, close)) && o.endsWith(inp.slice(close)), `line ${i} changed:\n${inp}\n${o}`);
          const added = o.slice(close, o.length - (inp.length - close));
          const m =
            /^,"(?:neardup_)?cluster":(\d+|null),"(?:neardup_)?cluster_size":(\d+|null),"(?:neardup_)?duplicate_of":(null|"\d+"),"(?:neardup_)?similarity":(null|[\d.]+),"(?:neardup_)?kept":(true|false)$/
              .exec(added);
          assert.ok(m, `appended ${added}`);
          assert.doesNotThrow(() => JSON.parse(o));
          assert.equal(m[5] === 'true', m[3] === 'null', 'kept exactly when not a duplicate');
          if (m[3] === 'null') kept.push(inp);
          else {
            const rep = JSON.parse(m[3]!) as string;
            assert.ok(ids.includes(rep), `duplicate_of ${rep} is an input id`);
            dupOf.set(ids[i]!, rep);
          }
        }
        // dedup: the kept lines, byte for byte, with their own line breaks.
        const dd = neardup([...args, '--output', 'dedup']);
        assert.equal(dd.code, 0, dd.stderr);
        assert.equal(dd.stdout, kept.map((l) => l + eol).join(''));
        // clusters and pairs name the ids as written.
        const cl = neardup([...args, '--output', 'clusters']);
        assert.equal(cl.code, 0, cl.stderr);
        for (const l of cl.stdout.split('\n').filter(Boolean)) {
          const c = JSON.parse(l) as { representative: string; members: string[]; duplicate_of: (string | null)[] };
          c.members.forEach((mbr, j) => {
            assert.ok(ids.includes(mbr), `member ${mbr}`);
            // Each member's kept near duplicate, as annotate names it.
            assert.equal(dupOf.get(mbr) ?? null, c.duplicate_of[j]);
          });
        }
        const pr = neardup([...args, '--output', 'pairs', '--output-format', 'jsonl']);
        assert.equal(pr.code, 0, pr.stderr);
        for (const l of pr.stdout.split('\n').filter(Boolean)) {
          const p = JSON.parse(l) as { a: string; b: string };
          assert.ok(ids.includes(p.a) && ids.includes(p.b), l);
        }
      },
    ),
    { numRuns: 12 },
  );
  fs.rmSync(dir, { recursive: true, force: true });
});

test('two ids that round to the same double are two documents: dedup does not call them a duplicate id, index add keeps both', () => {
  const dir = tmpDir();
  const file = path.join(dir, 'big.jsonl');
  const text = 'a flat in rome near the metro with two rooms and a balcony';
  fs.writeFileSync(
    file,
    `{"id":9007199254740992,"text":"${text}"}\n{"id":9007199254740993,"text":"${text}"}\n{"id":1234567890123456789,"text":"cars and boats"}\n`,
  );
  for (const route of [[], ['--stream'], ['--stream', '--workers', '2']]) {
    const r = neardup(['dedup', file, '--id-field', 'id', '-q', ...route]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '9007199254740992\t9007199254740993\t1\n');
  }
  const store = `sqlite:${path.join(dir, 'i.db')}`;
  const add = neardup(['index', 'add', file, '--id-field', 'id', '--store', store, '-q']);
  assert.equal(add.code, 0, add.stderr);
  assert.match(add.stdout, /^9007199254740993\t9007199254740992\t1\t/);
  const check = neardup(['index', 'check', '--store', store]);
  assert.match(check.stdout, /documents 3 /);
  const q = neardup(['index', 'query', file, '--id-field', 'id', '--store', store, '--output-format', 'jsonl']);
  assert.equal(q.code, 0, q.stderr);
  assert.match(q.stdout, /"b":"1234567890123456789"/);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('an id holding a lone surrogate (escaped in JSON, unspellable in UTF-8) is refused on every route, naming its line; --skip-invalid skips it everywhere', () => {
  const dir = tmpDir();
  const file = path.join(dir, 'sur.jsonl');
  const text = 'a flat in rome near the metro with two rooms and a balcony';
  // Written out as UTF-8, both ids would be U+FFFD: one id printed for two documents.
  fs.writeFileSync(
    file,
    `{"id":"a\\ud800","text":"${text}"}\n{"id":"a\\udc00","text":"${text}"}\n{"id":"ok\\ud83d\\ude00","text":"${text}"}\n{"id":"plain","text":"${text}"}\n`,
  );
  const routes: [string, string[]][] = [
    ['memory', ['dedup', file]],
    ['stream', ['dedup', file, '--stream']],
    ['stream, workers', ['dedup', file, '--stream', '--workers', '2']],
    ['job --local', ['job', 'dedup', file, '--local', '--work-dir', path.join(dir, 'w')]],
  ];
  for (const [name, args] of routes) {
    const r = neardup([...args, '--id-field', 'id', '-q']);
    assert.equal(r.code, 2, `${name}: ${r.stderr}`);
    assert.ok(r.stderr.includes(`${file}:1: id field "id" holds a lone surrogate`), `${name}: ${r.stderr}`);
  }
  const outs = routes.map(([name, args], k) => {
    const r = neardup([...args.map((a) => (a.endsWith('/w') ? `${a}-skip${k}` : a)), '--id-field', 'id', '--skip-invalid', '-q']);
    assert.equal(r.code, 0, `${name}: ${r.stderr}`);
    return r.stdout;
  });
  assert.equal(outs[0], 'ok😀\tplain\t1\n');
  for (const o of outs) assert.equal(o, outs[0]);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('the raw JSON helpers agree with JSON.parse on generated lines', () => {
  fc.assert(
    fc.property(recordArb, fc.bigInt({ min: 0n, max: 1n << 70n }), (r, id) => {
      const line = renderLine(r, String(id));
      const obj = JSON.parse(line) as Record<string, unknown>;
      assert.equal(rawJsonValue(line, ['id']), String(id));
      assert.deepEqual(JSON.parse(rawJsonValue(line, ['text'])!), obj['text']);
      assert.deepEqual([...new Set(jsonTopNames(line))].sort(), Object.keys(obj).sort());
      const out = appendJsonFields(line, [['"k"', '1']]);
      assert.deepEqual(JSON.parse(out), { ...obj, k: 1 });
      // The last of a repeated name, as JSON.parse keeps it.
      for (const [k, v] of r.others) {
        const name = JSON.parse(k) as string;
        const raw = rawJsonValue(line, [name]);
        assert.deepEqual(JSON.parse(raw!), obj[name], `${name} ${v}`);
      }
    }),
  );
  assert.equal(appendJsonFields('{ }', [['"a"', 'null']]), '{ "a":null}');
  assert.equal(appendJsonFields(' {"x":{"y":1}} ', [['"a"', '2']]), ' {"x":{"y":1},"a":2} ');
  assert.equal(rawJsonValue('{"m":{"id":1.50},"m":{"id":7e1}}', ['m', 'id']), '7e1');
});

test('sharded: a local job keeps JSONL records byte for byte in annotate and names big ids exactly', () => {
  const dir = tmpDir();
  const shards = path.join(dir, 'shards');
  fs.mkdirSync(shards);
  const text = 'a flat in rome near the metro with two rooms and a balcony';
  const p0 = [`{"id":9007199254740993,"text":"${text}","z":-0.0,"e":1e400,"p":19.90}`, `{ "id" : 9007199254740992 , "text":"${text}" }`];
  const p1 = [`{"id":1234567890123456789,"text":"${text}!","k":"\\u00e9\\/","2":"b","1":"a"}`, `{"id":7,"text":"cars and boats"}`];
  fs.writeFileSync(path.join(shards, 'p0.jsonl'), p0.join('\n') + '\n');
  fs.writeFileSync(path.join(shards, 'p1.jsonl'), p1.join('\r\n') + '\r\n');
  const r = neardup([
    'job',
    'dedup',
    shards,
    '--local',
    '--work-dir',
    path.join(dir, 'w'),
    '--id-field',
    'id',
    '--output',
    'annotate',
    '--out-dir',
    path.join(dir, 'out'),
    '-q',
  ]);
  assert.equal(r.code, 0, r.stderr);
  /** The line with the five tags before its closing brace. */
  const tags = (c: string, n: string, d: string, s: string, k: string): string =>
    `"cluster":${c},"cluster_size":${n},"duplicate_of":${d},"similarity":${s},"kept":${k}`;
  const dup = (l: string, ...t: [string, string, string, string, string]): string =>
    `${l.slice(0, l.lastIndexOf('}'))},${tags(...t)}${l.slice(l.lastIndexOf('}'))}`;
  assert.equal(
    fs.readFileSync(path.join(dir, 'out', 'p0.jsonl'), 'utf8'),
    [dup(p0[0]!, '0', '3', 'null', 'null', 'true'), `{ "id" : 9007199254740992 , "text":"${text}" ,${tags('0', '3', '"9007199254740993"', '1', 'false')}}`]
      .join('\n') + '\n',
  );
  assert.equal(
    fs.readFileSync(path.join(dir, 'out', 'p1.jsonl'), 'utf8'),
    [dup(p1[0]!, '0', '3', '"9007199254740993"', '0.981818', 'false'), dup(p1[1]!, 'null', 'null', 'null', 'null', 'true')].join('\r\n') + '\r\n',
  );
  fs.rmSync(dir, { recursive: true, force: true });
});
