/**
 * The `--removed` audit of `neardup spans` and `neardup job spans`: its columns, its format from
 * the file's name, and one row as a line.
 * @module
 */
import { UsageError } from '../../common/errors.js';
import { tsvField } from '../../io/write/write.js';
import type { SpansAuditRow } from '../dedupSpans.js';

/** The audit's columns, in order. */
export const SPANS_AUDIT_COLUMNS = ['id', 'start', 'end', 'byte_start', 'byte_end', 'kept_id', 'kept_start', 'kept_byte_start', 'count', 'docs'] as const;

/** The audit file's format from its name (`what` names it in the error): `.tsv` or `.jsonl` (also `.ndjson`), optionally `.gz`/`.zst`. */
export function spansAuditFormat(file: string, what = 'the audit file'): 'tsv' | 'jsonl' {
  const base = file.toLowerCase().replace(/\.(gz|zst|zstd)$/, '');
  if (base.endsWith('.tsv')) return 'tsv';
  if (base.endsWith('.jsonl') || base.endsWith('.ndjson')) return 'jsonl';
  throw new UsageError(`${what} ${file}: name it .tsv or .jsonl (either may end in .gz or .zst): the extension chooses the format`);
}

/** One audit row as a line of `format`. */
export function auditLine(format: 'tsv' | 'jsonl', r: SpansAuditRow): string {
  if (format === 'jsonl') {
    return `{"id":${JSON.stringify(r.id)},"start":${r.start},"end":${r.end},"byte_start":${r.byteStart},"byte_end":${r.byteEnd},"kept_id":${
      JSON.stringify(r.keptId)
    },"kept_start":${r.keptStart},"kept_byte_start":${r.keptByteStart},"count":${r.count},"docs":${r.docs}}\n`;
  }
  // One concatenation, not an array joined: a row per removed unit, the audit was a tenth of pass 2.
  const kept = r.keptId === null ? '' : tsvField(r.keptId);
  const ks = r.keptStart === null ? '' : r.keptStart;
  const kb = r.keptByteStart === null ? '' : r.keptByteStart;
  return `${tsvField(r.id)}\t${r.start}\t${r.end}\t${r.byteStart}\t${r.byteEnd}\t${kept}\t${ks}\t${kb}\t${r.count}\t${r.docs}\n`;
}
