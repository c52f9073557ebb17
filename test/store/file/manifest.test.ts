/**
 * The file store's file helpers (src/store/file/manifest.ts): `writeAll` and `writeAt` write every
 * byte, in calls no longer than their chunk. Node refuses one write of 2 GiB or more; a 10M-document store's
 * checkpoint has arrays that long, so the chunking is what lets it be written. `readManifest`: a
 * damaged `manifest.json` (cut anywhere, its parameters gone) is an error naming the file.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { readManifest, writeAll, writeAt, writeManifest } from '../../../src/store/file/manifest.js';
import { NearDupIndex } from '../../../src/online/nearDupIndex.js';

const dir = mkdtempSync(path.join(tmpdir(), 'nd-writeall-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('writeAll writes every byte in order, in calls of at most its chunk', async () => {
  const file = path.join(dir, 'f');
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 5000 }), fc.integer({ min: 1, max: 6000 }), async (bytes, chunk) => {
      const f = await open(file, 'w');
      const sizes: number[] = [];
      const write = f.write.bind(f) as (b: Uint8Array, o: number, n: number) => Promise<{ bytesWritten: number }>;
      (f as unknown as { write: typeof write }).write = (b, o, n) => {
        sizes.push(n);
        return write(b, o, n);
      };
      try {
        await writeAll(f, bytes, chunk);
      } finally {
        await f.close();
      }
      assert.deepEqual(new Uint8Array(readFileSync(file)), bytes);
      assert.ok(sizes.every((n) => n <= chunk), `write sizes ${sizes.join(', ')} over the chunk ${chunk}`);
    }),
    { numRuns: 100 },
  );
});

test('writeAt writes every byte at its place, in calls of at most its chunk, and leaves the rest of the file', async () => {
  const file = path.join(dir, 'g');
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 3000 }), fc.nat(2000), fc.integer({ min: 1, max: 4000 }), async (bytes, pos, chunk) => {
      const before = new Uint8Array(pos + bytes.length + 10).fill(0xee);
      const f = await open(file, 'w+');
      const sizes: number[] = [];
      try {
        await writeAll(f, before);
        const write = f.write.bind(f) as (b: Uint8Array, o: number, n: number, p: number) => Promise<{ bytesWritten: number }>;
        (f as unknown as { write: typeof write }).write = (b, o, n, p) => {
          sizes.push(n);
          return write(b, o, n, p);
        };
        await writeAt(f, bytes, pos, chunk);
      } finally {
        await f.close();
      }
      const want = before.slice();
      want.set(bytes, pos);
      assert.deepEqual(new Uint8Array(readFileSync(file)), want);
      assert.ok(sizes.every((n) => n <= chunk), `write sizes ${sizes.join(', ')} over the chunk ${chunk}`);
    }),
    { numRuns: 100 },
  );
});

test('readManifest: manifest.json cut at any length, or with its parameters gone, is an error naming the file, never a bare JSON or TypeError message', async () => {
  const store = path.join(dir, 'store');
  mkdirSync(store, { recursive: true });
  const manifest = { format: 1, threshold: 0.8, bands: 16, rows: 6, keysPerDoc: 32, shingle: { kind: 'char', k: 5 } };
  await writeManifest(store, { manifest, generation: 0 });
  const file = path.join(store, 'manifest.json');
  const whole = readFileSync(file, 'utf8');
  assert.deepEqual(await readManifest(store), { manifest, generation: 0 });
  const head = JSON.parse(whole) as Record<string, unknown>;
  const damaged = [
    ...Array.from({ length: whole.trimEnd().length }, (_, n) => whole.slice(0, n)),
    'null',
    '[]',
    '"x"',
    ...[null, [], {}, 'x', { keysPerDoc: 0 }, { keysPerDoc: '32' }, { keysPerDoc: 1.5 }].map((m) => JSON.stringify({ ...head, manifest: m })),
    JSON.stringify({ ...head, manifest: undefined }),
  ];
  for (const text of damaged) {
    writeFileSync(file, text);
    await assert.rejects(
      readManifest(store),
      (e: unknown) => e instanceof Error && !(e instanceof TypeError) && e.message.startsWith(`${file}: `) && /damaged|format/.test(e.message),
      JSON.stringify(text),
    );
  }
});

// The hostile review: a manifest.json that is JSON with index parameters missing or mistyped failed
// deep inside the index ("Cannot read properties of undefined (reading 'normalize')"). Each required
// field, removed or given another type, is refused on open, naming the field; the whole file opens.
test('an index manifest with a parameter missing or of another type is refused on open, naming the field', async () => {
  const store = path.join(dir, 'shape');
  const idx = await NearDupIndex.open({ store: `file:${store}` });
  await idx.add('a', 'a small flat near the station with a garden and a view of the park');
  await idx.close();
  const file = path.join(store, 'manifest.json');
  const whole = readFileSync(file, 'utf8');
  const top = JSON.parse(whole) as { manifest: Record<string, unknown> };
  const fields = ['threshold', 'shingle', 'shingle.kind', 'shingle.k', 'minhash', 'minhash.numPerm', 'bands', 'rows'];
  for (const field of fields) {
    for (const value of [undefined, 'x', -1, null]) {
      const m = structuredClone(top);
      const parts = field.split('.');
      const holder = parts.length === 1 ? m.manifest : (m.manifest[parts[0]!] as Record<string, unknown>);
      if (value === undefined) delete holder[parts.at(-1)!];
      else holder[parts.at(-1)!] = value;
      writeFileSync(file, JSON.stringify(m));
      await assert.rejects(NearDupIndex.open({ store: `file:${store}` }), (e: Error) => {
        assert.ok(!(e instanceof TypeError), `${field}=${String(value)}: ${e.message}`);
        assert.match(e.message, /damaged|manifest/, `${field}=${String(value)}`);
        return true;
      });
    }
  }
  writeFileSync(file, whole);
  const back = await NearDupIndex.open({ store: `file:${store}` });
  assert.equal((await back.stats()).documents, 1);
  await back.close();
});
