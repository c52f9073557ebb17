/**
 * The options of an online index (`neardup serve`, `neardup index add`): the store and, for a new
 * store, its parameters. An existing store keeps the parameters it was created with.
 * @module
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { NearDupIndex, type NearDupIndexOptions } from '../../online/nearDupIndex.js';
import { open } from 'node:fs/promises';
import { excerpt, UsageError } from '../../common/errors.js';
import type { NamedPath } from '../../io/write/alias.js';
import { parseStoreSpec, storeForms, type StoreSpec } from '../../store/spec.js';
import { fileStoreDirProblem } from '../../store/file/dir.js';
import { openStore } from '../../store/open/open.js';
import type { NormalizePreset } from '../../text/normalize.js';
import { NORMALIZE_CHOICES } from '../options.js';
import { ENGINE_DEFAULTS as D } from '../../engine/options.js';
import { parseDuration } from '../../online/expiry.js';
import type { MetaFilter } from '../../online/nearDupIndex.js';
import { checkFilter } from '../../online/search/filters.js';

/** A number parser for commander that names the option in its error. */
export function num(name: string, integer: boolean) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || (integer && !Number.isInteger(n)))
      throw new InvalidArgumentError(`${name} must be ${integer ? 'an integer' : 'a number'}, got "${v}"`);
    return n;
  };
}

/**
 * A duration parser for commander (`30d`, `12h`, `15m`, `90s`, `500ms`; src/online/expiry.ts) that
 * names the option in its error; with `zero`, `0` is accepted too (off).
 */
export function duration(name: string, zero = false) {
  return (v: string): number => {
    if (zero && v.trim() === '0') return 0;
    try {
      return parseDuration(v, name);
    } catch (e) {
      throw new InvalidArgumentError((e as Error).message);
    }
  };
}

/**
 * The validator of `--filter`: a JSON object of top-level metadata fields and values (src/online/search/filters.ts).
 * Bad JSON or a non-scalar value is a usage error (exit 2) naming the flag.
 */
