#!/usr/bin/env node
/**
 * The `neardup` command-line entry point. Each subcommand lives in ./commands and is registered
 * here with one line.
 * @module
 */
import type { Command } from 'commander';
import { startWithHugePages } from './hugePages.js';

// First, before the program's modules load: `serve` and `index` may start again in place with huge
// pages (./hugePages.ts), and a start that is thrown away should cost only Node's own.
startWithHugePages();
const { createProgram, runProgram } = await import('./program.js');
const { writeError } = await import('../io/write/output.js');
const { oneRunPerProcess } = await import('../io/read/inputStamps.js');

/**
 * Each subcommand's module is imported only when it runs (or for help and unknown commands, all of
 * them): `serve` and `report` pull in Fastify and the chart bundle, which would add ~150 ms to
 * every `neardup dedup` start.
 */
const commands: Record<string, () => Promise<Command>> = {
  dedup: async () => (await import('./dedup/command.js')).dedupCommand(),
  params: async () => (await import('./commands/params.js')).paramsCommand(),
  spans: async () => (await import('./spans/command.js')).spansCommand(),
  compare: async () => (await import('./commands/compare.js')).compareCommand(),
  bench: async () => (await import('./commands/bench.js')).benchCommand(),
  report: async () => (await import('./commands/report.js')).reportCommand(),
  serve: async () => (await import('./index/serve.js')).serveCommand(),
  index: async () => (await import('./index/command.js')).indexCommand(),
  job: async () => (await import('./job/command.js')).jobCommand(),
  stage: async () => (await import('./job/stage.js')).stageCommand(),
  worker: async () => (await import('./job/worker.js')).workerCommand(),
};

const program = createProgram();
const asked = process.argv[2];
// --version needs no command at all; help and unknown commands list every one.
const version = asked === '--version' || asked === '-V';
const names = version ? [] : asked !== undefined && Object.hasOwn(commands, asked) ? [asked] : Object.keys(commands);
for (const name of names) program.addCommand(await commands[name]!());

// A closed pipe (`neardup dedup x | head`) is not an error.
// Another write error (a full disk behind a redirection) is a failure naming standard output.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  process.stderr.write(`neardup: ${writeError('standard output', e).message}\n`);
  process.exit(1);
});
// This process runs one command: its input stamps need no AsyncLocalStorage (../io/read/inputStamps.ts).
oneRunPerProcess();
process.exitCode = await runProgram(program, process.argv);
