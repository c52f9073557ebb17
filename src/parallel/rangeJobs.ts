/**
 * The worker side of reading in parallel: a signing worker reads a byte range of a line-format file
 * itself, parses it with the input's reader and signs it (pass 1), or reads the lines of given
 * documents and returns their fingerprint sets (verification). The main thread then only places
 * the results; it never decodes, parses or copies the texts.
 * @module
 */
import { closeSync, openSync } from 'node:fs';
import { parseLineBlock, problemOf, readRange, type BlockProblem, type LineParseSpec, type ParsedBlock } from '../io/ranges/lineRanges.js';
import { jsonTextKey, parseLineBlockBytes, type BytesBlock } from '../io/ranges/lineBlockBytes.js';
import { lineHasBackslash, plainStringField } from '../io/read/jsonLine.js';
import { resolveHeader } from '../io/read/delimited.js';
import { makeContext } from '../io/read/record.js';
import type { TextSigner } from '../sketch/textSigner.js';
import { bandKeys } from '../lsh/bandKeys.js';
import { textHash2 } from '../hash/murmur3.js';

/** Pass 1: read, parse and sign the byte range [start, end) of `spec.path`. */
export interface SignRangeRequest {
  id: number;
  kind: 'signRange';
  spec: LineParseSpec;
  start: number;
  end: number;
  /** The file's first range: a byte-order mark there is dropped. */
  first: boolean;
  bands: { bands: number; rows: number };
  withSignatures: boolean;
}

/** What pass 1 learns of one range. Lines and rows are local to the range (first line 1, first row 0). */
export interface SignRangeReply {
  id: number;
  count: number;
  present: Uint8Array;
  /** Band keys, band by band: record i's key in band b at [b·count + i]. */
  hi: Uint32Array;
  lo: Uint32Array;
  sigs?: Uint32Array;
  /** Byte offset in the file of each record's line, and its length without the line break. */
  starts: Float64Array;
  lengths: Int32Array;
  /** Two 32-bit hashes of each record's text (`textHash2`), to fold identical texts. */
  th: Uint32Array;
  /** Each record's text length in UTF-16 code units (what bounds its set for verification). */
  units: Int32Array;
  /** Each record's line and row within the range. */
  lines: Int32Array;
  rows: Int32Array;
  /** Each record's explicit id, when the format or fields give one. */
  ids?: string[];
  /** Lines and rows in the range; characters of all texts. */
  lineCount: number;
  rowCount: number;
  chars: number;
  skipped: number;
  examples: BlockProblem[];
  bom: boolean;
  /** The input error that stopped the range (its line is local to the range). */
  problem?: BlockProblem;
  error?: string;
}

/** Verification: the fingerprint sets of the documents whose lines are at `starts` (ascending). */
export interface RangeSetsRequest {
  id: number;
  kind: 'rangeSets';
  spec: LineParseSpec;
  starts: Float64Array;
  lengths: Int32Array;
  /** The first document's line in the file, for messages. */
  firstLine: number;
  /** Where the sets go, as in `SignRequest.arena`. */
  arena: SetTargets;
  /** Pairs to score against the sets, as in `SignRequest.score`. */
  score?: ScoreJob;
}

/**
 * Pairs for a worker to score while it makes a batch's sets: k-th pair = (set of the batch's
 * document `b[k]`, the held set at pair k of `a`: offset in 32-bit values and length in the arena's
 * memory). Pairs come in ascending order of `b`.
 */
export interface ScoreJob {
  b: Int32Array;
  a: Int32Array;
  threshold: number;
}

/** Where a batch's sets go: blocks of a set arena's shared memory (src/parallel/setArena.ts). */
export interface SetTargets {
  /** The arena's memory. */
  memory: WebAssembly.Memory;
  /** The arena's id (a worker keeps its kernels for the memory it last saw). */
  id: number;
  /** Per document of the batch, its set's block: offset in 32-bit values, capacity in values. */
  targets: Int32Array;
  /**
   * A scratch block: offset in 32-bit values, bytes, and how many of its first bytes are the probe
   * table's region; the rest holds the text being made into a set (src/sketch/arenaSetWriter.ts).
   */
  scratch: [number, number, number];
}

const fds = new Map<string, number>();

/** An open descriptor of `path`, kept for the worker's lifetime (one per file). */
function fdOf(path: string): number {
  let fd = fds.get(path);
  if (fd === undefined) {
    fd = openSync(path, 'r');
    fds.set(path, fd);
  }
  return fd;
}

