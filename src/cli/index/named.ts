/**
 * `neardup index create|drop|list --indexes DIR`: the named indexes `neardup serve --indexes DIR`
 * serves under `/v1/indexes/{name}` (src/online/registry/registry.ts). `create` and `drop` hold the
 * registry's lock while they run, as `serve` does while it serves, so they refuse a registry being
 * served (the server's `POST /v1/indexes` and `DELETE /v1/indexes/{name}` do the same there).
 * @module
 */
import { Command, Option } from 'commander';
import { mkdir, stat } from 'node:fs/promises';
import { UsageError } from '../../common/errors.js';
import { lockOutputDirectory } from '../../io/write/outDir.js';
import { IndexExistsError, IndexRegistry, type NamedIndexOptions, type NamedStore } from '../../online/registry/registry.js';
import { addIndexParams, indexOptionsFrom, type IndexFlags } from './options.js';

/** What the registry's lock says it guards, in the message refusing a second holder. */
const REGISTRY_LOCK = 'index registry';

/** Opens the registry in `dir` for a command; a bad or missing one is a usage error (exit 2). */
export async function openRegistry(dir: string, create: boolean): Promise<IndexRegistry> {
  try {
    return await IndexRegistry.open(dir, { create });
  } catch (e) {
    if (e instanceof RangeError) throw new UsageError(`--indexes: ${e.message}`);
    throw e;
  }
}

/**
 * Holds the registry in `dir` for the life of this process's use of it (`serve`, or one `create`
 * or `drop`): another holder alive is a usage error naming it. Returns the release function.
 */
export function lockRegistry(dir: string): Promise<() => Promise<void>> {
  return lockOutputDirectory(dir, REGISTRY_LOCK);
}

/** Makes the registry directory `dir` when missing; a file in its place is a usage error. */
export async function makeRegistryDir(dir: string): Promise<void> {
  const st = await stat(dir).catch(() => undefined);
  if (st && !st.isDirectory()) throw new UsageError(`--indexes ${dir} is a file, not a directory of indexes`);
  if (!st) await mkdir(dir, { recursive: true });
}

/** The index parameters of `create`'s flags. */
function namedOptions(o: Omit<IndexFlags, 'store' | 'workers'>): NamedIndexOptions {
  const { store: _s, workers: _w, ...rest } = indexOptionsFrom({ ...o, store: 'memory', workers: 0 });
  return rest;
}

/** Runs `fn` on the registry in `dir`, locked, created when `create`; usage errors for bad names, tokens and parameters. */
async function withLockedRegistry<T>(dir: string, create: boolean, fn: (r: IndexRegistry) => Promise<T>): Promise<T> {
  if (create) await makeRegistryDir(dir);
  else if (!(await stat(dir).then((s) => s.isDirectory(), () => false))) throw new UsageError(`--indexes: no index registry at ${dir}`);
  const release = await lockRegistry(dir);
  try {
    const reg = await openRegistry(dir, create);
    try {
      return await fn(reg);
    } finally {
      await reg.close();
    }
  } catch (e) {
    if (e instanceof RangeError || e instanceof IndexExistsError) throw new UsageError(e.message);
    throw e;
  } finally {
    await release();
  }
}

/** Adds `create`, `drop` and `list` to the `index` command. */
export function addIndexNamedCommands(index: Command): void {
  const create = index
    .command('create <name>')
    .description('create a named index in a registry directory (served by `neardup serve --indexes DIR` under /v1/indexes/NAME)')
    .requiredOption('--indexes <dir>', 'the registry directory (created when missing)')
    .addOption(
      new Option('--store <kind>', 'file: a file store DIR/NAME/; sqlite: a SQLite file DIR/NAME.db; memory: lost when the server stops (docs/stores.md)')
        .choices(['file', 'sqlite', 'memory']).default('file'),
    )
    .addOption(new Option('--token <token>', 'a bearer token of its own, which opens this index only').env('NEARDUP_INDEX_TOKEN'));
  addIndexParams(create)
    .addHelpText(
      'after',
      '\nExample:\n  $ neardup index create ads --indexes ./indexes --threshold 0.7\n\nExit codes: 0 created, 2 usage error (a bad or taken name, a bad parameter, a registry being served).',
    )
    .action(async (name: string, o: Omit<IndexFlags, 'store' | 'workers'> & { indexes: string; store: NamedStore; token?: string }) => {
      const info = await withLockedRegistry(o.indexes, true, (r) => r.create(name, { store: o.store, token: o.token, options: namedOptions(o) }));
      process.stdout.write(
        `created index "${info.name}" (store ${info.store}, threshold ${info.threshold}${info.token ? ', its own token' : ''}) in ${o.indexes}\n`,
      );
    });
  index
    .command('drop <name>')
    .description('drop a named index: off the registry, and its documents deleted')
    .requiredOption('--indexes <dir>', 'the registry directory')
    .addHelpText(
      'after',
      '\nExample:\n  $ neardup index drop ads --indexes ./indexes\n\nExit codes: 0 dropped, 2 usage error (no such index, a registry being served).',
    )
    .action(async (name: string, o: { indexes: string }) => {
      const dropped = await withLockedRegistry(o.indexes, false, (r) => r.drop(name));
      if (!dropped) throw new UsageError(`no index "${name}" in ${o.indexes}`);
      process.stdout.write(`dropped index "${name}" from ${o.indexes}\n`);
    });
  index
    .command('list')
    .description('list the named indexes of a registry directory')
    .requiredOption('--indexes <dir>', 'the registry directory')
    .option('--json', 'print them as JSON', false)
    .action(async (o: { indexes: string; json: boolean }) => {
      const reg = await openRegistry(o.indexes, false);
      try {
        const all = reg.list();
        if (o.json) process.stdout.write(`${JSON.stringify({ indexes: all }, null, 2)}\n`);
        else for (const x of all)
            process.stdout.write(`${x.name}\t${x.store}\tthreshold ${x.threshold}\t${x.token ? 'own token' : 'no own token'}\tcreated ${x.created}\n`);
      } finally {
        await reg.close();
      }
    });
}
