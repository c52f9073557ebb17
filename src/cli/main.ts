#!/usr/bin/env node
/**
 * Minimal `neardup` entry point for the online branch (the CLI branch adds the other commands).
 * @module
 */
import { Command } from 'commander';
import { serveCommand } from './commands/serve.js';

const program = new Command('neardup').description('near-duplicate detection').showHelpAfterError();
program.addCommand(serveCommand());
program.parseAsync(process.argv).catch((e: unknown) => {
  process.stderr.write(`neardup: ${(e as Error).message}\n`);
  process.exit(1);
});
