/**
 * `neardup index check --store SPEC`: verifies an online index (exit 0 when consistent, 1 when not).
 * @module
 */
import { Command } from 'commander';
import { NearDupIndex } from '../../online/nearDupIndex.js';
import { checkIndex } from '../../online/check.js';
import { UsageError } from '../../io/errors.js';

/** The `index` command with its `check` subcommand. */
export function indexCommand(): Command {
  const index = new Command('index').description('maintain an online index (the store of `neardup serve`)');
  index
    .command('check')
    .description('verify an index: records decode, every document key leads back to its document, counts agree, store integrity')
    .requiredOption('--store <spec>', 'sqlite:PATH or redis://HOST:PORT[?prefix=NAME]')
    .option('--json', 'print the report as JSON', false)
    .addHelpText('after', '\nExample:\n  $ neardup index check --store sqlite:./index.db\n\nExit codes: 0 consistent, 1 inconsistent or unreadable, 2 usage error.')
    .action(async (o: { store: string; json: boolean }) => {
      if (o.store === 'memory') throw new UsageError('--store memory has nothing to check: give sqlite:PATH or redis://HOST:PORT');
      if (o.store.startsWith('sqlite:')) {
        const { existsSync } = await import('node:fs');
        if (!existsSync(o.store.slice(7))) throw new UsageError(`no SQLite index at ${o.store.slice(7)}`);
      }
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
    });
  return index;
}
