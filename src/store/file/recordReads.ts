/**
 * Reads of the file store's records file for lookups and gets. A few records (a query's candidates)
 * are read synchronously, ~1–4 µs each from the page cache; many (a batch of adds' candidates) with
 * up to 64 positioned reads at once, so that records not in the page cache wait for the disk
 * together instead of one after another: at 10^7 documents the records file outgrows the page
 * cache, a read from the disk took ~100 µs, and bulk adds spent most of their time waiting for them
 * one at a time. A query's few reads stay synchronous: a read from the page cache took ~3.5 µs so,
 * and ~12 µs through the thread pool. Reads in flight are tracked: a compaction or a close waits
 * for them before it closes the file they read.
 * @module
 */
import { readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { readFull } from './manifest.js';
import type { Place } from './replay.js';

/** Positioned reads in flight at once, per call. */
const AT_ONCE = 64;
/** Records from which a call reads them in parallel (fewer: one after another, synchronously). */
const PARALLEL_FROM = 16;

const pastEnd = (where: string, at: number) => new Error(`${where}: record at byte ${at} runs past the end of the records file`);

/** Reads records of one store's records file; `where` names the store in errors. */
export class RecordReads {
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly where: string) {}

  /** One record, read now. */
  one(fh: FileHandle, p: Place): Uint8Array {
    const out = Buffer.allocUnsafe(p.len);
    for (let o = 0; o < out.length;) {
      const n = readSync(fh.fd, out, o, out.length - o, p.at + o);
      if (n === 0) throw pastEnd(this.where, p.at);
      o += n;
    }
    return out;
  }

  /** The records at `places` of `fh` (fewer than 16 read synchronously; more, up to 64 at once). */
  async many(fh: FileHandle, places: Place[]): Promise<Uint8Array[]> {
    if (places.length < PARALLEL_FROM) return places.map((p) => this.one(fh, p));
    const out: Uint8Array[] = new Array(places.length);
    let next = 0;
    const reader = async () => {
      while (next < places.length) {
        const i = next++;
        out[i] = await this.read(fh, places[i]!);
      }
    };
    const all = Promise.all(Array.from({ length: Math.min(AT_ONCE, places.length) }, reader));
    this.inFlight.add(all);
    try {
      await all;
    } finally {
      this.inFlight.delete(all);
    }
    return out;
  }

  private async read(fh: FileHandle, p: Place): Promise<Uint8Array> {
    const out = Buffer.allocUnsafe(p.len);
    if ((await readFull(fh, out, p.at)) < p.len) throw pastEnd(this.where, p.at);
    return out;
  }

  /** Settles once every read started so far has. */
  async settled(): Promise<void> {
    await Promise.allSettled(this.inFlight);
  }
}
