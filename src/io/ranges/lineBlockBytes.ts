/**
 * A block of lines read with its texts left as UTF-8 bytes: what `parseLineBlock` gives, except
 * that a record whose text is a run of the block's bytes (a text line, the text after an id⇥text
 * line's tab, a TSV row's one text column, a JSONL text field written without escapes) is given by
 * that run, not a string.
 * Lines this route cannot read exactly are handed to the format's own reader, numbered as it would
 * number them, so records, rows, lines and errors are the same as `parseLineBlock`'s.
 *
 * Why: pass 1 decoded every line to a string and ran `JSON.parse` on it before signing; for 1.5 KB
 * documents that was ~0.45 s of a 2.5 s one-core run over 159 MB (decoding, parsing, and the
 * garbage they left).
 * @module
 */
import { isUtf8 } from 'node:buffer';
import type { LineParseSpec, ParsedBlock } from './lineRanges.js';
import { makeContext, type InputRecord, type ReaderContext, type SkipStats } from '../read/record.js';
import { jsonlLineReader, wellFormed } from '../read/jsonl.js';
import { idTextLineReader, textLineReader, type LineReader } from '../read/lines.js';
import { LINE_BLANK, LINE_OBJECT, scanJsonLine, type StringStop } from '../read/jsonLine.js';
import { resolveHeader, rowRecord, type ColumnLayout } from '../read/delimited.js';

/** A block's bytes where the scans read them (WebAssembly memory), and the scans. */
export interface BlockBytes {
  /** `mem[base + i]` is the block's byte i (read it again after other uses of that memory). */
  readonly mem: Uint8Array;
  base: number;
  /** See {@link StringStop}; addresses in `mem`. */
  stringStop: StringStop;
  /** The UTF-16 length of the valid UTF-8 bytes `mem[p .. end)`. */
  units(p: number, end: number): number;
}

/** A {@link ParsedBlock} whose texts may be byte runs. */
export interface BytesBlock extends ParsedBlock {
  /**
   * Record i's text is the block's bytes `[spans[2i], spans[2i + 1])` (valid UTF-8), and its
   * `text` is empty; or both are −1 and its `text` is the text. Records carry no title.
   */
  spans: Int32Array;
  /** Each record's text length in UTF-16 code units. */
  units: Int32Array;
}

/** Blocks larger than this (a few huge lines) take the string route, as `utf8LinesOf` does. */
const MAX_BLOCK = 256 * 2 ** 20;

/** A field name read in bytes: top-level (no dot), and written by JSON without escapes. */
function plainName(name: string): Buffer | undefined {
  const key = Buffer.from(name, 'utf8');
  return key.length > 0 && key.every((b) => b >= 0x20 && b < 0x80 && b !== 0x22 && b !== 0x5c && b !== 0x2e) ? key : undefined;
}

/**
 * The name (bytes) of a JSONL spec's one text field when it can be found in a line's bytes (one
 * top-level field whose name JSON writes without escapes), else undefined.
 */
export function jsonTextKey(spec: LineParseSpec): Uint8Array | undefined {
  if (spec.format !== 'jsonl') return undefined;
  const text = spec.fields?.text && spec.fields.text.length > 0 ? spec.fields.text : ['text'];
  return text.length === 1 ? plainName(text[0]!) : undefined;
}

/** The names (bytes) of the JSONL fields this route reads: the text's, then the id's if the spec has one. */
function jsonKeys(spec: LineParseSpec): Uint8Array[] | undefined {
  const text = jsonTextKey(spec);
  if (!text || spec.fields?.id === undefined) return text && [text];
  const id = plainName(spec.fields.id);
  return id && [text, id];
}

/** True when {@link parseLineBlockBytes} can read blocks of `spec` (given valid UTF-8). */
export function bytesRouteReads(spec: LineParseSpec): boolean {
  return spec.format === 'text' || spec.format === 'idtext' || spec.format === 'tsv' || jsonKeys(spec) !== undefined;
}

/** Where a block sits in its file and how its bytes are placed for the scans (one object per block). */
export interface BlockBytesOptions {
  /** The number of the block's first line. */
  firstLine: number;
  /** Whether the block starts the file (a byte order mark is dropped, a TSV header is read). */
  stripBom: boolean;
  /** Places the block where the scans read it; called only when this route reads the block. */
  load: (block: Buffer) => BlockBytes;
}

