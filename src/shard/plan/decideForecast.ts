/**
 * Decide's memory, forecast once the link stage has run. A decide task holds per-document state of
 * its components whole (a decision walks a component in keep order), so that part of its peak
 * follows the largest verified component it gets, not its share of the corpus; its verified pairs
 * are held only up to the spill limit (src/shard/spill/limits.ts: from the plan's task-memory
 * budget), past which they are read a bucket at a time from files. After link, each decide task's
 * input is known exactly: the link markers' `decide` triples (src/shard/stages/link.ts) give its
 * verified pairs and clustered documents, and the per-row costs of docs/distributed.md ("Memory and
 * disk per task") give its peak.
 * @module
 */
import { taskCount, type JobSpec } from '../files/job.js';
import { spillLimits } from '../spill/limits.js';
import type { LinkMarker } from '../stages/link.js';

/**
 * A task process's own memory, and what decide holds per verified pair (held in memory: up to the
 * spill limit) and per clustered document (docs/distributed.md). The pair's 72 B is fitted to the
 * 10M run's chain task held in memory (8.69M pairs as link counts them, 1.29M documents: 1.00 GB
 * measured). The document's 250 B is above what decide measures past the spill limit: 199–233 B a
 * clustered document on the 1.5M planted chain's task (746,129 documents; bench/RESULTS.md, "Decide's
 * documents as bytes").
 */
export const DECIDE_BYTES = { base: 50 * 2 ** 20, pair: 72, doc: 250 } as const;

/** What the forecast reads of a link task's marker. */
export type LinkCounts = Pick<LinkMarker, 'decide'>;

/** One decide task's forecast. */
export interface DecideForecast {
  /** The decide task (a shard group). */
  task: number;
  /** Verified pairs of its components. */
  pairs: number;
  /** Documents of its components, copies included. */
  docs: number;
  /** Forecast peak memory (bytes). */
  bytes: number;
  /** Whether its pairs pass the spill limit (they are decided out of core, holding the limit's worth at most). */
  spills?: true;
}

/**
 * The forecast peak of a decide task with `pairs` verified pairs over `docs` clustered documents,
 * holding at most `spillPairs` of the pairs (past it they are spilled: a bucket of rows at a time).
 */
export function decidePeak(pairs: number, docs: number, spillPairs = Infinity): number {
  return DECIDE_BYTES.base + DECIDE_BYTES.pair * Math.min(pairs, spillPairs) + DECIDE_BYTES.doc * docs;
}

/**
 * Every decide task's forecast from the link tasks' markers (`tasks` decide tasks), its pairs held up
 * to `spillPairs` (the job's spill limit; default none); undefined when a link task has not committed
 * or its marker has no `decide` counts.
 */
export function forecastDecide(links: readonly (LinkCounts | undefined)[], tasks: number, spillPairs = Infinity): DecideForecast[] | undefined {
  const pairs = new Float64Array(tasks);
  const docs = new Float64Array(tasks);
  for (const m of links) {
    const d = m?.decide;
    if (!d || d.length % 3 !== 0) return undefined;
    for (let i = 0; i < d.length; i += 3) {
      pairs[d[i]!]! += d[i + 1]!;
      docs[d[i]!]! += d[i + 2]!;
    }
  }
  return Array.from(
    { length: tasks },
    (_, t) => ({
      task: t,
      pairs: pairs[t]!,
      docs: docs[t]!,
      bytes: decidePeak(pairs[t]!, docs[t]!, spillPairs),
      ...(pairs[t]! > spillPairs ? { spills: true as const } : {}),
    }),
  );
}

/** The largest forecast (by bytes; the first of equals), or undefined for none. */
export function largestDecide(f: readonly DecideForecast[]): DecideForecast | undefined {
  let best: DecideForecast | undefined;
  for (const x of f) if (!best || x.bytes > best.bytes) best = x;
  return best;
}

/** The warnings for decide tasks whose forecast passes `budget` bytes, one line each (without "neardup: warning: "). */
export function decideWarnings(f: readonly DecideForecast[], budget: number): string[] {
  const mb = (b: number): string => `${Math.round(b / 2 ** 20).toLocaleString('en-US')} MB`;
  return f
    .filter((x) => x.bytes > budget)
    .map((x) =>
      `decide task ${x.task} is forecast to peak at ${mb(x.bytes)} (${x.pairs.toLocaleString('en-US')} verified pairs, ${
        x.docs.toLocaleString('en-US')
      } clustered documents), above the task-memory budget of ${mb(budget)}: ${
        x.spills ? "its pairs are spilled, but each component's documents are held whole" : 'its components are decided whole'
      }`
    );
}

/** What {@link warnDecideForecast} reads and whom it tells. */
export interface ForecastWarning {
  job: JobSpec;
  /** Link task t's marker, through any work dir (undefined before it commits). */
  marker: (t: number) => Promise<object | undefined>;
  warn: (line: string) => void;
  /** Only these decide tasks (an array member's); default all. */
  tasks?: readonly number[];
}

/**
 * Reads the forecast from the link markers and, past the plan's `taskMemoryBudget`, warns of each
 * decide task over it (the job goes on: the budget is the plan's, not a limit this process
 * enforces). Returns the forecast, undefined before link has run.
 */
export async function warnDecideForecast(o: ForecastWarning): Promise<DecideForecast[] | undefined> {
  const { job } = o;
  const n = taskCount(job, 'link');
  const f = forecastDecide(
    await Promise.all(Array.from({ length: n }, (_, t) => o.marker(t) as Promise<LinkCounts | undefined>)),
    taskCount(job, 'decide'),
    spillLimits(job.taskMemoryBudget).pairs,
  );
  const mine = f?.filter((x) => !o.tasks || o.tasks.includes(x.task));
  if (mine && job.taskMemoryBudget !== undefined) { for (const w of decideWarnings(mine, job.taskMemoryBudget)) o.warn(w); }
  return f;
}
