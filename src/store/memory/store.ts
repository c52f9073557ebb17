/**
 * The in-process store (the default). Records live in one byte arena; postings in typed arrays:
 * an open-addressing table (`keyTable.ts`, which doubles gradually) maps a 53-bit band key to the
 * head of a chain threaded through `next[slot·K + j]` / `prev[slot·K + j]` (document slot, key
 * position j; doubly linked so that a removal is O(1) whatever the bucket size). A chain's head
 * keeps its key table entry in `prev` (as -2 − entry), so a posting comes off its chain without its
 * key: the table keeps no document's keys (the file store and Redis's log layout keep 12 and 0
 * bytes per document here). No per-key objects.
 * Why this file is long: the posting chains, the slots and the record arena are typed arrays that
 * every operation (link, unlink, growth, compaction, the room check) reads and writes together; the
 * key table, the id index, the expiry heap, the image and the postings check are modules beside it.
 * @module
 */
import { MemoryClusterState, type ClusterState } from '../clusterState.js';
import { ExpiryHeap } from './expiryHeap.js';
import { grown, type MemoryTableImage } from './image.js';
import { grown as roomy, mapped, widened } from '../../common/roomArrays.js';
import { IdTable } from './idTable.js';
import { postingErrors } from './postingCheck.js';
import { DeepPostings } from './deepPostings.js';
import { EMPTY, KeyTable } from './keyTable.js';
import { StoreFullError } from '../errors.js';
import { faultHooks } from '../../common/faults.js';
import type { NearDupStore, PutEntry, StoredDoc, StoreManifest, RemoveEntry } from '../types.js';

/** `next` of a posting on no chain (a free slot's, or past a document's keys). */
const UNLINKED = -2;
/** Links {@link MemoryStore.keysOf} walks back to a chain's head before it looks the posting up among the deep ones. */
const WALK_BACK = 64;
/** Elements one typed array holds on Node 20: the in-process store's records (whole records, ~1–3 KB each). */
export const MAX_ARENA = 2 ** 32;
/** Postings are numbered in 31 bits (`next`, `prev`: Int32Array): ~67M documents of 32 keys. */
export const MAX_POSTINGS = 2 ** 31 - 1;

export type { MemoryTableImage } from './image.js';

/** The most bytes of records the table holds (a test's hook may lower it). */
const arenaMax = () => faultHooks().tableArenaMax?.() ?? MAX_ARENA;
/** The most document slots a table of `K` postings per slot holds (a test's hook may lower it). */
const slotsMax = (K: number) => faultHooks().tableSlotsMax?.() ?? Math.floor(MAX_POSTINGS / K);

/** A store held in this process's memory; lost when the process exits (see save/load for snapshots). */
export class MemoryStore implements NearDupStore {
  readonly kind = 'memory';
  private manifest: StoreManifest | null = null;
  private K = 1;
  /** Document id ↔ slot. */
  private idt = new IdTable();
  private free: number[] = [];
  private slots = 0;
  private recOff = new Float64Array(1024);
  private recLen = new Uint32Array(1024);
  private arena = new Uint8Array(1 << 16);
  private arenaUsed = 0;
  private arenaLive = 0;
  private next = new Int32Array(0);
  private prev = new Int32Array(0);
  /** Band key → its chain's head (src/store/memory/keyTable.ts). */
  private table = new KeyTable();
  private mark = new Uint32Array(1024);
  private gen = 0;
  private readonly expiry = new ExpiryHeap();
  /** The chains of postings deep in long chains, for {@link MemoryStore.keysOf}; dropped by every write. */
  private deep: DeepPostings | null = null;

  async open(manifest: StoreManifest): Promise<StoreManifest | null> {
    if (this.manifest) return this.manifest;
    this.manifest = manifest;
    this.K = Math.max(1, manifest.keysPerDoc);
    this.next = new Int32Array(1024 * this.K);
    this.prev = new Int32Array(1024 * this.K);
    return null;
  }

  private link(key: number, p: number): void {
    this.table.link(key, p, this.next, this.prev);
  }

