/**
 * Issue #31, item 2: every decoder verifies what the format lets it verify. XXH64 against known
 * values and the zstd command's checksums; the JavaScript zstd route checks each frame's content
 * checksum; our .zst writer writes one; gzip's CRC and length are checked. The property: a
 * compressed input with a byte flipped (or cut short) on every decoding route (zstd command, JS
 * zstd, gzip) is never accepted silently: it decodes to exactly the original bytes, or it is an
 * error naming the file (exit 2 from the CLI).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { Xxh64, XXH64_WASM_BASE64 } from '../../../src/io/codec/xxh64.js';
import { createZstdCompressor } from '../../../src/io/codec/zstd.js';
import { openSource } from '../../../src/io/read/source.js';
import { InputError } from '../../../src/common/errors.js';
import { needsZstd } from '../../helpers/needs.js';
import { neardup, repoRoot, tmpDir } from '../../cliUtil.js';

function xxh64(b: Uint8Array, chunks: number[] = []): bigint {
  const h = new Xxh64();
  let at = 0;
  for (const c of chunks) {
    h.update(b.subarray(at, Math.min(b.length, at + c)));
    at = Math.min(b.length, at + c);
  }
  h.update(b.subarray(at));
  return h.digest();
}

test('XXH64: the reference values, and any split of the input gives the same hash', () => {
  assert.equal(xxh64(Buffer.from('')), 0xef46db3751d8e999n);
  assert.equal(xxh64(Buffer.from('a')), 0xd24ec4f1a98c6e5bn);
  assert.equal(xxh64(Buffer.from('abc')), 0x44bc2cf5ad770999n);
  assert.equal(xxh64(Buffer.from('Nobody inspects the spammish repetition')), 0xfbcea83c8a378bf1n);
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.array(fc.nat(70), { maxLength: 8 }), (b, cuts) => {
      assert.equal(xxh64(b, cuts), xxh64(b));
    }),
  );
});

test('XXH64: src/io/codec/xxh64.ts holds src/io/codec/xxh64.wat compiled', async () => {
  const wabt = await (await import('wabt')).default();
  const wat = fs.readFileSync(path.join(repoRoot, 'src/io/codec/xxh64.wat'), 'utf8');
  const { buffer } = wabt.parseWat('xxh64.wat', wat).toBinary({});
  assert.equal(Buffer.from(buffer).toString('base64'), XXH64_WASM_BASE64);
});

test('XXH64 agrees with the checksums the zstd command writes (lengths around every stripe and page boundary)', needsZstd(), () => {
  const dir = tmpDir();
  for (const n of [0, 1, 3, 4, 7, 8, 31, 32, 33, 63, 64, 100, 65535, 65536, 65537, 200_003]) {
    const data = Buffer.alloc(n);
    for (let i = 0; i < n; i++) data[i] = (i * 2654435761) >>> 24;
    const file = path.join(dir, `d${n}`);
    fs.writeFileSync(file, data);
    const z = spawnSync('zstd', ['-q', '-c', '--check', file]);
    assert.equal(z.status, 0);
    // One frame: its last four bytes are the checksum.
    assert.equal(z.stdout.readUInt32LE(z.stdout.length - 4), Number(xxh64(data) & 0xffffffffn), `length ${n}`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Decodes `file` on the route `zstd` (NEARDUP_ZSTD: cli or js): its bytes, or the error. */
async function decode(file: string, zstd: 'cli' | 'js'): Promise<Buffer | Error> {
  const before = process.env.NEARDUP_ZSTD;
  process.env.NEARDUP_ZSTD = zstd;
  try {
    const src = await openSource(file);
    const out: Buffer[] = [];
    for await (const c of src.chunks) out.push(c);
    return Buffer.concat(out);
  } catch (e) {
    return e as Error;
  } finally {
    if (before === undefined) delete process.env.NEARDUP_ZSTD;
    else process.env.NEARDUP_ZSTD = before;
  }
}

async function ourZstd(data: Buffer): Promise<Buffer> {
  const z = await createZstdCompressor();
  const out: Buffer[] = [];
  z.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((r) => z.on('end', r));
  z.end(data);
  await done;
  return Buffer.concat(out);
}

/** Lines of JSON made of the README's words: text that compresses into several blocks, mostly literals. */
function textOf(seed: number, lines: number): Buffer {
  const words = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8').replace(/["\\]/g, '').split(/\s+/);
  let s = '';
  let x = seed >>> 0 || 1;
  for (let i = 0; i < lines; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    s += `{"id":${i},"text":"${words[x % words.length]} ${words[(x >>> 5) % words.length]} ${x.toString(36)}"}\n`;
  }
  return Buffer.from(s);
}

