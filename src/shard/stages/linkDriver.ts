/**
 * Running the link stage's rounds (src/shard/stages/link.ts): how many there are is known only as they
 * run, so each runner (the local one, the BullMQ submitter, array members) drives them through
 * {@link driveLink}, giving it a way to run a round's tasks and to read their markers.
 * @module
 */
import { roundStage, taskCount, type JobSpec, type RoundStage } from '../files/job.js';

/** Rounds at most: large-star/small-star needs O(log² n) of them; this many means a defect. */
const MAX_ROUNDS = 200;

/** What the driver reads of a round task's marker: whether its partition was all stars (large-star rounds). */
export interface RoundState {
  star?: boolean;
}

/** How a runner runs the tasks of a round and sees them commit. */
export interface RoundRunner {
  /** Runs these tasks of the round (each through the work dir); resolves once they have committed. */
  run(stage: RoundStage, tasks: number[]): Promise<void>;
  /** Task t's marker, when it has committed. */
  marker(stage: RoundStage, t: number): Promise<RoundState | undefined>;
}

/**
 * The converged large-star round of the job, when the rounds so far end in one (every task of it
 * found only stars); undefined while some round is incomplete or the graph is not yet stars.
 */
export async function convergedRound(job: JobSpec, marker: RoundRunner['marker']): Promise<number | undefined> {
  const G = taskCount(job, 'link');
  for (let r = 1; r <= MAX_ROUNDS; r += 2) {
    const ms = await Promise.all(Array.from({ length: G }, (_, t) => marker(roundStage(r), t)));
    if (ms.some((m) => m === undefined)) return undefined;
    if (ms.every((m) => m!.star === true)) return r;
  }
  return undefined;
}

/**
 * Runs link rounds until the verified graph is stars; returns that round. `runner.run` gets each
 * round's unfinished tasks; a resumed job skips the rounds already committed.
 */
export async function driveLink(job: JobSpec, runner: RoundRunner): Promise<number> {
  const G = taskCount(job, 'link');
  for (let r = 0; r <= MAX_ROUNDS; r++) {
    const stage = roundStage(r);
    const ms = await Promise.all(Array.from({ length: G }, (_, t) => runner.marker(stage, t)));
    const todo = ms.flatMap((m, t) => (m ? [] : [t]));
    if (todo.length > 0) await runner.run(stage, todo);
    if (r % 2 === 1) {
      const done = await Promise.all(Array.from({ length: G }, (_, t) => runner.marker(stage, t)));
      if (done.every((m) => m?.star === true)) return r;
    }
  }
  throw new Error(`the link stage did not converge in ${MAX_ROUNDS} rounds`);
}

/**
 * A runner for array members (Slurm, Kubernetes Indexed Jobs): this member runs its own tasks of
 * each round, then waits for the round's other tasks; a task still missing after `stealAfterMs`
 * (a member that has not started, or died) it runs itself, as any member may (tasks commit
 * atomically, and a second run of a committed task is a no-op); members stealing at once start
 * from different missing tasks.
 */
export function memberRunner(
  own: readonly number[],
  run: (stage: RoundStage, t: number) => Promise<unknown>,
  marker: RoundRunner['marker'],
  timing: { stealAfterMs?: number; pollMs?: number } = {},
): RoundRunner {
  const { stealAfterMs = 2000, pollMs = 250 } = timing;
  return {
    marker,
    async run(stage, tasks) {
      const mine = tasks.filter((t) => own.includes(t));
      for (const t of mine) await run(stage, t);
      let since = performance.now();
      for (;;) {
        const missing: number[] = [];
        for (const t of tasks) if (!(await marker(stage, t))) missing.push(t);
        if (missing.length === 0) return;
        if (performance.now() - since >= stealAfterMs) {
          // Members waiting on the same tasks each take a different one first, not all the same.
          await run(stage, missing[(own[0] ?? 0) % missing.length]!);
          since = performance.now();
          continue;
        }
        await new Promise((r) => setTimeout(r, pollMs));
      }
    },
  };
}