  /**
   * Takes posting `p` off its chain, in O(1) and without its key: chains are doubly linked (a
   * bucket can hold a large share of the index: shallow forest keys), and a chain's head holds its
   * key table entry in `prev` (as -2 − entry). Why: the table keeps no document's keys.
   */
  private unlink(p: number): void {
    const { next, prev } = this;
    const before = prev[p]!;
    if (before === EMPTY) return;
    const after = next[p]!;
    next[p] = UNLINKED;
    prev[p] = EMPTY;
    if (after !== EMPTY) prev[after] = before;
    if (before >= 0) {
      next[before] = after;
      return;
    }
    const e = this.table.entryOfHead(p, -2 - before);
    if (after !== EMPTY) this.table.setHead(e, after);
    else this.table.drop(e, prev);
  }

  /** Takes every posting of document slot `slot` off its chain. */
  private unlinkSlot(slot: number): void {
    for (let p = slot * this.K, end = p + this.K; p < end; p++) this.unlink(p);
    this.deep = null;
  }

  private newSlot(): number {
    const f = this.free.pop();
    if (f !== undefined) return f;
    const s = this.slots++;
    if (s >= this.recLen.length) this.growSlots(Math.max(s + 1, Math.min(this.recLen.length * 2, slotsMax(this.K))));
    return s;
  }

  /**
   * Room for `cap` document slots: in place within the arrays' buffers' room, else a copy into
   * buffers with room for several times as many (src/common/roomArrays.ts). Why: doubling by copy
   * took ~3 GB of fresh pages and a copy inside one add past 10^7 documents, and 1.4 s of a
   * restart's fold of 300k documents at 2.3M (bench/RESULTS.md).
   */
  private growSlots(cap: number): void {
    const { K } = this;
    this.recOff = roomy(this.recOff, cap);
    this.recLen = roomy(this.recLen, cap);
    this.mark = roomy(this.mark, cap);
    this.next = roomy(this.next, cap * K);
    this.prev = roomy(this.prev, cap * K);
  }

  /**
   * Throws unless every document of a batch can go in: a {@link StoreFullError} when records of
   * `bytes` (a replaced document's old record freed) outgrow the arena, a RangeError when one has more
   * keys than the store takes. Checked before a put changes anything, so that a batch goes in whole or
   * not at all (the file store checks before it writes its files).
   */
  checkRoom(docs: { id: string; bytes: number; keys: number }[]): void {
    let live = this.arenaLive;
    const added = new Set<string>();
    for (const d of docs) {
      if (d.keys > this.K) throw new RangeError(`document ${d.id} has ${d.keys} keys, the store takes ${this.K}`);
      const s = this.idt.slotOf(d.id);
      live += d.bytes - (s === EMPTY ? 0 : this.recLen[s]!);
      if (s === EMPTY) added.add(d.id);
    }
    const max = arenaMax();
    const slots = this.slots + Math.max(0, added.size - this.free.length);
    const most = slotsMax(this.K);
    if (live <= max && slots <= most) return;
    const what = live > max
      ? `its band table's records would outgrow their one array of ${max} bytes`
      : `its band table would hold more than ${most} documents of ${this.K} keys (postings are numbered in 31 bits)`;
    throw new StoreFullError(`the index is full: ${what}; nothing of this batch was added: split the index`);
  }

  private writeRecord(slot: number, rec: Uint8Array): void {
    if (this.arenaUsed + rec.length > this.arena.length) {
      const max = arenaMax();
      // Compact instead of growing when at least half the arena is garbage, or when growing cannot make room.
      if (this.arenaLive * 2 < this.arenaUsed || this.arenaUsed + rec.length > max) this.compactArena();
      const need = this.arenaUsed + rec.length;
      if (need > this.arena.length) {
        if (need > max) throw new StoreFullError(`the band table's records outgrow their one array of ${max} bytes: split the index`);
        let cap = this.arena.length * 2;
        while (cap < need) cap *= 2;
        cap = Math.min(cap, max);
        // In place within the buffer's room, else a copy with room for more. The old buffer is not
        // given back: records handed out are views of it.
        let a = widened(this.arena, need, cap);
        if (!a) {
          a = mapped(Uint8Array, cap, 4 * cap);
          a.set(this.arena.subarray(0, this.arenaUsed));
        }
        this.arena = a;
      }
    }
    this.arena.set(rec, this.arenaUsed);
    this.recOff[slot] = this.arenaUsed;
    this.recLen[slot] = rec.length;
    this.arenaUsed += rec.length;
    this.arenaLive += rec.length;
  }

