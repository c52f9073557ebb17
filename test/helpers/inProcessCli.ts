/**
 * Test helper: runs `neardup` commands in this process (the same program and exit codes as the
 * binary, without a Node start-up per run), for property tests that run hundreds of commands.
 * Paths must be absolute; summaries go to process.stderr, so pass -q.
 */
import { createProgram, runProgram } from '../../src/cli/program.js';
import { dedupCommand } from '../../src/cli/dedup/command.js';
import { jobCommand } from '../../src/cli/job/command.js';
import { stageCommand } from '../../src/cli/job/stage.js';
import { indexCommand } from '../../src/cli/index/command.js';
import { spansCommand } from '../../src/cli/spans/command.js';

/** The exit code and what the program's error path wrote. */
export interface InProcessRun {
  code: number;
  stderr: string;
}

/** Runs `neardup ...args` in this process. */
export async function cliInProcess(args: readonly string[]): Promise<InProcessRun> {
  const program = createProgram();
  program.addCommand(dedupCommand()).addCommand(jobCommand()).addCommand(stageCommand()).addCommand(indexCommand()).addCommand(spansCommand());
  let stderr = '';
  const sink = { write: (s: string) => ((stderr += s), true) } as unknown as NodeJS.WritableStream;
  const code = await runProgram(program, ['node', 'neardup', ...args], sink);
  return { code, stderr };
}

/** Where {@link cliIn} runs a command: its working directory and variables added to the environment. */
export interface InProcessPlace {
  cwd?: string;
  env?: Record<string, string>;
}

/**
 * Runs `neardup ...args` in this process as test/cliUtil.ts's `neardup()` runs it in a child: in
 * `cwd` (relative paths then work), with `env` added, and with stderr holding everything the command
 * wrote there (summaries and warnings as well as the error). Standard output is not captured: for
 * tests whose outputs go to files. The directory and environment are put back afterwards; a test
 * file's tests run one at a time, so nothing else runs in this process meanwhile.
 */
export async function cliIn(args: readonly string[], place: InProcessPlace = {}): Promise<InProcessRun> {
  const cwd = process.cwd();
  const saved = Object.entries(place.env ?? {}).map(([k, v]) => {
    const was = process.env[k];
    process.env[k] = v;
    return [k, was] as const;
  });
  const write = process.stderr.write;
  let said = '';
  process.stderr.write = ((s: string | Uint8Array) => ((said += typeof s === 'string' ? s : Buffer.from(s).toString('utf8')), true)) as typeof write;
  try {
    if (place.cwd) process.chdir(place.cwd);
    const r = await cliInProcess(args);
    return { code: r.code, stderr: said + r.stderr };
  } finally {
    process.stderr.write = write;
    process.chdir(cwd);
    for (const [k, was] of saved) {
      if (was === undefined) delete process.env[k];
      else process.env[k] = was;
    }
  }
}
