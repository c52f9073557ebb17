/**
 * Progress bars on stderr (cli-progress), shown only when stderr is a terminal and not --quiet.
 * @module
 */
import { createRequire } from 'node:module';
import type { Writable } from 'node:stream';
import type cliProgressModule from 'cli-progress';

/** cli-progress, loaded only when a bar is drawn (never for -q or a non-terminal stderr): faster starts. */
let cliProgress: typeof cliProgressModule | undefined;
const bars = (): typeof cliProgressModule => (cliProgress ??= createRequire(import.meta.url)('cli-progress') as typeof cliProgressModule);

/** A progress display; every method is a no-op when progress is off. */
export interface Progress {
  /** Sets the amount done (bytes for byte bars, items otherwise) and the number of documents so far. */
  update(done: number, docs?: number): void;
  /** Removes the bar. */
  stop(): void;
}

/** What a bar counts. */
export type ProgressUnit = 'bytes' | 'docs' | 'pairs' | 'tasks' | 'stages';

const NOOP: Progress = { update() {}, stop() {} };

/**
 * Whether to draw progress bars: stderr must be a TTY and --quiet absent. The environment variable
 * NEARDUP_PROGRESS=always forces them (for logs and tests), =never disables them.
 */
export function progressEnabled(stream: { isTTY?: boolean }, quiet: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  if (quiet || env.NEARDUP_PROGRESS === 'never') return false;
  return env.NEARDUP_PROGRESS === 'always' || stream.isTTY === true;
}

function rate(n: number, ms: number): number {
  return ms > 0 ? (n * 1000) / ms : 0;
}

function si(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e4 ? `${(n / 1e3).toFixed(0)}k` : String(Math.round(n));
}

/**
 * The time left, from `remaining` units at `perSecond`: `42s`, `3m05s`, `2h07m`; `--` while there is
 * no rate to go by (nothing done yet, a stall) or when it would exceed 100 days. cli-progress's own
 * `{eta_formatted}` prints its `INF`/`NULL` through a two-character pad (`ETA NFs`).
 */
export function formatEta(remaining: number, perSecond: number): string {
  if (!(remaining > 0)) return remaining === 0 || remaining < 0 ? '0s' : '--';
  if (!(perSecond > 0)) return '--';
  const t = Math.ceil(remaining / perSecond);
  if (!Number.isFinite(t) || Number.isNaN(t) || t > 100 * 86400) return '--';
  const two = (n: number): string => String(n).padStart(2, '0');
  if (t >= 3600) return `${Math.floor(t / 3600)}h${two(Math.floor((t % 3600) / 60))}m`;
  if (t >= 60) return `${Math.floor(t / 60)}m${two(t % 60)}s`;
  return `${t}s`;
}

/**
 * A bar for one stage. `total` may be undefined (standard input): then it shows counts and rates
 * without a bar or ETA. Byte bars also show documents per second.
 */
export function createProgress(to: { enabled: boolean; stream: Writable }, label: string, unit: ProgressUnit, total: number | undefined): Progress {
  const { enabled, stream } = to;
  if (!enabled) return NOOP;
  const t0 = performance.now();
  const known = total !== undefined && total > 0;
  const rateText = unit === 'bytes' ? '{mbs} MB/s · {docs} docs · {dps} docs/s' : `{dps} ${unit}/s`;
  const format = known ? `${label.padEnd(8)} [{bar}] {percentage}% · ${rateText} · ETA {left}` : `${label.padEnd(8)} {count} · ${rateText}`;
  const { SingleBar, Presets } = bars();
  const bar = new SingleBar(
    {
      format,
      stream: stream as NodeJS.WriteStream,
      barsize: 24,
      hideCursor: false,
      clearOnComplete: true,
      noTTYOutput: true,
      notTTYSchedule: 1000,
      fps: 8,
      etaBuffer: 50,
    },
    Presets.shades_classic,
  );
  const payload = (done: number, docs: number | undefined): Record<string, string> => {
    const ms = performance.now() - t0;
    return {
      mbs: (rate(done, ms) / 1e6).toFixed(1),
      docs: si(docs ?? done),
      dps: si(rate(docs ?? done, ms)),
      count: unit === 'bytes' ? `${(done / 1e6).toFixed(1)} MB` : `${si(done)} ${unit}`,
      left: known ? formatEta(total - done, rate(done, ms)) : '',
    };
  };
  bar.start(known ? total : 1, 0, payload(0, 0));
  return {
    update(done, docs) {
      bar.update(known ? Math.min(done, total) : 0, payload(done, docs));
    },
    stop() {
      bar.stop();
    },
  };
}