  private compactArena(): void {
    const a = new Uint8Array(Math.min(arenaMax(), Math.max(1 << 16, this.arenaLive * 2)));
    let o = 0;
    for (let s = 0; s < this.slots; s++) {
      if (!this.idt.has(s)) continue;
      const off = this.recOff[s]!;
      const len = this.recLen[s]!;
      a.set(this.arena.subarray(off, off + len), o);
      this.recOff[s] = o;
      o += len;
    }
    this.arena = a;
    this.arenaUsed = o;
    this.arenaLive = o;
  }

  private record(slot: number): Uint8Array {
    const off = this.recOff[slot]!;
    // A view, no copy: bytes of a buffer are never overwritten (writes append; compaction moves
    // records to a new buffer), so the view stays valid for as long as the caller keeps it.
    return this.arena.subarray(off, off + this.recLen[slot]!);
  }

  async lookup(queries: Float64Array[], limit: number, now?: number): Promise<StoredDoc[][]> {
    const out: StoredDoc[][] = [];
    const expiry = now === undefined ? undefined : this.expiry;
    const K = this.K;
    for (const keys of queries) {
      if (++this.gen === 0xffffffff) {
        this.mark.fill(0);
        this.gen = 1;
      }
      const gen = this.gen;
      const found: StoredDoc[] = [];
      outer: for (let j = 0; j < keys.length; j++) {
        const e = this.table.find(keys[j]!);
        if (e < 0) continue;
        for (let p = this.table.headAt(e); p !== EMPTY; p = this.next[p]!) {
          const slot = (p / K) | 0;
          if (this.mark[slot] === gen) continue;
          this.mark[slot] = gen;
          const id = this.idt.idOf(slot)!;
          if (expiry?.expired(id, now!)) continue;
          found.push({ id, record: this.record(slot) });
          if (found.length >= limit) break outer;
        }
      }
      out.push(found);
    }
    return out;
  }

  async put(entries: PutEntry[]): Promise<void> {
    const K = this.K;
    this.checkRoom(entries.map((e) => ({ id: e.id, bytes: e.record.length, keys: e.keys.length })));
    this.deep = null;
    for (const e of entries) {
      let slot = this.idt.slotOf(e.id);
      if (slot !== EMPTY) {
        // The old keys come off their chains by the links alone (the caller's oldKeys are not needed).
        this.unlinkSlot(slot);
        this.arenaLive -= this.recLen[slot]!;
      } else {
        slot = this.newSlot();
        this.idt.add(e.id, slot);
        // A new slot's postings (zeros from growth, or a freed slot's) are on no chain yet.
        this.next.fill(UNLINKED, slot * K, slot * K + K);
        this.prev.fill(EMPTY, slot * K, slot * K + K);
      }
      this.writeRecord(slot, e.record);
      this.expiry.set(e.id, e.expiresAt);
      this.table.touch(e.keys);
      for (let j = 0; j < e.keys.length; j++) this.link(e.keys[j]!, slot * K + j);
    }
  }

  /**
   * The keys document `id` is linked under, in key order, from the chains (the table keeps no
   * document's keys), or null for an id not here. A posting's key is its chain head's: found by
   * walking back up to {@link WALK_BACK} links, else among the deep postings
   * (src/store/memory/deepPostings.ts, built once until the next write).
   */
  keysOf(id: string): Float64Array | null {
    const slot = this.idt.slotOf(id);
    if (slot === EMPTY) return null;
    const K = this.K;
    const p0 = slot * K;
    let n = 0;
    while (n < K && this.prev[p0 + n] !== EMPTY) n++;
    const out = new Float64Array(n);
    for (let j = 0; j < n; j++) out[j] = this.table.keyAt(this.entryOf(p0 + j));
    return out;
  }

