/**
 * `neardup index check|backup|snapshot|compact|restore`: maintenance of an online index (`add` and
 * `query` are in add.ts, `remove` and `purge` in remove.ts). `check`
 * verifies it (exit 0 when consistent, 1 when not); `backup` copies a live SQLite store with the
 * online backup API; `snapshot` and `restore` write and read the portable snapshot format of any
 * store; `compact` rewrites the posting log of a Redis store in the log layout, or a file store's records and log.
 * @module
 */
import { Command } from 'commander';
import { NearDupIndex } from '../../online/nearDupIndex.js';
import { checkIndex } from '../../online/check.js';
import { UsageError } from '../../common/errors.js';
import { addIndexAddCommands } from './add.js';
import { addIndexPurgeCommand, addIndexRemoveCommand } from './remove.js';
import { addIndexNamedCommands } from './named.js';
import { openStore } from '../../store/open/open.js';
import { checkStoreFile, PERSISTENT_STORES, refuseMemoryStore, storeHelp, storeOutputs, storeSpecFlag } from './options.js';
import { refuseAliasedOutputs } from '../../io/write/alias.js';
import { storeForms } from '../../store/spec.js';
import { readSnapshotFile } from '../../online/snapshot.js';
import { FormatError } from '../../sketch/format.js';
import { s3Display } from '../../io/s3/staging.js';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { lockOutputDirectory } from '../../io/write/outDir.js';
import { outputDirectory, removeOnSignal } from '../../io/write/output.js';
import { isS3Url } from '../../io/s3/client.js';

/** The `index` command with its `check` subcommand. */
export function indexCommand(): Command {
  const index = new Command('index').description('fill, query and maintain an online index (the store of `neardup serve`)');
  for (const add of [addIndexAddCommands, addIndexRemoveCommand, addIndexPurgeCommand, addIndexNamedCommands]) add(index);
  index
    .command('check')
    .description('verify an index: records decode, every document key leads back to its document, counts agree, store integrity')
    .requiredOption('--store <spec>', storeHelp(PERSISTENT_STORES))
    .option('--json', 'print the report as JSON', false)
    .addHelpText(
      'after',
      '\nExample:\n  $ neardup index check --store sqlite:./index.db\n\nExit codes: 0 consistent, 1 inconsistent or unreadable, 2 usage error.',
    )
    .action(checkStore);
  index
    .command('backup')
    .description(
      'copy a SQLite or file store, consistently (SQLite: while other processes use it, by its online backup API; a file store is open in one process at a time: stop `serve` first, or call store.backup() in the process that holds it)',
    )
    .requiredOption('--store <spec>', storeHelp(['file', 'sqlite']))
    .requiredOption('--out <path>', 'the copy (a SQLite file, or for file:DIR a directory; must not exist)')
    .addHelpText('after', '\nExample:\n  $ neardup index backup --store sqlite:./index.db --out ./index-2024-05-01.db')
    .action(backupStore);
  index
    .command('snapshot')
    .description('write the whole index (parameters and documents) to one portable file (docs/formats.md), atomically')
    .requiredOption('--store <spec>', storeHelp(PERSISTENT_STORES))
    .requiredOption('--out <file>', 'the snapshot file')
    .action(snapshotStore);
  index
    .command('compact')
    .description(
      'rewrite the posting log of a Redis store (log layout, while it is in use) or the records and log of a file store, without replaced and removed versions',
    )
    .requiredOption('--store <spec>', storeHelp(['file', 'redis']))
    .addHelpText(
      'after',
      '\nExamples:\n  $ neardup index compact --store redis://127.0.0.1:6379?prefix=ads\n  $ neardup index compact --store file:/var/lib/neardup/ads',
    )
    .action(compactStore);
  index
    .command('restore')
    .description('load a snapshot into an empty store')
    .argument('<snapshot>', 'a file written by `neardup index snapshot`')
    .requiredOption('--store <spec>', storeHelp(PERSISTENT_STORES, '(must be empty)'))
    .action(restoreSnapshot);
  return index;
}

