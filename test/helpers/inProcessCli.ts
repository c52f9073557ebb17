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
