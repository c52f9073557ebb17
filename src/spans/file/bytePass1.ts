/**
 * Pass 1 of `neardup spans` over a plain JSONL file read as bytes (as ./rawPass.ts reads it for
 * pass 2): each record's text is found in the line's bytes (../jsonScan.ts), decoded into the
 * hasher's code units and its units counted from there ({@link SpanDeduper.observeJson}), with no
 * `JSON.parse`, no string per record or unit and no UTF-8 decoding of the line (line, paragraph and
 * sentence units; substrings, and sentences `Intl.Segmenter` splits, get the text as a string made
 * from those code units, still without `JSON.parse`).
 * A line the scan does not take goes to the JSONL reader, as before. Also the passes over the
 * records' texts beside pass 1: the anchors' before it, and the check's after it.
 *
 * Why: in a CPU profile of line units, `JSON.parse` of pass 1's lines, their UTF-8 decoding and
 * the garbage they made were about half of pass 1.
 * @module
 */
import { openInput, type OpenedInput, type ReadOptions } from '../../io/read/read.js';
import type { SpanDeduper } from '../deduper.js';
import { ByteRecords, recordKeys } from './byteRecord.js';
import { rawJsonlPass, rawPassFits } from './rawPass.js';

/** What pass 1 keeps per record besides the units: its id (undefined: none) and its row. */
export interface Pass1Records {
  ids: (string | undefined)[];
  rows: number[];
}

/**
 * Pass 1 over `path` as bytes into `d` and `out`, when it fits (a plain JSONL file, as pass 2's
 * byte route takes, one top-level text field): returns true once done;
 * false, having read nothing, when it does not fit. Throws on any problem (invalid UTF-8, a record
 * the reader refuses): the caller then runs pass 1 the other way on a new deduper, for its error.
 * Why these parameters: pass 1's, as the caller holds them (the input opened and the deduper made before).
 */
export async function bytePass1(path: string, input: OpenedInput, read: ReadOptions, d: SpanDeduper, out: Pass1Records): Promise<boolean> {
  const keys = recordKeys(read, true);
  if (!keys || !(await rawPassFits(path, read, input, undefined))) return false;
  const records = new ByteRecords(keys);
  // Line and paragraph units from the code units; the others (sentences, substrings) from the text made of them.
  const codes = d.observesCodes;
  const { ids, rows } = out;
  await rawJsonlPass(path, { name: input.name, read, out: undefined, skips: input.skips, checkUtf8: true }, {
    start: () => {},
    header: () => Promise.resolve(),
    passes: (row, b, start, stop) => {
      // The record and its line break, what the table's growth projects from: counted here for every
      // record line, the ones this scan gives to the reader's `record` below too (which has no bytes).
      d.readBytes(stop - start + 1);
      if (!records.scan(b, start, stop)) return false;
      if (codes) {
        if (!d.observeJson(b, records.textStart, records.textEnd)) return false;
      } else {
        const text = d.jsonText(b, records.textStart, records.textEnd);
        if (text === undefined) return false;
        d.observe(text);
      }
      ids.push(records.id(b));
      rows.push(row);
      return true;
    },
    record: (r) => {
      ids.push(r.id);
      rows.push(r.row);
      d.observe(r.text);
      return Promise.resolve();
    },
  });
  return true;
}

/**
 * Every record's text of `input` again, in the same order, to `each`: the check between the passes
 * (../verify.ts: the texts of the hashes counted more than once compared, so that no hash collision
 * cuts a unit), or the pass before pass 1 of substrings counted in bytes (../byteWindows.ts).
 */
export async function readAgain(input: string, read: ReadOptions, each: (text: string) => void): Promise<void> {
  const again = await openInput(input, read);
  try {
    for await (const r of again.records) each(r.text);
  } finally {
    await again.records.return(undefined);
  }
}

/** The pass before pass 1 of substrings counted in bytes: every record's window anchors counted. */
export async function anchorPass(input: string, read: ReadOptions, d: SpanDeduper): Promise<void> {
  await readAgain(input, read, (t) => d.anchor(t));
  d.endAnchoring();
}
