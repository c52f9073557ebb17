/**
 * Records of the input written back with their text field cut (`--output dedup`) or with the
 * ranges cut as two tags (`--output annotate`): every other byte of the record is kept. JSONL:
 * only the text field's JSON string changes (re-encoded by `JSON.stringify`); TSV/CSV: only the
 * text column (quoted as CSV quotes, when it was or when it must be); text: the line; `id⇥text`:
 * what follows the first tab.
 * @module
 */
import { InputError, UsageError } from '../../common/errors.js';
import { findColumn } from '../../io/read/delimited.js';
import type { InputFormat } from '../../io/read/formats.js';
import { parsePath } from '../../io/read/jsonl.js';
import { appendJsonFields, jsonTopNames, jsonValueRange } from '../../io/read/jsonRaw.js';
import type { OpenedInput, ReadOptions } from '../../io/read/read.js';
import type { InputRecord } from '../../io/read/record.js';
import { shardName, type ShardList } from '../../io/read/shards.js';
import { tsvField } from '../../io/write/write.js';
import { refuseAliasedOutputs } from '../../io/write/alias.js';
import type { OutputSink } from '../../io/write/output.js';
import type { CutRange, DocVerdict } from '../deduper.js';

/** The tags `--output annotate` adds: the ranges cut (JSON), and whether the document is dropped. */
export const SPAN_TAGS = ['spans_removed', 'spans_dropped'] as const;

/** Formats whose records {@link RecordEditor} can rewrite, and Parquet (./parquet.ts). */
const EDITABLE: readonly InputFormat[] = ['jsonl', 'tsv', 'csv', 'text', 'idtext', 'parquet'];

/**
 * Refuses (a UsageError) an output that is a file `first` reads (a shard of it), or `out` and
 * `removed` one file, before anything is written: the library's callers are checked too.
 */
export async function refuseOutputsRead(input: string, first: OpenedInput, o: { mode: string; out?: string; removed?: string }): Promise<void> {
  const outs = [...(o.mode === 'none' ? [] : [{ what: 'out', path: o.out, dir: first.shards !== undefined }]), { what: 'removed', path: o.removed }];
  const reads = first.shards?.shards.map((sh) => sh.path) ?? [input];
  await refuseAliasedOutputs(outs, reads.map((p) => ({ what: 'the input', path: p, file: true })));
}

/**
 * Refuses, with the input open and before any record is read, what this pass cannot write: a
 * directory of documents (no records to edit in place), a sharded input,
 * annotations of a format with no room for a tag (text, `id⇥text`), and several text fields.
 */
export function checkEditable(input: OpenedInput, read: ReadOptions, mode: 'dedup' | 'annotate', out?: string): void {
  if (input.shards) {
    if (out === undefined || out === '-')
      throw new UsageError(
        `${input.name} is ${input.shards.shards.length} file(s): the ${mode} output is one output shard per input file, so it needs an output directory`,
      );
    if (read.limit !== undefined)
      throw new UsageError(
        `${input.name} is ${input.shards.shards.length} file(s): a limit on the documents read cannot be written as output shards; read them all, or make a dry run (the summary and the audit only)`,
      );
  } else checkFormat(input.format, input.name, mode);
  textName(input.format, read);
}

/** Refuses a shard whose format this pass cannot rewrite (see {@link checkEditable}). */
export function checkShardFormats(formats: readonly InputFormat[], list: ShardList, mode: 'dedup' | 'annotate'): void {
  formats.forEach((f, k) => checkFormat(f, shardName(list.shards[k]!), mode));
}

function checkFormat(format: InputFormat, name: string, mode: 'dedup' | 'annotate'): void {
  if (!EDITABLE.includes(format))
    throw new UsageError(
      `spans cannot rewrite a directory of documents (${name}): its ${mode} output takes JSONL, TSV, CSV, text, id⇥text or Parquet (or make a dry run: the summary and the audit only)`,
    );
  if (mode === 'annotate' && (format === 'text' || format === 'idtext'))
    throw new UsageError(
      `annotating adds two fields (${
        SPAN_TAGS.join(', ')
      }), and a ${format} line of ${name} has no room for them: use JSONL, TSV or CSV, or the dedup output with the audit`,
    );
}

