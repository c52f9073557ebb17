/**
 * Making the fingerprint sets of documents from their texts, as verification needs them: a plain
 * line-format shard's lines read again where sign found them, other shards' texts from the gather
 * outputs; a batch of sets at a time in one growing buffer kept between a process's tasks. Verify
 * makes its candidate documents' sets here, decide those it needs for similarities to kept members.
 * @module
 */
import type { LineParseSpec } from '../../io/ranges/lineRanges.js';
import { textsAt, closeRangeFiles, type ReadScratch } from '../../parallel/rangeJobs.js';
import { ProbeTable, probeJaccardAtLeast } from '../../similarity/probeSet.js';
import type { TextSigner } from '../../sketch/textSigner.js';
import { Reusable, withSigner } from './reuse.js';
import type { ShardFiles } from '../files/perShard.js';
import type { JobSpec } from '../files/job.js';
import { checkShard } from '../files/shardIdentity.js';
import { gatheredShards, type GatheredShard } from '../files/gathered.js';
import type { JobDocs } from '../files/docs.js';
import { numbering, shardLineSpec } from '../files/shardInput.js';

/**
 * The sets of one batch, end to end in one growing buffer: a typed array per set (thousands of a few
 * KB each) cost more in allocation and collection than making the set.
 */
export class BatchSets {
  private data = new Uint32Array(1 << 20);
  private used = 0;
  private readonly at = new Map<number, number>();
  private starts: number[] = [];
  private ends: number[] = [];

  clear(): void {
    this.used = 0;
    this.at.clear();
    this.starts.length = 0;
    this.ends.length = 0;
  }

  /** Keeps a copy of `set` under `key`. */
  add(key: number, set: Uint32Array): void {
    if (this.used + set.length > this.data.length) {
      const d = new Uint32Array(Math.max(this.used + set.length, this.data.length * 2));
      d.set(this.data.subarray(0, this.used));
      this.data = d;
    }
    this.data.set(set, this.used);
    this.at.set(key, this.starts.length);
    this.starts.push(this.used);
    this.used += set.length;
    this.ends.push(this.used);
  }

  /** The set under `key` (a view, valid until the next add). */
  get(key: number): Uint32Array {
    const i = this.at.get(key)!;
    return this.data.subarray(this.starts[i]!, this.ends[i]!);
  }
}

/**
 * Batch buffers kept between the tasks of a process (src/shard/stages/reuse.ts): growing a fresh one to a
 * batch's ~50 MB in every verify task cost more in page faults than copying the sets into it.
 */
export const scratchPool = new Reusable(() => ({ sets: new BatchSets(), table: new ProbeTable(), setTable: new ProbeTable() }));

/** Makes the fingerprint sets of documents from their texts, shard by shard. */
export class SetMaker {
  private readonly specs = new Map<number, LineParseSpec>();
  private readonly scratch: ReadScratch = {};
  private readonly workDir: string;
  private readonly job: JobSpec;
  private readonly docs: JobDocs;
  private readonly gathered: ShardFiles<GatheredShard>;

  /** Sets of the job's documents (`docs`, with texts from `gathered`), made by `signer` through `table`. */
  constructor(
    from: { workDir: string; job: JobSpec; docs: JobDocs; gathered: ShardFiles<GatheredShard> },
    private readonly signer: TextSigner,
    private readonly table: ProbeTable,
  ) {
    ({ workDir: this.workDir, job: this.job, docs: this.docs, gathered: this.gathered } = from);
  }

  /** The distinct sets of documents `want` (ascending, unique) of shard `s`, into `sets` by global number (`offset` + doc). */
  async make(s: number, want: Uint32Array, offset: number, sets: BatchSets): Promise<void> {
    const sd = this.docs.get(s);
    if (!sd.ranged) {
      const texts = this.gathered.get(s).texts(want);
      for (let i = 0; i < want.length; i++) sets.add(offset + want[i]!, this.signer.distinctView(texts[i]!, this.table));
      return;
    }
    let spec = this.specs.get(s);
    if (!spec) {
      checkShard(this.workDir, this.job, s);
      this.specs.set(s, spec = shardLineSpec(this.job, s, true)!);
    }
    const starts = new Float64Array(want.length);
    const lengths = new Int32Array(want.length);
    for (let i = 0; i < want.length; i++) {
      starts[i] = sd.start(want[i]!);
      lengths[i] = sd.length(want[i]!);
    }
    const got = await textsAt({ spec, starts, lengths, firstLine: 1 }, this.scratch);
    const raw = got.bytes as Buffer | undefined;
    // Texts left as bytes are made into sets from their bytes in the signer's memory (never decoded), as dedup's verification does.
    const block = raw && this.signer.blockSigner ? (this.signer.blockSigner.load(raw), this.signer.blockSigner) : undefined;
    for (let i = 0; i < want.length; i++) {
      const text = got.texts[i];
      let set: Uint32Array | undefined;
      if (text === null) {
        const a = got.spans![2 * i]!;
        const b = got.spans![2 * i + 1]!;
        const fps = block?.fingerprintSpan(a, b);
        set = fps ? this.table.distinctView(fps) : this.signer.distinctView(raw!.toString('utf8', a, b), this.table);
      } else set = this.signer.distinctView(text!, this.table);
      sets.add(offset + want[i]!, set);
    }
  }

  /** Checks that every shard read in place is still as planned. */
  checkRead(): void {
    for (const s of this.specs.keys()) checkShard(this.workDir, this.job, s);
  }
}

/** Fingerprint sets of documents by global number, a batch at a time. */
export interface SetSource {
  /** Makes the sets of `docs` (ascending, unique), replacing the last batch's. */
  load(docs: Float64Array): Promise<void>;
  /** Exact Jaccard of two loaded documents. */
  jaccard(x: number, y: number): number;
}

/**
 * Calls `fn` with fingerprint sets of any documents of the job, made from their texts as verify
 * makes them (the decide stage's similarities to kept members under the cluster rule).
 */
export function withSets<T>(workDir: string, job: JobSpec, docs: JobDocs, fn: (sets: SetSource) => Promise<T>): Promise<T> {
  const num = numbering(workDir, job);
  const gathered = gatheredShards(workDir, job);
  return withSigner(job, (signer) =>
    scratchPool.with(async (scratch) => {
      const maker = new SetMaker({ workDir, job, docs, gathered }, signer, scratch.setTable);
      const r = await fn({
        load: (keys) => makeSets(maker, keys, num.docOffset, scratch.sets),
        jaccard: (x, y) => {
          scratch.table.load(scratch.sets.get(x));
          return probeJaccardAtLeast(scratch.table, scratch.sets.get(y), 0);
        },
      });
      maker.checkRead();
      return r;
    })).finally(() => {
      gathered.close();
      closeRangeFiles();
    });
}

/** Makes the sets of `keys` (global numbers, ascending) into `sets`, shard by shard. */
export async function makeSets(maker: SetMaker, keys: Float64Array, docOffset: Float64Array, sets: BatchSets): Promise<void> {
  sets.clear();
  let s = 0;
  for (let j = 0; j < keys.length;) {
    while (keys[j]! >= docOffset[s + 1]!) s++;
    let k = j;
    while (k < keys.length && keys[k]! < docOffset[s + 1]!) k++;
    const want = new Uint32Array(k - j);
    for (let x = j; x < k; x++) want[x - j] = keys[x]! - docOffset[s]!;
    await maker.make(s, want, docOffset[s]!, sets);
    j = k;
  }
}