/** Closes the descriptors this worker opened. */
export function closeRangeFiles(): void {
  for (const fd of fds.values()) closeSync(fd);
  fds.clear();
}

/** Ranges up to this size are read into the signer's memory (pass 1 reads 4 MiB ranges). */
const IN_PLACE_RANGE = 32 << 20;

/** Pass 1 on one range: parse, then band keys (and signatures when asked) of every record. */
export async function signRange(req: SignRangeRequest, signer: TextSigner): Promise<{ reply: SignRangeReply; transfer: ArrayBuffer[] }> {
  const parsed = await parseRange(req, signer);
  if ('problem' in parsed) return { reply: problemReply(req.id, parsed.problem), transfer: [] };
  const reply = signRecords(req, signer, parsed);
  return { reply, transfer: transferOf(reply) };
}

/** A range read and parsed: its bytes, its records, and their texts' byte spans when the signer signs from bytes. */
type ParsedRange = { buf: Buffer; block: ParsedBlock; byteTexts: BytesBlock | undefined };

/** Reads and parses the range; the input error that stops it, if any. */
async function parseRange(req: SignRangeRequest, signer: TextSigner): Promise<ParsedRange | { problem: BlockProblem }> {
  const bytes = signer.blockSigner;
  // Read straight into the signer's memory when it signs from bytes: a fresh 4 MiB buffer per range cost page faults, and a copy.
  // Not a range of a few huge lines: the signer would make room for texts as long as the range (~10 bytes a byte), and such lines
  // take the string route anyway.
  const inPlace = bytes && req.end - req.start <= IN_PLACE_RANGE ? bytes.space(req.end - req.start) : undefined;
  const buf = readRange(fdOf(req.spec.path), req.start, req.end, inPlace);
  try {
    // Texts left as bytes where the route reads them (src/io/ranges/lineBlockBytes.ts), else strings.
    const byteTexts = bytes ? parseLineBlockBytes(buf, req.spec, { firstLine: 1, stripBom: req.first, load: (b) => bytes.load(b) }) : undefined;
    return { buf, block: byteTexts ?? (await parseLineBlock(buf, req.spec, 1, req.first)), byteTexts };
  } catch (e) {
    const problem = problemOf(e);
    if (!problem) throw e;
    return { problem };
  }
}

/** The reply of a range stopped by an input error: no records. */
function problemReply(id: number, problem: BlockProblem): SignRangeReply {
  const none = new Uint32Array(0);
  return {
    ...{ id, count: 0, present: new Uint8Array(0), hi: none, lo: none, th: none, starts: new Float64Array(0), lengths: new Int32Array(0) },
    ...{ units: new Int32Array(0), lines: new Int32Array(0), rows: new Int32Array(0), lineCount: 0, rowCount: 0, chars: 0, skipped: 0, examples: [] },
    ...{ bom: false, problem },
  };
}

/** Signs every record of a parsed range: the per-record loop, kept whole (it is the hot path of pass 1). */
function signRecords(req: SignRangeRequest, signer: TextSigner, { buf, block, byteTexts }: ParsedRange): SignRangeReply {
  const bytes = signer.blockSigner;
  const { records } = block;
  const { spans, units: textUnits } = byteTexts ?? {};
  const n = records.length;
  const k = signer.numPerm;
  const nb = req.bands.bands;
  const present = new Uint8Array(n);
  const hi = new Uint32Array(n * nb);
  const lo = new Uint32Array(n * nb);
  const th = new Uint32Array(2 * n);
  const sigs = req.withSignatures ? new Uint32Array(n * k) : undefined;
  const starts = new Float64Array(n);
  const lines = new Int32Array(n);
  const rows = new Int32Array(n);
  const units = new Int32Array(n);
  let ids: string[] | undefined;
  const row = new Uint32Array(k);
  let chars = 0;
  for (let i = 0; i < n; i++) {
    const r = records[i]!;
    starts[i] = req.start + block.starts[i]!;
    lines[i] = r.line;
    rows[i] = r.row;
    if (r.id !== undefined) (ids ??= new Array<string>(n))[i] = r.id;
    const len = textUnits ? textUnits[i]! : r.text.length;
    chars += len;
    units[i] = len;
    const s = spans ? spans[2 * i]! : -1;
    const e = spans ? spans[2 * i + 1]! : -1;
    // A byte span the route declines is signed as its decoded string.
    if (s < 0) textHash2(th, i, r.text);
    else textHash2(th, i, null, buf, s, e);
    const signed = s < 0 ? signer.signInto(r.text, row) : (bytes!.signSpan(s, e, row) ?? signer.signInto(buf.toString('utf8', s, e), row));
    if (!signed) continue;
    present[i] = 1;
    sigs?.set(row, i * k);
    bandKeys(row, nb, req.bands.rows, hi, lo, i, n);
  }
  return {
    ...{ id: req.id, count: n, present, hi, lo, th, sigs, starts, lengths: block.lengths, units, lines, rows, ids },
    ...{ lineCount: block.lines, rowCount: block.rows, chars, skipped: block.skipped, examples: block.examples, bom: block.bom },
  };
}