  /** The key table entry of linked posting `p`'s chain (-1 in a broken table). */
  private entryOf(p: number): number {
    let q = p;
    for (let i = 0; i < WALK_BACK; i++) {
      const b = this.prev[q]!;
      if (b < -1) return this.table.entryOfHead(q, -2 - b);
      q = b;
    }
    if (this.deep === null) {
      // Built over one table: a growing table's old entries move over first.
      this.table.settle(this.prev);
      this.deep = DeepPostings.build({ tHead: this.table.arrays().tHead, next: this.next, postings: this.slots * this.K }, WALK_BACK);
    }
    return this.deep.entryOf(p);
  }

  /**
   * Replaces the record of document `id` with `rewrite(current)` unless that is undefined, its keys
   * and expiry left as they are (the file store adding a screen a document lacked); returns whether
   * it did. A record the arena cannot take throws {@link StoreFullError}, the old one kept.
   */
  rewriteRecord(id: string, rewrite: (current: Uint8Array) => Uint8Array | undefined): boolean {
    const s = this.idt.slotOf(id);
    if (s === EMPTY) return false;
    const rec = rewrite(this.record(s));
    if (!rec) return false;
    const old = this.recLen[s]!;
    // As checkRoom does for a batch: live records past the arena's most are refused before any is moved.
    if (this.arenaLive - old + rec.length > arenaMax()) throw new StoreFullError(`the band table's records outgrow their one array of ${arenaMax()} bytes`);
    // A compaction inside writeRecord counts the old record live again: it is taken off after.
    this.writeRecord(s, rec);
    this.arenaLive -= old;
    return true;
  }

  async get(ids: string[]): Promise<(Uint8Array | null)[]> {
    return ids.map((id) => {
      const s = this.idt.slotOf(id);
      return s === EMPTY ? null : this.record(s);
    });
  }

  /** Removes a document; its postings come off their chains by the links alone (`_keys` is not needed). */
  async remove(id: string, _keys?: Float64Array): Promise<boolean> {
    const slot = this.idt.slotOf(id);
    if (slot === EMPTY) return false;
    this.unlinkSlot(slot);
    this.arenaLive -= this.recLen[slot]!;
    this.idt.remove(slot);
    this.expiry.delete(id);
    this.free.push(slot);
    return true;
  }

  async removeMany(entries: RemoveEntry[]): Promise<boolean[]> {
    const out: boolean[] = [];
    for (const e of entries) out.push(await this.remove(e.id, e.keys));
    return out;
  }

  async size(): Promise<number> {
    return this.idt.size;
  }

  async expiredIds(now: number, limit: number): Promise<string[]> {
    return this.expiry.due(now, limit);
  }

  async countExpired(now: number): Promise<number> {
    return this.expiry.count(now);
  }

  async *scan(): AsyncIterable<StoredDoc> {
    yield* this.live();
  }

  /**
   * Every document, in slot order, without waiting between them; each record is a view into the
   * arena (the file store rewrites the locator bytes in place when it compacts its files).
   */
  *live(): Iterable<StoredDoc> {
    for (let s = 0; s < this.slots; s++) {
      const id = this.idt.idOf(s);
      if (id !== undefined) yield { id, record: this.record(s) };
    }
  }

  async stats(): Promise<Record<string, number | string>> {
    return {
      recordBytes: this.arenaLive,
      arenaBytes: this.arena.length,
      distinctKeys: this.table.used,
      keyTableSlots: this.table.size,
      postingBytes: this.next.byteLength + this.prev.byteLength,
    };
  }

  /**
   * Whether the key table is still moving its entries into a doubled table, a few per link
   * (src/store/memory/keyTable.ts): {@link MemoryStore.image} would move the rest at once.
   */
  get growing(): boolean {
    return this.table.growing;
  }

  /** Holds the key table's growth slices back, or lets them run again (KeyTable.hold: a restart's fold). */
  holdGrowth(on: boolean): void {
    this.table.hold(on);
  }

