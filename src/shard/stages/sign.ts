/**
 * Stage 1, sign (one task per group of shards): reads the shards, signs every document and writes
 * their band keys partitioned by band-key hash, so that join task p reads only partition p of every
 * sign task's output.
 *
 * Outputs in `sign/NNNNN/`: `keys.bin` (kind `band-keys`): columns band, hi, lo, shard, doc, th0, th1
 * (uint32, one row per band per non-empty document; th0, th1 the document's 64-bit text hash
 * `textHash2`, by which join folds exact copies), grouped by partition; `pstart` (float64, P + 1) gives
 * partition p's rows [pstart[p], pstart[p+1]), in (shard, doc) order. `ids.bin` (kind `id-keys`,
 * when the input has explicit ids): columns shard, doc, line (uint32), id (string), grouped by the
 * partition of the id's hash with `pstart`. `docs.bin` (kind `docs`): one row per document, in
 * (shard, doc) order with `sstart` (the task's shards + 1): row (uint32, within its shard),
 * explicit (uint32: 1 when `id` came from the input), id (string), and where its line lies in a
 * plain line-format shard: start (float64; −1 in a shard read sequentially) and length (uint32).
 * Later stages take ids from here, and verification reads texts again at those offsets. With a
 * keep policy that ranks by a value (`--keep longest|shortest|max:F|min:F`), also: key (float64:
 * the text's length in UTF-16 code units, or the field's value, NaN when it has none), keyLo
 * (float64: the exact remainder of an integer value beyond 2^53, else 0), keyStatus
 * (uint32: 0 ok, 1 missing, 2 not a number or an ISO date), line (uint32, 1-based) and rowGroup
 * (uint32: a Parquet row group + 1, else 0) for the error that names a clustered document's bad
 * field; decide picks each cluster's kept member by key.
 *
 * A plain line-format shard is read in byte ranges, its texts signed as bytes (`signRanges`, the
 * route of `neardup dedup` on one file); other shards through the sequential reader.
 * @module
 */
import type { TextSigner } from '../../sketch/textSigner.js';
import { Reusable, withSigner } from './reuse.js';
import { openInput, rowCount } from '../../io/read/read.js';
import { bandKeys } from '../../lsh/bandKeys.js';
import { textHash2 } from '../../hash/murmur3.js';
import { isUserError } from '../../common/errors.js';
import { runPerShard } from '../files/perShard.js';
import type { JobSpec } from '../files/job.js';
import { checkShard } from '../files/shardIdentity.js';
import { openShard, shardLineSpec, type SignMarker } from '../files/shardInput.js';
import { signRanges } from '../../dedup/rangedSource.js';
import { SignOutput } from '../files/signRows.js';
import { keepNeedsValues, keepReadError, keepReadOptions, keepValue, parseKeepPolicy, type KeepRule } from '../../cluster/keepPolicy.js';

/** Runs sign task `t` (idempotent): signs each shard of its group into one keys file (and one ids file). */
export function runSign(workDir: string, job: JobSpec, t: number): Promise<object> {
  // One signer for the task's shards (and the process's next tasks): each has its own WebAssembly memory, costly to make per tiny shard.
  return withSigner(job, (signer) =>
    outputs.with(async (kept) => {
      // Kept between a process's tasks: rows grown afresh per task left glibc's heap 50 MB larger after 8.
      if (kept.out?.keyRows.partitions !== job.partitions) kept.out = new SignOutput(job.partitions);
      const out = kept.out;
      out.clear();
      return runPerShard<SignMarker>(
        { workDir, job, stage: 'sign', task: t },
        (s) => signShard({ workDir, job, signer, out, s }),
        (dir) => out.write(dir, job, keepRule(job) !== undefined),
      );
    }));
}

/** Sign outputs kept between the tasks of a process (one per running task). */
const outputs = new Reusable<{ out?: SignOutput }>(() => ({}));

/** One shard of a sign task: where it is read and signed, and where its rows go. */
interface ShardSigning {
  workDir: string;
  job: JobSpec;
  signer: TextSigner;
  out: SignOutput;
  /** The shard. */
  s: number;
}

async function signShard(sh: ShardSigning): Promise<SignMarker> {
  const { workDir, job, out, s } = sh;
  const keysBefore = out.keyRows.mark();
  const idsBefore = out.ids.length;
  const docsBefore = out.docRow.length;
  let marker: SignMarker;
  try {
    checkShard(workDir, job, s);
    const spec = shardLineSpec(job, s);
    marker = spec ? await signInRanges(sh, spec) : await signSequentially(sh);
    const rule = keepRule(job);
    if (rule) await keepValues(sh, rule, out.docRow.length - docsBefore);
    // Changed while it was read: the keys would mix two versions.
    checkShard(workDir, job, s);
    marker.ids = out.ids.length - idsBefore;
  } catch (e) {
    if (!(job.onBadShard === 'skip' && isUserError(e))) throw e;
    out.truncate(keysBefore, idsBefore, docsBefore);
    // The whole shard is left out, and the summary names it with the reader's error (file and line).
    marker = { docs: 0, rows: 0, emptyDocs: 0, chars: 0, bytes: 0, format: '', skippedRecords: 0, skipped: (e as Error).message };
  }
  out.sstart.push(out.docRow.length);
  return marker;
}