/**
 * `parseLineBlock(buf, spec, firstLine, stripBom)` with texts left as bytes (see the module
 * comment), or undefined when this route does not read the block (a spec it cannot read, a later
 * TSV block without the header line, invalid UTF-8, a block over 256 MiB): the caller then parses it as strings. `load` places the
 * block where the scans read it; it is called only when this route reads the block. Throws the
 * same {@link InputError} as `parseLineBlock` for an invalid record unless the spec skips them.
 *
 * Why this function is long: most of it is the one loop over the block's lines, which keeps the
 * line and row numbers, the TSV layout and the output columns in locals; its branches per format
 * are a few lines each, and cut into functions they would take and hand back that state on every
 * line of every block.
 */
export function parseLineBlockBytes(buf: Buffer, spec: LineParseSpec, block: BlockBytesOptions): BytesBlock | undefined {
  const { firstLine, stripBom, load } = block;
  if (!bytesRouteReads(spec) || buf.length > MAX_BLOCK || !isUtf8(buf)) return undefined;
  // A TSV block other than the first is read after the header line (as line firstLine − 1).
  if (spec.format === 'tsv' && !stripBom && spec.header === undefined) return undefined;
  const keys = spec.format === 'jsonl' ? jsonKeys(spec)! : [];
  const loaded = load(buf);
  const { base, stringStop } = loaded;
  const skips: SkipStats = { count: 0, examples: [] };
  const ctx = makeContext(spec.name, false, spec.skipInvalid, skips);
  const read: LineReader = spec.format === 'jsonl'
    ? jsonlLineReader(ctx, spec.fields ?? {})
    : spec.format === 'idtext'
    ? idTextLineReader(ctx)
    : textLineReader(ctx);
  // TSV: the header's layout (from the block's first non-empty line, or the spec's header line).
  let layout = spec.format === 'tsv' && !stripBom ? resolveHeader(spec.header!.split('\t'), spec.columns ?? {}, ctx, firstLine - 1) : undefined;
  const records: InputRecord[] = [];
  const starts: number[] = [];
  const lengths: number[] = [];
  const spans: number[] = [];
  const units: number[] = [];
  const found = new Int32Array(3 * keys.length);
  let bom = false;
  let start = 0;
  if (stripBom && buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) {
    start = 3;
    bom = true;
  }
  let line = firstLine;
  let lines = 0;
  let rows = 0;
  const n = buf.length;
  /** Records a text that is the bytes [s, e). */
  const byteText = (s: number, e: number, id: string | undefined, row: number): void => {
    records.push({ text: '', id, row, line });
    spans.push(s, e);
    units.push(loaded.units(base + s, base + e));
  };
  while (start < n) {
    let end = buf.indexOf(10, start);
    const next = end === -1 ? n : end + 1;
    if (end === -1) end = n;
    const stop = end > start && buf[end - 1] === 13 ? end - 1 : end;
    lines++;
    const count = records.length;
    let done = false;
    if (spec.format === 'tsv') {
      if (stop === start) done = true; // an empty line: neither the header nor a row
      else if (!layout) {
        layout = resolveHeader(buf.toString('utf8', start, stop).split('\t'), spec.columns ?? {}, ctx, line);
        done = true;
      } else {
        const r = tsvRow(buf, start, stop, layout, line, rows++, ctx);
        if (r) {
          records.push(r.record);
          spans.push(r.start, r.end);
          units.push(r.start < 0 ? r.record.text.length : loaded.units(base + r.start, base + r.end));
        }
        done = true;
      }
    } else if (spec.format === 'text') {
      byteText(start, stop, undefined, line - 1);
      rows++;
      done = true;
    } else if (spec.format === 'idtext') {
      // A line that starts with a visible ASCII byte is not blank: its text follows the first tab.
      const c = buf[start]!;
      const tab = start < stop && c > 0x20 && c < 0x7f ? buf.indexOf(9, start) : -1;
      if (tab >= 0 && tab < stop) {
        byteText(tab + 1, stop, buf.toString('utf8', start, tab), rows++);
        done = true;
      }
    } else {
      const mem = loaded.mem;
      const kind = scanJsonLine(mem, base + start, base + stop, keys, found, stringStop);
      if (kind === LINE_BLANK) done = true;
      else if (kind === LINE_OBJECT) done = jsonRecord(buf, mem, base, found, keys.length > 1, rows, line, records, spans, units, byteText);
      if (done && kind === LINE_OBJECT) rows++;
    }
    if (!done) {
      // The format's own reader: the same record, or the same error, as the string route.
      const text = buf.toString('utf8', start, stop);
      const eol = stop === next ? '' : next - stop === 1 ? (buf[stop] === 10 ? '\n' : '\r') : '\r\n';
      const r = rows;
      if (text.trim() !== '') rows++;
      const rec = read(text, line, eol, r);
      if (rec) {
        delete rec.title;
        records.push(rec);
        spans.push(-1, -1);
        units.push(rec.text.length);
      }
    }
    if (records.length > count) {
      starts.push(start);
      lengths.push(end - start);
    }
    line++;
    start = next;
  }
  return {
    records,
    starts: Int32Array.from(starts),
    lengths: Int32Array.from(lengths),
    lines,
    rows,
    skipped: skips.count,
    examples: skips.examples.map((e) => ({ line: e.line, reason: e.reason, position: e.position, fix: e.fix })),
    bom,
    spans: Int32Array.from(spans),
    units: Int32Array.from(units),
  };
}

