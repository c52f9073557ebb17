#!/usr/bin/env node
/**
 * The `neardup` command-line entry point. Each subcommand lives in ./commands and is registered
 * here with one line.
 * @module
 */
import { createProgram, runProgram } from './program.js';
import { dedupCommand } from './commands/dedup.js';
import { paramsCommand } from './commands/params.js';
import { compareCommand } from './commands/compare.js';
import { benchCommand } from './commands/bench.js';
import { serveCommand } from './commands/serve.js';
import { indexCommand } from './commands/index-check.js';

const program = createProgram();
program.addCommand(dedupCommand());
program.addCommand(paramsCommand());
program.addCommand(compareCommand());
program.addCommand(benchCommand());
program.addCommand(serveCommand());
program.addCommand(indexCommand());

// A closed pipe (`neardup dedup x | head`) is not an error.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});
process.exitCode = await runProgram(program, process.argv);