/** The job's keep policy when it ranks by a value, else undefined. */
export function keepRule(job: JobSpec): KeepRule | undefined {
  if (job.keep === undefined) return undefined;
  const rule = parseKeepPolicy(job.keep);
  return keepNeedsValues(rule) ? rule : undefined;
}

/**
 * Records what the keep policy ranks the shard's `docs` documents by, from one more sequential pass
 * (the same reader as `neardup dedup`'s, so lengths and values agree). A bad value is recorded, not
 * thrown: only a clustered document's is an error (raised by components).
 */
async function keepValues(sh: ShardSigning, rule: KeepRule, docs: number): Promise<void> {
  const { job, out, s } = sh;
  let d = 0;
  try {
    const input = await openInput(job.shards[s]!.path, keepReadOptions({ ...job.read }, rule));
    for await (const r of input.records) {
      if (d >= docs) break;
      const v = keepValue(rule, r.text, r.title);
      out.docKey.push(v.value);
      out.docKeyLo.push(v.lo);
      out.docKeyStatus.push(v.status);
      out.docLine.push(r.line);
      out.docRowGroup.push(r.rowGroup === undefined ? 0 : r.rowGroup + 1);
      d++;
    }
  } catch (e) {
    throw keepReadError(e, rule);
  }
  if (d !== docs) throw new Error(`${job.shards[s]!.path} changed while it was being read (${d} documents now, ${docs} then)`);
}

/** Signs a plain line-format shard in byte ranges, as `neardup dedup` reads one file. */
async function signInRanges(sh: ShardSigning, spec: NonNullable<ReturnType<typeof shardLineSpec>>): Promise<SignMarker> {
  const { job, signer, out, s } = sh;
  const nb = job.bands;
  const P = job.partitions;
  const marker: SignMarker = { docs: 0, rows: 0, emptyDocs: 0, chars: 0, bytes: 0, format: spec.format, skippedRecords: 0 };
  let d = 0;
  let lastRow = -1;
  // Records of a range arrive (onRecords) just before its keys (take); starts and lengths once all are placed.
  let pending: { ids: string[] | undefined; lines: Int32Array; rows: Int32Array } | undefined;
  const index = await signRanges(
    {
      kind: 'ranges',
      spec,
      onRecords: (r) => {
        pending = r;
        marker.skippedRecords += r.skipped;
        if (r.examples[0] && marker.firstSkip === undefined) marker.firstSkip = r.examples[0].message;
        marker.bytes = r.bytesRead;
      },
    },
    { pool: undefined, signer, banding: { bands: nb, rows: job.rows }, withSignatures: false },
    (batch) => {
      const r = pending!;
      const n = batch.count;
      for (let i = 0; i < n; i++) {
        out.document(s, d + i, r.ids?.[i], r.lines[i]!, r.rows[i]!, 0, 0, P);
        if (batch.present[i]) out.keyRows.addDocument(s, d + i, nb, batch.hi, batch.lo, i, n, batch.th[2 * i]!, batch.th[2 * i + 1]!);
        else marker.emptyDocs++;
      }
      if (n > 0) lastRow = r.rows[n - 1]!;
      marker.chars += batch.chars;
      d += n;
    },
  );
  const base = out.docStart.length - d;
  for (let i = 0; i < d; i++) out.docStart[base + i] = index.starts[i]!;
  out.docLen.view().set(index.lengths.subarray(0, d), base);
  marker.docs = d;
  // Rows count skipped invalid records too, like the single-process row numbers.
  marker.rows = rowCount(lastRow, d, marker.skippedRecords);
  return marker;
}

/** Signs a shard through the io layer's sequential reader (compressed, Parquet, CSV, …). */
async function signSequentially(sh: ShardSigning): Promise<SignMarker> {
  const { workDir, job, signer, out, s } = sh;
  const nb = job.bands;
  const P = job.partitions;
  const row = new Uint32Array(signer.numPerm);
  const bh = new Uint32Array(nb);
  const bl = new Uint32Array(nb);
  const th = new Uint32Array(2);
  const marker: SignMarker = { docs: 0, rows: 0, emptyDocs: 0, chars: 0, bytes: 0, format: '', skippedRecords: 0 };
  const input = await openShard(workDir, job, s);
  marker.format = input.format;
  let d = 0;
  let lastRow = -1;
  for await (const r of input.records) {
    lastRow = r.row;
    out.document(s, d, r.id, r.line, r.row, -1, 0, P);
    marker.chars += r.text.length;
    if (signer.signInto(r.text, row)) {
      bandKeys(row, nb, job.rows, bh, bl);
      // As a string (a plain shard's texts are hashed as bytes): a copy across the two is not folded, which changes only the work.
      textHash2(th, 0, r.text);
      out.keyRows.addDocument(s, d, nb, bh, bl, 0, 1, th[0]!, th[1]!);
    } else marker.emptyDocs++;
    d++;
  }
  marker.docs = d;
  // Rows count skipped invalid records too, like the single-process row numbers.
  marker.rows = rowCount(lastRow, d, input.skips.count);
  marker.bytes = input.bytesRead();
  marker.skippedRecords = input.skips.count;
  if (input.skips.examples[0]) marker.firstSkip = input.skips.examples[0].message;
  // As one process warns of them (CSV, TSV read with quotes).
  if (input.skips.multiline) Object.assign(marker, { multiline: input.skips.multiline, firstMultiline: input.skips.firstMultiline });
  return marker;
}