/** Field i of a TSV row is `buf[at[i] .. at[i + 1] − 1)` (the tab, or the end + 1, closes it). */
const fieldAt = new Int32Array(1024);

/**
 * A TSV data row (a non-empty line `[start, stop)`, tabs splitting fields, no quoting): its record,
 * and the bytes of its text when that is one column (else −1, −1 and the text joined as a string);
 * undefined for a row the reader reports (another number of fields than the header), through
 * the same `rowRecord` and with the same message.
 * Why these parameters: called once per TSV line of a block with the scan's typed state; an options object would be an allocation per record.
 */
function tsvRow(
  buf: Buffer,
  start: number,
  stop: number,
  layout: ColumnLayout,
  line: number,
  row: number,
  ctx: ReaderContext,
): { record: InputRecord; start: number; end: number } | undefined {
  const cols = layout.columns.length;
  let fields = 0;
  let at = start;
  for (;;) {
    if (fields < fieldAt.length - 1) fieldAt[fields] = at;
    fields++;
    const tab = buf.indexOf(9, at);
    if (tab < 0 || tab >= stop) break;
    at = tab + 1;
  }
  if (fields !== cols || fields >= fieldAt.length - 1) {
    const record = rowRecord(buf.toString('utf8', start, stop).split('\t'), { raw: '', eol: '', line, end: line, row }, layout, ctx, false);
    return record ? { record, start: -1, end: -1 } : undefined;
  }
  fieldAt[fields] = stop + 1;
  const field = (i: number): string => buf.toString('utf8', fieldAt[i]!, fieldAt[i + 1]! - 1);
  const id = layout.idIdx >= 0 ? field(layout.idIdx) : undefined;
  const t = layout.textIdx;
  if (t.length === 1) return { record: { text: '', id, row, line }, start: fieldAt[t[0]!]!, end: fieldAt[t[0]! + 1]! - 1 };
  return { record: { text: t.map(field).join(' '), id, row, line }, start: -1, end: -1 };
}

/**
 * The record of a JSONL line found to be an object, when its text field is a string and its id
 * field (if asked) a string or a number: false otherwise (the reader then gives the error).
 * Why these parameters: called once per JSONL line of a block with the scan's typed state; an options object would be an allocation per record.
 */
function jsonRecord(
  buf: Buffer,
  mem: Uint8Array,
  base: number,
  found: Int32Array,
  withId: boolean,
  row: number,
  line: number,
  records: InputRecord[],
  spans: number[],
  units: number[],
  byteText: (s: number, e: number, id: string | undefined, row: number) => void,
): boolean {
  const ts = found[0]!;
  const te = found[1]!;
  if (ts < 0 || mem[ts] !== 0x22) return false;
  let id: string | undefined;
  if (withId) {
    const is = found[3]!;
    if (is < 0) return false;
    const c = mem[is]!;
    if (c !== 0x22 && c !== 0x2d && !(c >= 0x30 && c <= 0x39)) return false;
    // A string id decoded, a number id as written (its literal, not a rounded double).
    // A string written without escapes is its bytes between the quotes (the line was checked).
    if (c !== 0x22) id = buf.toString('utf8', is - base, found[4]! - base);
    else if (found[5] === 1) {
      id = JSON.parse(buf.toString('utf8', is - base, found[4]! - base)) as string;
      // An id with a lone surrogate is refused by the format's own reader, with its message.
      if (!wellFormed(id)) return false;
    } else id = buf.toString('utf8', is + 1 - base, found[4]! - 1 - base);
  }
  if (found[2] === 1) {
    // Escapes: the value alone goes through JSON.parse (the line was checked already).
    const text = JSON.parse(buf.toString('utf8', ts - base, te - base)) as string;
    records.push({ text, id, row, line });
    spans.push(-1, -1);
    units.push(text.length);
  } else byteText(ts + 1 - base, te - 1 - base, id, row);
  return true;
}
