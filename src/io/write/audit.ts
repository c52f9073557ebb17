/**
 * The audit of a deduplication (`--removed FILE`): one row per document the run drops, with the
 * kept document it duplicates, its similarity to it and its cluster; with `--against`, the
 * reference document and the file it came from. TSV (with a header), JSONL or Parquet (typed
 * columns), chosen by the file's extension; TSV and JSONL may end in .gz or .zst. Written
 * atomically: an error leaves no file that looks complete.
 * @module
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../../common/errors.js';
import { atomicFileSink, type OutputSink, type PendingCommits } from './output.js';
import { loadPackage } from '../../common/lazy.js';
import { formatSimilarity, tsvField } from './write.js';

/** One dropped document. */
export interface AuditRow {
  /** The dropped document's id (its explicit id, else its row number, as text). */
  id: string;
  /** The id of the document kept in its place: its cluster's kept member, or with --against the reference document; null under --keep none. */
  keptId: string | null;
  /** Exact similarity to `keptId`'s document; null when there is none. */
  similarity: number | null;
  /** Its cluster; null with --against (no clusters). */
  cluster: number | null;
  /** With --against: the reference document's id. */
  referenceId?: string;
  /** With --against: the file (shard) the reference document was read from. */
  referenceSource?: string;
}

/** The audit's column names, in order (the reference columns only with --against). */
export function auditColumns(against: boolean): string[] {
  return against ? ['id', 'kept_id', 'similarity', 'cluster', 'reference_id', 'reference_source'] : ['id', 'kept_id', 'similarity', 'cluster'];
}

/** The audit file's format from its name, or a usage error naming --removed. */
export function auditFormat(file: string): 'tsv' | 'jsonl' | 'parquet' {
  const name = file.toLowerCase();
  const base = name.replace(/\.(gz|zst)$/, '');
  if (base.endsWith('.tsv')) return 'tsv';
  if (base.endsWith('.jsonl') || base.endsWith('.ndjson')) return 'jsonl';
  if (name.endsWith('.parquet') || name.endsWith('.pq')) return 'parquet';
  if (base.endsWith('.parquet') || base.endsWith('.pq')) throw new UsageError(`--removed ${file}: Parquet compresses its own columns; name it .parquet`);
  throw new UsageError(`--removed ${file}: name it .tsv, .jsonl or .parquet (TSV and JSONL may end in .gz or .zst): the extension chooses the format`);
}

/**
 * Refuses, before any work, an audit path that cannot be written: a directory, or a file in a
 * directory that does not exist (exit 2, naming --removed).
 */
export async function checkAuditTarget(file: string): Promise<void> {
  const st = await fsp.stat(file).catch(() => undefined);
  if (st?.isDirectory()) throw new UsageError(`--removed ${file} is a directory: name the audit file (.tsv, .jsonl or .parquet)`);
  const dir = path.dirname(path.resolve(file));
  const up = await fsp.stat(dir).catch(() => undefined);
  if (!up?.isDirectory()) throw new UsageError(`--removed ${file}: directory ${dir} does not exist`);
}

/** Writes audit rows; {@link close} puts the file in place, {@link abort} leaves nothing. */
export interface AuditWriter {
  /** Appends one row. */
  write(row: AuditRow): Promise<void>;
  /** Rows written so far. */
  readonly rows: number;
  /** Puts the whole file in place (renames the temp file; opened with commits, finishes it and leaves the rename to them). */
  close(): Promise<void>;
  /** Removes the temp file: nothing is left at the path. */
  abort(): Promise<void>;
}

/**
 * Opens the audit file `file` (format by extension; see {@link auditFormat}). With `commits`, close
 * finishes the temp file and leaves its rename to {@link PendingCommits.commit}.
 */
export async function openAudit(file: string, against: boolean, commits?: PendingCommits): Promise<AuditWriter> {
  const format = auditFormat(file);
  const names = auditColumns(against);
  if (format === 'parquet') return parquetAudit(file, names, against, commits);
  const sink: OutputSink = await atomicFileSink(file, commits);
  let rows = 0;
  let started = false;
  const line = (r: AuditRow): string => {
    if (format === 'jsonl') {
      const ref = against ? `,"reference_id":${JSON.stringify(r.referenceId ?? null)},"reference_source":${JSON.stringify(r.referenceSource ?? null)}` : '';
      return `{"id":${JSON.stringify(r.id)},"kept_id":${JSON.stringify(r.keptId)},"similarity":${
        r.similarity === null ? 'null' : formatSimilarity(r.similarity)
      },"cluster":${r.cluster === null ? 'null' : r.cluster}${ref}}\n`;
    }
    const f = [
      tsvField(r.id),
      r.keptId === null ? '' : tsvField(r.keptId),
      r.similarity === null ? '' : formatSimilarity(r.similarity),
      r.cluster === null ? '' : String(r.cluster),
    ];
    if (against) f.push(tsvField(r.referenceId ?? ''), tsvField(r.referenceSource ?? ''));
    return f.join('\t') + '\n';
  };
  return {
    get rows() {
      return rows;
    },
    async write(r) {
      if (!started && format === 'tsv') await sink.write(names.join('\t') + '\n');
      started = true;
      await sink.write(line(r));
      rows++;
    },
    async close() {
      if (!started && format === 'tsv') await sink.write(names.join('\t') + '\n');
      started = true;
      await sink.close();
    },
    abort: () => sink.abort(),
  };
}

/** The Parquet audit: columns gathered in memory (a row is ~50 bytes), written at close. */
async function parquetAudit(file: string, names: string[], against: boolean, commits: PendingCommits | undefined): Promise<AuditWriter> {
  const w = await loadPackage<{ parquetWriteBuffer(o: Record<string, unknown>): ArrayBuffer }>('hyparquet-writer', 'writing Parquet');
  const sink = await atomicFileSink(file, commits);
  const cols: (string | number | null)[][] = names.map(() => []);
  return {
    get rows() {
      return cols[0]!.length;
    },
    async write(r) {
      cols[0]!.push(r.id);
      cols[1]!.push(r.keptId);
      cols[2]!.push(r.similarity);
      cols[3]!.push(r.cluster);
      if (against) {
        cols[4]!.push(r.referenceId ?? null);
        cols[5]!.push(r.referenceSource ?? null);
      }
    },
    async close() {
      const types = ['STRING', 'STRING', 'DOUBLE', 'INT32', 'STRING', 'STRING'];
      try {
        const buf = w.parquetWriteBuffer({
          columnData: names.map((name, i) => ({ name, data: cols[i]!, type: types[i]!, nullable: i > 0 })),
          createdBy: 'neardup (hyparquet-writer)',
        });
        await sink.writeBytes!(new Uint8Array(buf));
      } catch (e) {
        await sink.abort();
        throw e;
      }
      await sink.close();
    },
    abort: () => sink.abort(),
  };
}