/** `index check`: the report, and exit 1 when the index is inconsistent. */
async function checkStore(o: { store: string; json: boolean }): Promise<void> {
  refuseMemoryStore(o.store, 'has nothing to check');
  await checkStoreFile(o.store, true, 'index check');
  const idx = await NearDupIndex.open({ store: o.store });
  try {
    const report = await checkIndex(idx, { onProgress: (n) => !o.json && process.stderr.isTTY && process.stderr.write(`\rchecked ${n} documents`) });
    if (o.json) process.stdout.write(JSON.stringify(report, null, 2) + '\n');
    else {
      process.stdout.write(`documents ${report.documents} (store size ${report.size}), keys checked ${report.keysChecked}\n`);
      for (const w of report.warnings) process.stdout.write(`warning: ${w}\n`);
      for (const e of report.errors) process.stdout.write(`error: ${e}\n`);
      process.stdout.write(report.errors.length ? 'index is INCONSISTENT\n' : 'index is consistent\n');
    }
    // An error (not process.exitCode, which runProgram overrides) gives exit code 1.
    if (report.errors.length) throw new Error(`index is inconsistent (${report.errors.length} error${report.errors.length === 1 ? '' : 's'} listed)`);
  } finally {
    await idx.close();
  }
}

/** `index backup`: a live SQLite store copied by its online backup API (a file store by {@link backupFileStore}). */
async function backupStore(o: { store: string; out: string }): Promise<void> {
  const spec = storeSpecFlag(o.store);
  await refuseAliasedOutputs([{ what: '--out', path: o.out }, ...storeOutputs(o.store)], []);
  await outputDirectory(o.out);
  if (spec.kind !== 'sqlite') {
    await backupFileStore(o.store, o.out);
    if (spec.kind === 'file') process.stdout.write(`backed up ${spec.path} to ${o.out}\n`);
    return;
  }
  await checkStoreFile(o.store, true, 'index backup');
  const { existsSync } = await import('node:fs');
  if (existsSync(o.out)) throw new UsageError(`${o.out} already exists`);
  const store = await openStore(o.store);
  // The copy is written beside the destination and linked into place: link() refuses an existing
  // name atomically (another process may create --out after the check above), and an
  // interrupted backup leaves only the hidden temporary file, never a partial --out.
  const { basename, dirname, join } = await import('node:path');
  const { link, rm } = await import('node:fs/promises');
  const tmp = join(dirname(o.out), `.${basename(o.out)}.${process.pid}.backup-tmp`);
  try {
    if (!store.backup) throw new Error(`the ${store.kind} store has no online backup`);
    await store.backup(tmp);
    await link(tmp, o.out).catch((e: NodeJS.ErrnoException) => {
      throw e.code === 'EEXIST' ? new UsageError(`${o.out} already exists`) : e;
    });
  } finally {
    await rm(tmp, { force: true });
    await store.close();
  }
  process.stdout.write(s3Display(`backed up ${spec.path} to ${o.out}\n`));
}

/** `index snapshot`: the whole index written to one portable file. */
async function snapshotStore(o: { store: string; out: string }): Promise<void> {
  await refuseAliasedOutputs([{ what: '--out', path: o.out }, ...storeOutputs(o.store)], []);
  if (!isS3Url(o.out)) await outputDirectory(o.out);
  await checkStoreFile(o.store, true, 'index snapshot');
  const idx = await NearDupIndex.open({ store: o.store });
  try {
    const n = await idx.save(o.out);
    process.stdout.write(s3Display(`${n} documents written to ${o.out}\n`));
  } finally {
    await idx.close();
  }
}

/** `index restore`: a snapshot loaded into an empty store. */
async function restoreSnapshot(snapshot: string, o: { store: string }): Promise<void> {
  await refuseAliasedOutputs(storeOutputs(o.store), [{ what: 'the snapshot', path: snapshot, file: true }]);
  // The snapshot is read and checked (magic, version, checksum) before the store is opened, so
  // a missing or damaged snapshot creates no store file.
  const snap = await readSnapshotFile(snapshot).catch((e: NodeJS.ErrnoException) => {
    if (e instanceof FormatError) throw new UsageError(`${e.message}: nothing was restored`);
    if (e.code === 'ENOENT') throw new UsageError(`${snapshot}: no such snapshot file: nothing was restored`);
    if (e.code === 'EISDIR') throw new UsageError(`${snapshot} is a directory, not a snapshot file`);
    throw e;
  });
  await checkStoreFile(o.store, false, 'index restore');
  const existing = await documentsIn(o.store);
  if (existing > 0) throw new UsageError(`${o.store} already holds ${existing} documents: restore into an empty store`);
  const idx = await NearDupIndex.fromSnapshot(snap, snapshot, { store: o.store });
  try {
    process.stdout.write(s3Display(`${await idx.size()} documents restored into ${o.store}\n`));
  } finally {
    await idx.close();
  }
}