/** The one text field or column; several are refused (a cut belongs to one of them). */
function textName(format: InputFormat, read: ReadOptions): string | undefined {
  // Parquet's text columns are read as fields are (paths into its records).
  const names = format === 'jsonl' || format === 'parquet' ? read.fields?.text : read.columns?.text;
  if (names && names.length > 1)
    throw new UsageError(`spans cuts ranges out of one text ${format === 'jsonl' ? 'field' : 'column'}: name one (got ${names.join(', ')})`, {
      option: 'text',
      ...(format === 'jsonl' ? { value: 'field' } : {}),
    });
  return names?.[0];
}

/** A field of a delimited record: where it lies in the raw text, and whether it is quoted. */
interface Field {
  start: number;
  end: number;
  quoted: boolean;
}

/**
 * The fields of a delimited record as written (RFC 4180 quotes), or undefined when its quoting is
 * the relaxed kind (a quote inside an unquoted field, text after a closing quote): then the reader's
 * value cannot be mapped back to bytes, and the caller refuses the record.
 */
function splitFields(raw: string, d: string, quotes: boolean): Field[] | undefined {
  const out: Field[] = [];
  let i = 0;
  for (;;) {
    if (quotes && raw[i] === '"') {
      let j = i + 1;
      for (;;) {
        const q = raw.indexOf('"', j);
        if (q < 0) return undefined;
        if (raw[q + 1] === '"') {
          j = q + 2;
          continue;
        }
        j = q + 1;
        break;
      }
      out.push({ start: i, end: j, quoted: true });
      if (j === raw.length) return out;
      if (raw[j] !== d) return undefined;
      i = j + 1;
    } else {
      const k = raw.indexOf(d, i);
      const end = k < 0 ? raw.length : k;
      if (quotes && raw.slice(i, end).includes('"')) return undefined;
      out.push({ start: i, end, quoted: false });
      if (k < 0) return out;
      i = k + 1;
    }
  }
}

function quoteCsv(v: string): string {
  return `"${v.replace(/"/g, '""')}"`;
}

/** The ranges cut, as the `spans_removed` tag writes them. */
export function cutsJson(cuts: readonly CutRange[]): string {
  return `[${cuts.map((c) => `{"start":${c.start},"end":${c.end},"byte_start":${c.byteStart},"byte_end":${c.byteEnd}}`).join(',')}]`;
}

/** Rewrites the records of one opened input (read with `raw: true`). */
export class RecordEditor {
  private readonly format: InputFormat;
  private readonly path: string[];
  private readonly d: string;
  private readonly quotes: boolean;
  private col = -1;

  constructor(private readonly input: OpenedInput, read: ReadOptions) {
    this.format = input.format;
    const name = textName(input.format, read);
    this.path = parsePath(name ?? 'text');
    this.d = input.format === 'tsv' ? '\t' : (input.delimiter ?? ',');
    this.quotes = input.format === 'csv' || (input.format === 'tsv' && (read.tsvQuotes ?? false));
    if (input.format === 'tsv' || input.format === 'csv') this.textName = name;
  }

  private textName: string | undefined;

  /** The text column's index, from the header (read with the first record). */
  private column(): number {
    if (this.col >= 0) return this.col;
    const columns = this.input.header?.columns ?? [];
    const name = this.textName;
    this.col = name !== undefined ? findColumn(columns, name) : findColumn(columns, 'text') >= 0 ? findColumn(columns, 'text') : 0;
    return this.col;
  }

  private fail(r: InputRecord, why: string): never {
    throw new InputError(this.input.name, r.line, why);
  }

