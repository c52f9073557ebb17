/**
 * `neardup index remove <file>` and `neardup index purge`: bulk deletes from the command line. The ids come one per line, or
 * from a column (TSV/CSV) or field (JSONL, Parquet) of any input `dedup` reads; they are removed in
 * batches, each one store write (`index.removeMany`), and clusters are split once per batch. `purge`
 * removes the documents whose expiry has passed (`index.purgeExpired`, the same path).
 * @module
 */
import type { Command } from 'commander';
import { createInterface } from 'node:readline';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { UsageError } from '../../common/errors.js';
import { openInput } from '../../io/read/read.js';
import { parsePositiveInt } from '../options.js';
import { spoolInput } from '../corpus.js';
import { checkStoreFile, openIndex, PERSISTENT_STORES, refuseMemoryStore, storeHelp, storeOutputs } from './options.js';
import { refuseAliasedOutputs } from '../../io/write/alias.js';

interface RemoveFlags {
  store: string;
  column?: string;
  batch: number;
}

/** The ids of `file`: one per line (blank lines skipped), or the values of `column`. */
async function* idsOf(file: string, column: string | undefined): AsyncGenerator<string> {
  if (column !== undefined) {
    // A named pipe is copied first, as `index add` copies it: its format is sniffed by a positional read.
    const spool = await spoolInput(file);
    try {
      const input = await openInput(spool?.file ?? file, {
        displayName: spool?.displayName,
        columns: { id: column, text: [column] },
        fields: { id: column, text: [column] },
      });
      for await (const r of input.records) {
        if (r.id === undefined || r.id === '') throw new UsageError(`${input.name}, line ${r.line}: no id in column "${column}"`);
        yield r.id;
      }
    } finally {
      await spool?.cleanup();
    }
    return;
  }
  if (file !== '-') {
    await stat(file).catch((e: NodeJS.ErrnoException) => {
      throw e.code === 'ENOENT' ? new UsageError(`${file}: no such file`) : e;
    });
  }
  const stream = file === '-' ? process.stdin : createReadStream(file);
  // A line is an id as it stands (ids may hold spaces); blank lines are skipped. A UTF-8 byte order
  // mark (a file saved by Notepad) is not part of the first id.
  let first = true;
  for await (let line of createInterface({ input: stream, crlfDelay: Infinity })) {
    if (first && line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    first = false;
    if (line.trim()) yield line;
  }
}

/** Adds `index remove` to the `index` command. */
export function addIndexRemoveCommand(index: Command): void {
  index
    .command('remove')
    .description('remove the documents whose ids a file lists (one per line, or a column), in batches of one store write each')
    .argument('<file>', 'ids one per line, or with --column any TSV, CSV, JSONL or Parquet input; - for stdin')
    .requiredOption('--store <spec>', storeHelp(PERSISTENT_STORES))
    .option('--column <name>', 'take the ids from this TSV/CSV column (JSONL/Parquet: field path) instead of whole lines')
    .option('--batch <n>', 'ids per store write', parsePositiveInt('batch', 100_000), 1000)
    .addHelpText(
      'after',
      `
Prints how many documents were removed and how many ids were not indexed. Clusters are kept right
(each batch splits the clusters it touched once).

Examples:
  $ neardup index remove expired.txt --store sqlite:./ads.db
  $ neardup index remove sold.tsv --column ad_id --store postgres://localhost/app?schema=ads`,
    )
    .action(async (file: string, flags: RemoveFlags) => {
      refuseMemoryStore(flags.store, 'keeps nothing after the command ends');
      // The id list is read while the store is written: it may not be one of the store's files.
      await refuseAliasedOutputs(storeOutputs(flags.store), [{ what: 'the input', path: file }]);
      await checkStoreFile(flags.store, true, 'index remove');
      const ids = idsOf(file, flags.column);
      // The input is opened (and a missing file refused) before the store is.
      const first = await ids.next();
      const idx = await openIndex({ store: flags.store });
      let removed = 0;
      let missing = 0;
      let read = 0;
      try {
        let batch: string[] = first.done ? [] : [first.value];
        const flush = async () => {
          const r = await idx.removeMany(batch);
          for (const ok of r) ok ? removed++ : missing++;
          read += batch.length;
          batch = [];
        };
        for await (const id of ids) {
          batch.push(id);
          if (batch.length >= flags.batch) await flush();
        }
        if (batch.length) await flush();
      } finally {
        await idx.close();
      }
      process.stdout.write(`${removed} documents removed, ${missing} of ${read} ids not indexed\n`);
    });
}

/** Adds `index purge` to the `index` command. */
export function addIndexPurgeCommand(index: Command): void {
  index
    .command('purge')
    .description('remove the documents whose expiry has passed (expired documents are hidden already; this gives their space back)')
    .requiredOption('--store <spec>', storeHelp(PERSISTENT_STORES))
    .option('--list', 'print the id of every removed document, one per line, before the summary', false)
    .addHelpText(
      'after',
      `
Prints how many expired documents were removed and how many documents are left. Clusters are kept
right. \`neardup serve\` also purges in the background (--purge-interval).

Example:
  $ neardup index purge --store sqlite:./ads.db

Exit codes: 0 done (also when nothing had expired), 1 store failure, 2 usage error.`,
    )
    .action(async (flags: { store: string; list: boolean }) => {
      refuseMemoryStore(flags.store, 'keeps nothing after the command ends');
      await checkStoreFile(flags.store, true, 'index purge');
      const idx = await openIndex({ store: flags.store });
      try {
        const ids = await idx.purgeExpired();
        if (flags.list) { for (const id of ids) process.stdout.write(`${id}\n`); }
        const left = await idx.size();
        process.stdout.write(`${ids.length} expired document${ids.length === 1 ? '' : 's'} removed, ${left} left\n`);
      } finally {
        await idx.close();
      }
    });
}