  /** Postings per document slot (`keysPerDoc`, at least 1): posting `slot · this + j` is key j. */
  get keysPerSlot(): number {
    return this.K;
  }

  /**
   * A check of a table rebuilt at open, on ~`samples` live documents spread over the slots: each of
   * their linked postings is its neighbours' neighbour, and a chain's head is its key table entry's
   * head, an entry found from its key's home. A rebuild that lost keys or links, as a worker thread
   * once did, fails it.
   */
  spotCheck(samples = 4096): boolean {
    const { next, prev, table } = this;
    for (let s = 0, step = Math.max(1, Math.floor(this.slots / samples)); s < this.slots; s += step) {
      if (!this.idt.has(s)) continue;
      for (let p = s * this.K, end = p + this.K; p < end; p++) {
        const b = prev[p]!;
        const q = next[p]!;
        if (b === EMPTY) {
          if (q !== UNLINKED) return false;
          continue;
        }
        if (q !== EMPTY && (q < 0 || prev[q] !== p)) return false;
        if (b >= 0) {
          if (next[b] !== p) return false;
          continue;
        }
        const e = table.entryOfHead(p, -2 - b);
        if (table.headAt(e) !== p || table.find(table.keyAt(e)) !== e) return false;
      }
    }
    return true;
  }

  /** The full check of the postings (src/store/memory/postingCheck.ts). */
  postingErrors(): string[] {
    const { idt, K: keysPerSlot, slots } = this;
    const n = slots * keysPerSlot;
    this.table.settle(this.prev);
    return postingErrors({
      ...this.table.arrays(),
      next: this.next.subarray(0, n),
      prev: this.prev.subarray(0, n),
      keysPerSlot,
      slots,
      live: (s) => idt.has(s),
      idOf: (s) => idt.idOf(s),
    });
  }

  /**
   * The table as arrays (views, no copies; the id bytes are packed first), for a checkpoint of it
   * (the file store's `table` file); {@link MemoryStore.fromImage} makes the same table again
   * without inserting document by document.
   */
  image(): MemoryTableImage {
    const n = this.slots;
    this.table.settle(this.prev);
    return {
      slots: n,
      ids: this.idt.image(n),
      free: this.free.slice(),
      recOff: this.recOff.subarray(0, n),
      recLen: this.recLen.subarray(0, n),
      arena: this.arena.subarray(0, this.arenaUsed),
      arenaLive: this.arenaLive,
      next: this.next.subarray(0, n * this.K),
      prev: this.prev.subarray(0, n * this.K),
      ...this.table.arrays(),
      used: this.table.used,
      expiry: this.expiry.entries(),
    };
  }

  /**
   * A store holding the table of `img` (taken by {@link MemoryStore.image} with the same manifest).
   * Arrays longer than `img.slots` (a checkpoint read with room to grow) are taken as they are.
   */
  static async fromImage(manifest: StoreManifest, img: MemoryTableImage): Promise<MemoryStore> {
    const m = new MemoryStore();
    await m.open(manifest);
    const n = img.slots;
    const cap = Math.max(1024, n, img.recLen.length);
    m.slots = n;
    m.idt = IdTable.fromImage(img.ids);
    m.free = img.free.slice();
    m.recOff = grown(Float64Array, img.recOff, cap);
    m.recLen = grown(Uint32Array, img.recLen, cap);
    m.mark = new Uint32Array(cap);
    m.arena = grown(Uint8Array, img.arena, Math.max(1 << 16, img.arenaUsed ?? img.arena.length));
    m.arenaUsed = img.arenaUsed ?? img.arena.length;
    m.arenaLive = img.arenaLive;
    m.next = grown(Int32Array, img.next, cap * m.K);
    m.prev = grown(Int32Array, img.prev, cap * m.K);
    m.table = new KeyTable(img.tKey, img.tHead, img.used);
    for (const [id, at] of img.expiry) m.expiry.set(id, at);
    return m;
  }

  private clusters: MemoryClusterState | undefined;

  /** Cluster labels, in memory like everything else here. */
  clusterState(): ClusterState {
    return (this.clusters ??= new MemoryClusterState());
  }

  async close(): Promise<void> {}
}