const SKIPPABLE = Buffer.from([0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3]);

test('a flipped or cut byte in a compressed input is never accepted silently, on every decoding route', needsZstd(), async () => {
  const dir = tmpDir();
  const a = textOf(1, 3000);
  const b = textOf(2, 300);
  const plain = Buffer.concat([a, b]);
  const pa = path.join(dir, 'a');
  const pb = path.join(dir, 'b');
  fs.writeFileSync(pa, a);
  fs.writeFileSync(pb, b);
  const cmd = (p: string): Buffer => spawnSync('zstd', ['-q', '-c', '--check', p]).stdout;
  // Each encoding of `plain`: the zstd command's (two frames and a skippable frame), ours, gzip
  // (one member, and two).
  const encodings: { name: string; bytes: Buffer; routes: ('cli' | 'js')[] }[] = [
    { name: 'zstd-command.zst', bytes: Buffer.concat([cmd(pa), SKIPPABLE, cmd(pb)]), routes: ['cli', 'js'] },
    { name: 'ours.zst', bytes: Buffer.concat([await ourZstd(a), await ourZstd(b)]), routes: ['cli', 'js'] },
    { name: 'one.gz', bytes: gzipSync(plain), routes: ['js'] },
    { name: 'two.gz', bytes: Buffer.concat([gzipSync(a), gzipSync(b)]), routes: ['js'] },
  ];
  async function decodeBytes(bytes: Buffer, route: 'cli' | 'js'): Promise<Buffer | Error> {
    const f = path.join(dir, `x-${route}`);
    fs.writeFileSync(f, bytes);
    return decode(f, route);
  }
  for (const e of encodings) {
    for (const r of e.routes) assert.deepEqual(await decodeBytes(e.bytes, r), plain, `${e.name} decodes on ${r}`);
  }
  let errors = 0;
  let same = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.nat(encodings.length - 1),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      fc.integer({ min: 1, max: 255 }),
      fc.boolean(),
      fc.nat(1),
      async (k, where, xor, cut, routeNo) => {
        const e = encodings[k]!;
        const route = e.routes[routeNo % e.routes.length]!;
        const at = Math.floor(where * e.bytes.length);
        const bad = cut ? e.bytes.subarray(0, Math.max(1, at)) : Buffer.from(e.bytes);
        if (!cut) bad[at]! ^= xor;
        const file = path.join(dir, `bad-${e.name}`);
        fs.writeFileSync(file, bad);
        const got = await decode(file, route);
        if (got instanceof Error) {
          errors++;
          assert.ok(got instanceof InputError, `${e.name} ${route}: ${got.message}`);
          assert.equal(got.file, file);
        } else {
          same++;
          assert.ok(
            got.equals(plain),
            `${e.name} on ${route}, byte ${at} ${cut ? 'cut' : `^ ${xor}`}: decoded ${got.length} bytes that differ from the ${plain.length} written`,
          );
        }
      },
    ),
    { numRuns: 300 },
  );
  assert.ok(errors > 200, `${errors} errors, ${same} unchanged`);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('CLI: a corrupted .zst (either decoder) or .gz is exit 2 naming the file, and writes no output', needsZstd(), () => {
  const dir = tmpDir();
  const plain = textOf(3, 2000);
  const jsonl = path.join(dir, 'in.jsonl');
  fs.writeFileSync(jsonl, plain);
  const zst = path.join(dir, 'in.jsonl.zst');
  assert.equal(spawnSync('zstd', ['-q', '-f', '--check', jsonl, '-o', zst]).status, 0);
  const bz = fs.readFileSync(zst);
  bz[Math.floor(bz.length / 2)]! ^= 0x10;
  fs.writeFileSync(zst, bz);
  for (const route of ['js', 'cli']) {
    const out = path.join(dir, `out-${route}.jsonl`);
    const r = neardup(['dedup', zst, '--output', 'dedup', '--out', out], { env: { NEARDUP_ZSTD: route } });
    assert.equal(r.code, 2, `${route}: ${r.stderr}`);
    assert.match(r.stderr, /in\.jsonl\.zst: invalid zstd data/);
    assert.equal(fs.existsSync(out), false);
  }
  const gz = path.join(dir, 'in.jsonl.gz');
  const bg = gzipSync(plain);
  bg.writeUInt32LE((bg.readUInt32LE(bg.length - 8) ^ 1) >>> 0, bg.length - 8); // the CRC (>>> 0: a CRC past 2^31 stays unsigned)
  fs.writeFileSync(gz, bg);
  const r = neardup(['dedup', gz]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /in\.jsonl\.gz: invalid gzip data/);
  fs.rmSync(dir, { recursive: true, force: true });
});