/** How many documents `spec` holds: 0 for a store not made yet (a file store answers only once open, so it is opened as an index). */
async function documentsIn(spec: string): Promise<number> {
  const store = await openStore(spec);
  if (storeSpecFlag(spec).kind !== 'file') return store.size().finally(() => store.close());
  const made = await store.exists!();
  await store.close();
  if (!made) return 0;
  const idx = await NearDupIndex.open({ store: spec });
  return idx.size().finally(() => idx.close());
}

/**
 * `index backup` of a file store (other stores but SQLite: a usage error). The copy is made in a
 * hidden work directory beside `out`, `.NAME.backup-tmp/store`, and renamed into place, so an
 * interrupted backup never leaves a partial `out`. The work directory holds the lock of the
 * directory written (`.neardup-writing`, as an output directory does, src/io/write/outDir.ts): a
 * second backup to the same `out` while one runs is refused (exit 2) naming it, and no lock is left
 * beside `out` (src/cli/outputLocks.ts takes none for it).
 */
async function backupFileStore(storeSpec: string, out: string): Promise<void> {
  if (storeSpecFlag(storeSpec).kind !== 'file')
    throw new UsageError('backup copies SQLite and file stores; for any store use `neardup index snapshot`, for Redis see docs/operations.md');
  await checkStoreFile(storeSpec, true, 'index backup');
  if (existsSync(out)) throw new UsageError(`${out} already exists`);
  const work = path.join(path.dirname(out), `.${path.basename(out)}.backup-tmp`);
  const release = await lockWorkDirectory(work, out);
  // Removed whole on a signal while this run holds it (its lock with it).
  const untrack = removeOnSignal(work);
  const copy = path.join(work, 'store');
  let store: Awaited<ReturnType<typeof openStore>> | undefined;
  try {
    // What a run that died left (its lock was taken over).
    await rm(copy, { recursive: true, force: true });
    store = await openStore(storeSpec);
    await store.open({ keysPerDoc: 1 });
    await store.backup!(copy);
    if (existsSync(out)) throw new UsageError(`${out} already exists`);
    await rename(copy, out);
  } finally {
    await rm(copy, { recursive: true, force: true });
    untrack();
    await release();
    // Empty now, unless another run took it meanwhile (then it is that run's).
    await rmdir(work).catch(() => undefined);
    await store?.close();
  }
}

/** Creates the work directory `work` of a backup to `out` and takes its lock (made again if the run that held it removed it meanwhile). */
async function lockWorkDirectory(work: string, out: string): Promise<() => Promise<void>> {
  for (let attempt = 0;; attempt++) {
    await mkdir(work, { recursive: true });
    try {
      return await lockOutputDirectory(work, '--out', out);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt > 0) throw e;
    }
  }
}

/** `neardup index compact`: a Redis store's log (log layout) or a file store's records and log. */
async function compactStore(o: { store: string }): Promise<void> {
  const kind = storeSpecFlag(o.store).kind;
  if (kind !== 'redis' && kind !== 'file')
    throw new UsageError(`compact rewrites the log of a Redis store or the files of a file store: give ${storeForms(['file', 'redis'])}`);
  // A file store that is not there is not created (empty) to be compacted.
  if (kind === 'file') await checkStoreFile(o.store, true, 'index compact');
  const idx = await NearDupIndex.open({ store: o.store });
  try {
    const store = idx.store;
    if (!store.compact) throw new UsageError(`the ${store.kind} store of ${o.store} has no log to compact`);
    // A RangeError says the store's configuration has no log (Redis, sets layout): a usage error.
    const r = await store.compact().catch((e: unknown) => {
      throw e instanceof RangeError ? new UsageError(`${o.store}: ${e.message}`) : e;
    });
    const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;
    process.stdout.write(
      `${kind === 'file' ? 'records and log' : 'log'} of ${o.store}: ${r.entriesBefore} entries (${
        mb(r.bytesBefore)
      } rewritten) -> ${r.entriesAfter} entries (${mb(r.bytesAfter)}), ${r.documents} documents\n`,
    );
  } finally {
    await idx.close();
  }
}