export function parseFilterFlag(v: string): MetaFilter {
  let filter: unknown;
  try {
    filter = JSON.parse(v);
  } catch {
    throw new InvalidArgumentError(`--filter must be a JSON object such as '{"site":"a","lang":["en","fr"]}', got "${excerpt(v, 60)}"`);
  }
  try {
    checkFilter(filter, '--filter');
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
  return filter as MetaFilter;
}

/** Adds `--filter` (one definition for every command that searches: `index add`, `index query`). */
export function addFilterOption(cmd: Command, what: string): Command {
  return cmd.option(
    '--filter <json>',
    `${what} only among indexed documents whose metadata matches: a JSON object of top-level fields and a value each, or a list of values ('{"site":"a","lang":["en","fr"]}')`,
    parseFilterFlag,
  );
}

/** The parsed index flags. */
export interface IndexFlags {
  store: string;
  threshold?: number;
  k?: number;
  shingle?: 'char' | 'word' | 'spot';
  normalize?: NormalizePreset;
  numPerm?: number;
  bands?: number;
  rows?: number;
  minRecall?: number;
  verify?: 'exact' | 'estimate';
  /** Signature slot width (with --verify estimate). */
  signatureBits?: '16' | '32';
  forest: boolean;
  ensemble?: boolean;
  workers: number;
  /** Default time to live of added documents, ms. */
  ttl?: number;
}

/** The stores that keep an index after the process ends. */
export const PERSISTENT_STORES = ['file', 'sqlite', 'redis', 'postgres'] as const;

/** The help of a `--store <spec>` option that takes these kinds (one wording everywhere; `note` follows it). */
export function storeHelp(kinds: readonly StoreSpec['kind'][], note = ''): string {
  return `${storeForms(kinds)}${note ? ` ${note}` : ''} (docs/stores.md)`;
}

/** `--store memory` given to a command whose work is lost with the process (`what`: "keeps nothing after the command ends"). */
export function refuseMemoryStore(store: string, what: string): void {
  if (storeSpecFlag(store).kind === 'memory') throw new UsageError(`--store memory ${what}: give ${storeForms(PERSISTENT_STORES)}`);
}

/** Adds --store, the parameters of a new index and --workers (its help and default are the command's). */
export function addIndexOptions(cmd: Command, workers: { help: string; default: number }): Command {
  cmd.option('--store <spec>', storeHelp(['memory', ...PERSISTENT_STORES]), 'memory');
  return addIndexParams(cmd).option('--workers <n>', workers.help, num('--workers', true), workers.default);
}

/** Adds the parameters of a new index (`--threshold` … `--ttl`): one definition for `serve`, `index add` and `index create`. */
export function addIndexParams(cmd: Command): Command {
  return cmd
    .option('--threshold <t>', `Jaccard threshold (default ${D.threshold})`, num('--threshold', false))
    .addOption(new Option('--shingle <kind>', `shingle kind (default ${D.shingle})`).choices(['char', 'word', 'spot']))
    .option('-k, --k <n>', 'shingle length (default 5 for char, 3 for word/spot)', num('--k', true))
    .addOption(new Option('--normalize <preset>', `normalization preset (default ${D.normalize})`).choices(NORMALIZE_CHOICES))
    .option('--num-perm <n>', `MinHash signature length (default ${D.numPerm})`, num('--num-perm', true))
    .option('--bands <n>', 'LSH bands (default: chosen for the threshold)', num('--bands', true))
    .option('--rows <n>', 'rows per band', num('--rows', true))
    .option('--min-recall <p>', `P(candidate) at the threshold when choosing bands (default ${D.minRecall})`, num('--min-recall', false))
    .addOption(new Option('--verify <mode>', `exact Jaccard or MinHash estimate (default ${D.verify})`).choices(['exact', 'estimate']))
    .addOption(
      new Option(
        '--signature-bits <n>',
        'with --verify estimate: keep 16-bit signature slots (half the bytes; estimates rise by at most 0.00002) or 32 (default 32)',
      ).choices(['16', '32']),
    )
    .option('--no-forest', 'no LSH-Forest keys (smaller, faster inserts; disables topK)')
    .option(
      '--ensemble',
      'containment keys (LSH Ensemble) so containment queries find short excerpts of long documents; 112 more keys per document (docs/duplicate-kinds.md)',
    )
    .option(
      '--ttl <duration>',
      'documents added expire after this long (30d, 12h, 15m, 90s); then they are never returned, and purged (docs/stores.md, "Expiry"). Default: never',
      duration('--ttl'),
    );
}

/** The flags as NearDupIndex options (unset flags left out, so an existing store's manifest decides). */
export function indexOptionsFrom(o: IndexFlags): NearDupIndexOptions {
  return {
    store: o.store,
    ...(o.threshold !== undefined ? { threshold: o.threshold } : {}),
    ...(o.shingle || o.k !== undefined || o.normalize
      ? {
        shingle: {
          ...(o.shingle ? { kind: o.shingle } : {}),
          ...(o.k !== undefined ? { k: o.k } : {}),
          ...(o.normalize ? { normalize: { preset: o.normalize } } : {}),
        },
      }
      : {}),
    ...(o.numPerm !== undefined ? { numPerm: o.numPerm } : {}),
    ...(o.bands !== undefined ? { bands: o.bands } : {}),
    ...(o.rows !== undefined ? { rows: o.rows } : {}),
    ...(o.minRecall !== undefined ? { minRecall: o.minRecall } : {}),
    ...(o.verify ? { verify: o.verify } : {}),
    ...(o.signatureBits ? { signatureBits: Number(o.signatureBits) as 16 | 32 } : {}),
    ...(o.forest ? {} : { forest: false as const }),
    ...(o.ensemble ? { ensemble: true } : {}),
    ...(o.workers ? { workers: o.workers } : {}),
    ...(o.ttl !== undefined ? { ttl: o.ttl } : {}),
  };
}

/**
 * Opens the index for a command. A bad store spec or parameters that contradict the store's
 * (RangeError) are usage errors: exit 2 with the message, not 1.
 */
export async function openIndex(options: NearDupIndexOptions): Promise<NearDupIndex> {
  try {
    return await NearDupIndex.open(options);
  } catch (e) {
    if (e instanceof RangeError) throw new UsageError(e.message);
    throw e;
  }
}

/** Parses a `--store` spec (src/store/spec.ts); a bad one is a usage error (exit 2). */
export function storeSpecFlag(spec: string): StoreSpec {
  try {
    return parseStoreSpec(spec);
  } catch (e) {
    if (e instanceof RangeError) throw new UsageError(e.message);
    throw e;
  }
}

/**
 * The files a store writes, as outputs for {@link refuseAliasedOutputs}: a SQLite store's database
 * and the journal files beside it; a file store's directory (every file in it). No other output may
 * be one of them, and no input may be among them.
 */
export function storeOutputs(store: string): NamedPath[] {
  const spec = storeSpecFlag(store);
  if (spec.kind === 'file') return [{ what: '--store', path: spec.path, dir: true }];
  if (spec.kind !== 'sqlite') return [];
  return ['', '-wal', '-shm', '-journal'].map((s) => ({ what: '--store', path: spec.path + s }));
}

/** The first 16 bytes of every SQLite database file. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * Checks the file of a `sqlite:PATH` store before anything opens it (other stores pass): with
 * `mustExist` (`query`, `check`, `backup`, `snapshot`: commands that read a store) a missing file is
 * a usage error naming it, so a typo creates nothing; a file that exists must be a SQLite database
 * (empty, or starting with its header), so `--store sqlite:docs.jsonl` says what it is instead of
 * SQLite's "file is not a database". `command` names the command in the message.
 */
export async function checkStoreFile(store: string, mustExist: boolean, command: string): Promise<void> {
  const spec = storeSpecFlag(store);
  const problem = spec.kind === 'file' ? fileStoreDirProblem(spec.path) : undefined;
  if (problem) throw new UsageError(`--store ${store}: ${problem}`);
  if ((spec.kind === 'redis' || spec.kind === 'postgres' || spec.kind === 'file') && mustExist) {
    // A Redis prefix or PostgreSQL schema that holds no index: the same error, and nothing written.
    const r = await openStore(store);
    try {
      if (!(await r.exists!())) {
        const where = spec.kind === 'redis' ? 'the URL and its prefix' : spec.kind === 'postgres' ? 'the URL and its schema' : 'the directory';
        throw new UsageError(
          `no index at ${store}: ${command} reads an existing store, and nothing was created (check ${where}; \`neardup index add\` creates a store)`,
        );
      }
    } finally {
      await r.close();
    }
    return;
  }
  if (spec.kind !== 'sqlite') return;
  let fh;
  try {
    fh = await open(spec.path, 'r');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      if (!mustExist) return;
      throw new UsageError(
        `no SQLite index at ${spec.path}: ${command} reads an existing store, and nothing was created (check the path; \`neardup index add\` creates a store)`,
      );
    }
    if (code === 'EISDIR') throw new UsageError(`--store ${store}: ${spec.path} is a directory, not a SQLite file`);
    throw new UsageError(`--store ${store}: cannot open ${spec.path} (${code ?? (e as Error).message})`);
  }
  try {
    const head = Buffer.alloc(16);
    const { bytesRead } = await fh.read(head, 0, 16, 0);
    if (bytesRead > 0 && !head.equals(SQLITE_HEADER)) {
      throw new UsageError(
        `--store ${store}: ${spec.path} is not a SQLite database (it starts with "${
          excerpt(head.subarray(0, bytesRead).toString('latin1'), 16)
        }"); sqlite:PATH names the index file, not an input`,
      );
    }
  } finally {
    await fh.close();
  }
}