  /** Record `r` (with its raw text) with its text replaced by `text`, without its line break. */
  replace(r: InputRecord, text: string): string {
    const raw = r.raw!;
    switch (this.format) {
      case 'jsonl': {
        const at = jsonValueRange(raw, this.path);
        if (!at) this.fail(r, `cannot find the text field "${this.path.join('.')}" in the line again`);
        return raw.slice(0, at[0]) + JSON.stringify(text) + raw.slice(at[1]);
      }
      case 'text':
        return text;
      case 'idtext': {
        const tab = raw.indexOf('\t');
        return raw.slice(0, tab + 1) + text;
      }
      default: {
        const fields = splitFields(raw, this.d, this.quotes);
        const f = fields?.[this.column()];
        const value = f && (f.quoted ? raw.slice(f.start + 1, f.end - 1).replace(/""/g, '"') : raw.slice(f.start, f.end));
        if (!f || value !== r.text)
          this.fail(
            r,
            'the text column is quoted in a way neardup spans cannot write back (a quote inside an unquoted field, or text after a closing quote): quote the field as RFC 4180 does',
          );
        const needs = this.quotes && (f.quoted || text.includes(this.d) || text.includes('"') || text.includes('\n') || text.includes('\r'));
        return raw.slice(0, f.start) + (needs ? quoteCsv(text) : text) + raw.slice(f.end);
      }
    }
  }

  /** The header line of `--output annotate` (TSV/CSV: the input's with the two tag columns), or undefined (JSONL: none). */
  annotateHeader(): string | undefined {
    const h = this.input.header;
    if (!h) return undefined;
    for (const t of SPAN_TAGS)
      if (h.columns.includes(t)) throw new InputError(this.input.name, 1, `the input already has a column "${t}", a tag annotating adds`);
    return h.raw + SPAN_TAGS.map((t) => this.d + t).join('') + (h.eol || '\n');
  }

  /** Record `r` with the tags `spans_removed` (the ranges cut) and `spans_dropped`. */
  annotate(r: InputRecord, cuts: readonly CutRange[], dropped: boolean): string {
    const raw = r.raw!;
    const json = cutsJson(cuts);
    if (this.format === 'jsonl') {
      const names = jsonTopNames(raw);
      for (const t of SPAN_TAGS) if (names.includes(t)) this.fail(r, `the record already has a field "${t}", a tag annotating adds`);
      return appendJsonFields(raw, [[`"${SPAN_TAGS[0]}"`, json], [`"${SPAN_TAGS[1]}"`, String(dropped)]]);
    }
    const v = this.format === 'csv' ? quoteCsv(json) : tsvField(json);
    return `${raw}${this.d}${v}${this.d}${String(dropped)}`;
  }
}

/**
 * Writes the records of one opened input (read with `raw: true`) as pass 2 decides them, as
 * `dedup --output dedup` writes: the byte-order mark and the header once, then each record cut
 * (`dedup`, dropped ones left out) or tagged (`annotate`) with its own line break. The one-process
 * pass 2 and the sharded job's cut stage (src/shard/spans/cut.ts) both write through it.
 */
export class RecordWriter {
  private readonly editor: RecordEditor | undefined;
  private headerDone = false;
  /** Records written. */
  written = 0;

  constructor(
    private readonly input: OpenedInput,
    read: ReadOptions,
    private readonly mode: 'dedup' | 'annotate' | 'none',
    private readonly out: OutputSink | undefined,
  ) {
    this.editor = mode !== 'none' ? new RecordEditor(input, read) : undefined;
  }

  /** Writes the byte-order mark and header, once (before the first record, or at the end of an input with none). */
  async header(): Promise<void> {
    if (this.headerDone || !this.out) return;
    this.headerDone = true;
    if (this.input.bom) await this.out.write('\ufeff');
    const h = this.input.header;
    if (this.mode === 'annotate') {
      const line = this.editor!.annotateHeader();
      if (line !== undefined) await this.out.write(line);
    } else if (h) await this.out.write(h.raw + (h.eol || '\n'));
  }

  /** Writes record `r` as verdict `v` says. */
  async write(r: InputRecord, v: DocVerdict): Promise<void> {
    await this.header();
    if (!this.out) return;
    const eol = r.eol || '\n';
    if (this.mode === 'annotate') {
      await this.out.write(this.editor!.annotate(r, v.cuts, v.dropped) + eol);
      this.written++;
    } else if (!v.dropped) {
      await this.out.write((v.changed ? this.editor!.replace(r, v.text) : r.raw!) + eol);
      this.written++;
    }
  }
}