/** The reply's arrays, moved to the main thread rather than copied. */
function transferOf(r: SignRangeReply): ArrayBuffer[] {
  return [r.present, r.hi, r.lo, r.th, r.starts, r.lengths, r.units, r.lines, r.rows, ...(r.sigs ? [r.sigs] : [])].map((a) => a.buffer as ArrayBuffer);
}

/**
 * A batch's texts as verification reads them again: strings, or the spans of their UTF-8 bytes
 * (text and id⇥text lines, TSV rows whose text is one column, and JSONL fields written without
 * escapes: `plainStringField` in src/io/read/jsonLine.ts).
 */
export interface DocTexts {
  /** Document i's text, or null when it is `bytes[spans[2i] .. spans[2i + 1])`. */
  texts: (string | null)[];
  bytes?: Uint8Array;
  spans?: Int32Array;
}

/**
 * Buffers {@link textsAt} reuses from one batch to the next (a worker's, which makes a batch's sets
 * before it reads the next): a fresh buffer or two of a few MB per batch cost page faults.
 */
export interface ReadScratch {
  joined?: Buffer;
  whole?: Buffer;
}

/** `bytes` bytes of `scratch[which]` (grown when short), or a fresh buffer without scratch. */
function scratchBuffer(scratch: ReadScratch | undefined, which: keyof ReadScratch, bytes: number): Buffer {
  if (!scratch) return Buffer.allocUnsafe(bytes);
  let buf = scratch[which];
  if (!buf || buf.length < bytes) buf = scratch[which] = Buffer.allocUnsafe(Math.max(bytes, 2 * (buf?.length ?? 0)));
  return buf.subarray(0, bytes);
}

/** The column of a TSV spec's texts when they come from one column (from its header line), else −1. */
function tsvTextColumn(spec: LineParseSpec): number {
  if (spec.format !== 'tsv' || spec.header === undefined) return -1;
  try {
    const layout = resolveHeader(spec.header.split('\t'), spec.columns ?? {}, makeContext(spec.name, false, false, { count: 0, examples: [] }), 0);
    return layout.textIdx.length === 1 ? layout.textIdx[0]! : -1;
  } catch {
    return -1;
  }
}

/**
 * The lines at `req.starts` read from the file: line i is `src[at[i] .. at[i] + lengths[i])`. Dense
 * lines take one read of the whole span, where they lie; sparse ones a read each, joined (with a
 * newline after each).
 */
function readLinesAt(req: Pick<RangeSetsRequest, 'spec' | 'starts' | 'lengths'>, scratch: ReadScratch | undefined): { src: Buffer; at: Int32Array } {
  const fd = fdOf(req.spec.path);
  const lengths = req.lengths;
  const n = req.starts.length;
  let total = 0;
  for (let i = 0; i < n; i++) total += lengths[i]! + 1;
  const first = req.starts[0]!;
  const span = req.starts[n - 1]! + lengths[n - 1]! - first;
  const at = new Int32Array(n);
  let src: Buffer;
  if (span <= 4 * total) {
    src = readRange(fd, first, first + span, scratchBuffer(scratch, 'whole', span));
    if (src.length !== span) throw changed(req.spec.name);
    for (let i = 0; i < n; i++) at[i] = req.starts[i]! - first;
  } else {
    src = scratchBuffer(scratch, 'joined', total);
    for (let i = 0, o = 0; i < n; i++) {
      const s = req.starts[i]!;
      // Read where it goes in the joined buffer: no buffer per line.
      const got = readRange(fd, s, s + lengths[i]!, src.subarray(o));
      if (got.length !== lengths[i]) throw changed(req.spec.name);
      at[i] = o;
      o += got.length;
      src[o++] = 10;
    }
  }
  return { src, at };
}

/**
 * The spans of the lines' texts in `src` when every one is plain bytes: text lines, id⇥text lines
 * (the text after the first tab), or TSV rows whose text is one column; undefined otherwise.
 */
