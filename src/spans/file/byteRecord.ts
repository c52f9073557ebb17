/**
 * {@link ByteRecords}: a JSONL record read from its line's bytes (../jsonScan.ts): where its text is
 * and its id as the JSONL reader reads it (pass 1, ./bytePass1.ts, and the records pass 2 decides), and, in
 * pass 2, written back as bytes with only its text field's JSON string replaced, as
 * `RecordEditor.replace` writes it; without `JSON.parse` and without decoding or encoding the rest
 * of the line.
 * @module
 */
import type { ReadOptions } from '../../io/read/read.js';
import type { OutputSink } from '../../io/write/output.js';
import { scanRecord, type RecordKeys } from '../jsonScan.js';
import { ByteBatch } from './rawPass.js';

/** The keys the scan looks for, when `read`'s text and id fields are one top-level name each (`id`: whether to look for the id); else undefined. */
export function recordKeys(read: ReadOptions, id: boolean): RecordKeys | undefined {
  const text = read.fields?.text ?? ['text'];
  const idName = read.fields?.id;
  if (text.length !== 1 || text[0]!.includes('.') || (idName !== undefined && idName.includes('.'))) return undefined;
  return { text: Buffer.from(text[0]!), id: idName === undefined || !id ? undefined : Buffer.from(idName) };
}

/** Records read from their bytes, one at a time: {@link scan}, then where its text is and its id, then (pass 2) {@link write}. */
export class ByteRecords {
  private readonly at = new Int32Array(6);

  /** `json`: `JSON.stringify` of a changed record's text as UTF-8 bytes, when something makes them faster (SpanDeduper.jsonOf, given the verdict; undefined: `JSON.stringify`). */
  constructor(
    private readonly keys: RecordKeys,
    private readonly json?: (changed: { readonly text: string }) => Uint8Array | undefined,
  ) {}

  /**
   * Whether the scan takes the record in `line[start, stop)`: JSON the reader reads alike, its text
   * (and id, when its key was asked for) a string, the id with no escape (it could hold a lone
   * surrogate, which the reader refuses). Else the line is the reader's.
   */
  scan(line: Buffer, start: number, stop: number): boolean {
    return scanRecord(line, start, stop, this.keys, this.at) && this.at[5] !== 1;
  }

  /** The id of the record scanned last (undefined with no id key asked). */
  id(line: Buffer): string | undefined {
    return this.keys.id === undefined ? undefined : line.toString('utf8', this.at[3]!, this.at[4]!);
  }

  /** Where the text string of the record scanned last starts (its first byte, after the opening quote). */
  get textStart(): number {
    return this.at[0]!;
  }

  /** Where the text string of the record scanned last ends (its closing quote). */
  get textEnd(): number {
    return this.at[1]!;
  }

  /**
   * Writes the record scanned last to `out`, its text field's string replaced by the JSON of
   * `changed`'s text (undefined: the record as it is), with its line break (a last line without one
   * gets `\n`), as `RecordWriter` writes it.
   * Why these parameters: the line's bounds as the pass has them, once per record.
   */
  async write(
    out: OutputSink,
    line: Buffer,
    bounds: { start: number; stop: number; next: number },
    changed: { readonly text: string } | undefined,
  ): Promise<void> {
    const { start, stop, next } = bounds;
    const bytes = changed === undefined ? undefined : this.json?.(changed);
    if (bytes && out instanceof ByteBatch && out.room(next - start + 1 + bytes.length)) {
      out.putBytes(line, start, this.at[0]! - 1);
      out.putView(bytes);
      out.putBytes(line, this.at[1]! + 1, stop);
      if (next > stop) out.putBytes(line, stop, next);
      else out.putText('\n');
      return;
    }
    const json = changed === undefined ? undefined : JSON.stringify(changed.text);
    if (out instanceof ByteBatch && out.room(next - start + 1 + (json === undefined ? 0 : 3 * json.length))) {
      // The batch has room: copied with no promise per piece.
      if (json === undefined) out.putBytes(line, start, stop);
      else {
        out.putBytes(line, start, this.at[0]! - 1);
        out.putText(json);
        out.putBytes(line, this.at[1]! + 1, stop);
      }
      if (next > stop) out.putBytes(line, stop, next);
      else out.putText('\n');
      return;
    }
    if (json === undefined) await out.writeBytes!(line.subarray(start, stop));
    else {
      await out.writeBytes!(line.subarray(start, this.at[0]! - 1));
      await out.write(json!);
      await out.writeBytes!(line.subarray(this.at[1]! + 1, stop));
    }
    if (next > stop) await out.writeBytes!(line.subarray(stop, next));
    else await out.write('\n');
  }
}
