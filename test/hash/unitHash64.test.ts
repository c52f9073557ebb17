/**
 * The spans unit hash (src/hash/unitHash64.ts) three ways: the JavaScript (16-bit pieces), the
 * kernel's `hashUnits` (i64 multiplies) and a BigInt reference written from the module comment,
 * over every length up to 80 code units at odd and even starts, and known answers that pin the
 * format (a change is a new job version: `units.u32` holds these hashes).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { unitHash64, unitHash64Text } from '../../src/hash/unitHash64.js';
import { kernelsModule } from '../../src/wasm/wasmKernels.js';

const M64 = (1n << 64n) - 1n;
const K = {
  A0: 0x243f6a8885a308d3n,
  B0: 0x13198a2e03707344n,
  PA: 0x9e3779b97f4a7c15n,
  PB: 0xc2b2ae3d27d4eb4fn,
  PC: 0x165667b19e3779f9n,
  PD: 0xd6e8feb86659fd93n,
};

/** The hash as the module comment states it, in BigInt. */
function reference(c: ArrayLike<number>): [number, number] {
  const lane = (x: bigint, k: bigint, p: bigint): bigint => {
    const y = ((x ^ k) * p) & M64;
    return y ^ (y >> 32n);
  };
  const word = (i: number, n: number): bigint => {
    let w = 0n;
    for (let j = 0; j < n; j++) w |= BigInt(c[i + j]!) << BigInt(16 * j);
    return w;
  };
  let a = K.A0;
  let b = K.B0;
  const len = c.length;
  let i = 0;
  for (; i + 8 <= len; i += 8) {
    a = lane(a, word(i, 4), K.PA);
    b = lane(b, word(i + 4, 4), K.PB);
  }
  let r = len - i;
  if (r >= 4) {
    a = lane(a, word(i, 4), K.PA);
    i += 4;
    r -= 4;
  }
  if (r > 0) b = lane(b, word(i, r), K.PB);
  b = lane(b, BigInt(len), K.PC);
  b = lane(b, a, K.PD);
  b = lane(b, 0n, K.PA);
  return [Number(b & 0xffffffffn), Number(b >> 32n)];
}

function kernel(): ((c: Uint16Array) => [number, number]) | undefined {
  const mod = kernelsModule();
  if (!mod) return undefined;
  const e = new WebAssembly.Instance(mod, {}).exports as unknown as { hashUnits(p: number, len: number, out: number): number; memory: WebAssembly.Memory };
  return (c) => {
    // At an odd code-unit offset too: the kernel reads unaligned words.
    const at = 4096 + 2 * (c.length % 3);
    new Uint16Array(e.memory.buffer, at, c.length).set(c);
    e.hashUnits(at, c.length, 0);
    const out = new Uint32Array(e.memory.buffer, 0, 2);
    return [out[0]!, out[1]!];
  };
}

test('unitHash64: JavaScript, the kernel and a BigInt reference agree on every length to 80 and any code units', () => {
  const k = kernel();
  assert.ok(k || process.env['NEARDUP_NO_WASM'], 'the kernels compile on this runtime');
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 80 }), fc.nat(5), (codes, pad) => {
      const c = Uint16Array.from(codes);
      const want = reference(c);
      const out = new Uint32Array(2);
      // From an offset inside a larger array, as the document normalized once is read.
      const big = new Uint16Array(pad + c.length + 3).fill(0xbeef);
      big.set(c, pad);
      assert.equal(unitHash64(big, pad, c.length, out), c.length);
      assert.deepEqual([out[0], out[1]], want);
      unitHash64Text(String.fromCharCode(...c), out);
      assert.deepEqual([out[0], out[1]], want);
      if (k) assert.deepEqual(k(c), want);
    }),
    { numRuns: 2000, seed: 51 },
  );
  for (let n = 0; n <= 80; n++) {
    const c = Uint16Array.from({ length: n }, (_, i) => (i * 40503 + n) & 0xffff);
    const out = new Uint32Array(2);
    unitHash64(c, 0, n, out);
    assert.deepEqual([out[0], out[1]], reference(c), `length ${n}`);
    if (k) assert.deepEqual(k(c), reference(c), `kernel, length ${n}`);
  }
});

test("unitHash64: known answers (the format of a spans job's unit hashes)", () => {
  const out = new Uint32Array(2);
  const hex = (t: string): string => {
    unitHash64Text(t, out);
    return out[1]!.toString(16).padStart(8, '0') + out[0]!.toString(16).padStart(8, '0');
  };
  assert.deepEqual(
    ['', 'a', 'we use cookies to improve your experience.', 'ümlaut ü', '日本語の文'].map(hex),
    KNOWN,
  );
});

const KNOWN = ['c689bfcfb4042ea3', '58502fdf8640be6b', '9e4d690a29e3e890', '902f1e8047a2125e', '33879e661b546dad'];
