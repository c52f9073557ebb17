/**
 * Running a symbolize kernel whose symbol tables are filled in on demand: the class and symbol
 * tables in kernel memory mirror the JavaScript `SymbolTable` one block of 256 code units at a
 * time, copied in the first time a text meets the block (most texts meet a handful).
 * @module
 */

/**
 * Runs `kernel()` (a symbolize kernel: the symbol count, or −(i+1) at the first unit i of a class
 * it does not handle), and each time it stops at a unit of a block not yet copied in, calls
 * `sync(block)` (which must build and copy the block and mark it in `synced`) and runs it again.
 * Returns the symbol count, or −1 when it stops at a unit of a block already in: a class the
 * kernels leave to JavaScript. `unitAt(i)`: the code unit at unit (or byte) i of the text.
 */
export function symbolizeSynced(kernel: () => number, unitAt: (i: number) => number, synced: Uint8Array, sync: (block: number) => void): number {
  for (;;) {
    const n = kernel();
    if (n >= 0) return n;
    const block = unitAt(-n - 1) >>> 8;
    if (synced[block]) return -1;
    sync(block);
  }
}

/**
 * The code unit that the valid UTF-8 sequence at `bytes[i]` starts (a high surrogate for four
 * bytes), as the kernels over UTF-8 read it.
 */
export function utf8UnitAt(bytes: Uint8Array, i: number): number {
  const b = bytes[i]!;
  if (b < 0x80) return b;
  if (b < 0xe0) return ((b & 0x1f) << 6) | (bytes[i + 1]! & 0x3f);
  if (b < 0xf0) return ((b & 0x0f) << 12) | ((bytes[i + 1]! & 0x3f) << 6) | (bytes[i + 2]! & 0x3f);
  return 0xd800;
}