function plainSpans(spec: LineParseSpec, src: Buffer, at: Int32Array, lengths: Int32Array): Int32Array | undefined {
  const n = at.length;
  /** The end of line i without the CR the line readers drop before its LF. */
  const endOf = (i: number): number => {
    const e = at[i]! + lengths[i]!;
    return e > at[i]! && src[e - 1] === 13 ? e - 1 : e;
  };
  if (spec.format === 'text' || spec.format === 'idtext') {
    // A text line is its text, an id⇥text line's text follows its first tab (pass 1 checked their
    // UTF-8).
    const idText = spec.format === 'idtext';
    const spans = new Int32Array(2 * n);
    let whole = true;
    for (let i = 0; i < n && whole; i++) {
      const s = at[i]!;
      const e = endOf(i);
      const tab = idText ? src.indexOf(9, s) : s - 1;
      if (tab < s - 1 || tab >= e) whole = false;
      spans[2 * i] = tab + 1;
      spans[2 * i + 1] = e;
    }
    if (whole) return spans;
  }
  const column = tsvTextColumn(spec);
  if (column >= 0) {
    // A TSV row's text is its one text column (pass 1 checked every row's width and UTF-8).
    const spans = new Int32Array(2 * n);
    let whole = true;
    for (let i = 0; i < n && whole; i++) {
      const e = endOf(i);
      let from = at[i]!;
      for (let c = 0; c < column && from >= 0; c++) {
        const tab = src.indexOf(9, from);
        from = tab >= 0 && tab < e ? tab + 1 : -1;
      }
      const tab = from < 0 ? -1 : src.indexOf(9, from);
      if (from < 0) whole = false;
      spans[2 * i] = from;
      spans[2 * i + 1] = tab >= 0 && tab < e ? tab : e;
    }
    if (whole) return spans;
  }
  return undefined;
}

/**
 * The texts of the documents at `req.starts`: the lines are read (one read when they lie close
 * together) and parsed again with the input's reader, except text and id⇥text lines, TSV rows whose
 * text is one column, and JSONL lines whose text field is written without escapes, which are left
 * as bytes. Throws when a parsed line no longer holds one valid record (the file changed since
 * pass 1).
 */
export async function textsAt(req: Pick<RangeSetsRequest, 'spec' | 'starts' | 'lengths' | 'firstLine'>, scratch?: ReadScratch): Promise<DocTexts> {
  const n = req.starts.length;
  if (n === 0) return { texts: [] };
  const lengths = req.lengths;
  const { src, at } = readLinesAt(req, scratch);
  const texts: (string | null)[] = new Array<string | null>(n).fill(null);
  const plain = plainSpans(req.spec, src, at, lengths);
  if (plain) return { texts, bytes: src, spans: plain };
  const field = jsonTextKey(req.spec);
  let spans: Int32Array | undefined;
  // The lines parsed as strings: all of them, or those the byte route leaves.
  let rest: number[] | undefined;
  if (field) {
    spans = new Int32Array(2 * n);
    const found = new Int32Array(2);
    rest = [];
    const escapes = lineHasBackslash(src);
    for (let i = 0; i < n; i++) {
      const s = at[i]!;
      const e = s + lengths[i]!;
      if (plainStringField(src, s, e, field, found, escapes(s, e))) {
        spans[2 * i] = found[0]!;
        spans[2 * i + 1] = found[1]!;
      } else rest.push(i);
    }
  }
  const want = rest ? rest.length : n;
  if (want > 0) {
    // The lines to parse, one after another with a newline after each.
    let bytes = 0;
    for (let j = 0; j < want; j++) bytes += lengths[rest ? rest[j]! : j]! + 1;
    const parse = Buffer.allocUnsafe(bytes);
    for (let j = 0, o = 0; j < want; j++) {
      const i = rest ? rest[j]! : j;
      src.copy(parse, o, at[i]!, at[i]! + lengths[i]!);
      o += lengths[i]!;
      parse[o++] = 10;
    }
    let block;
    try {
      block = await parseLineBlock(parse, { ...req.spec, skipInvalid: false }, req.firstLine, false);
    } catch {
      throw changed(req.spec.name);
    }
    if (block.records.length !== want) throw changed(req.spec.name);
    block.records.forEach((r, j) => (texts[rest ? rest[j]! : j] = r.text));
  }
  return rest ? { texts, bytes: src, spans } : { texts };
}

function changed(name: string): Error {
  return new Error(`${name} changed while it was being read (a document's line no longer holds the same record)`);
}
