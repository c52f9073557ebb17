/**
 * The background sweep of `neardup serve`: every `intervalMs` the server purges the documents whose
 * expiry has passed (`index.purgeExpired()`: the store's expiry index, then the bulk-delete path),
 * one sweep at a time. Expired documents are hidden from every answer before they are purged; the
 * sweep gives their space back. Started when the app is ready, stopped (and waited for) when it closes.
 * @module
 */
import type { FastifyInstance } from 'fastify';
import type { NearDupIndex } from '../online/nearDupIndex.js';
import type { Metrics } from './metrics.js';

/** An index the sweep purges: the server's own (no name) or a named one, held until `release`. */
export interface SweptIndex {
  name?: string;
  index: NearDupIndex;
  release?: () => void;
}

/** Default of `AppOptions.purgeInterval`: one sweep a minute. */
export const DEFAULT_PURGE_INTERVAL_MS = 60_000;

/** What {@link installExpirySweep} sweeps, how often, and where it reports. */
export interface ExpirySweepOptions {
  /** The indexes to purge, asked at each sweep (the server's own and the named ones open). */
  indexes: () => Promise<SweptIndex[]>;
  /** Counts the purged documents (`neardup_documents_expired_total`). */
  metrics: Metrics;
  /** Milliseconds between sweeps; 0 installs nothing. */
  intervalMs: number;
  /** Gets one line per index whose sweep removed something or failed. */
  log: (line: string) => void;
}

/**
 * Installs the sweep on `app` (nothing when `intervalMs` is 0) over the indexes `indexes()` gives at
 * each sweep (the server's own and the named ones open). `log` gets one line per index whose sweep
 * removed something or failed.
 */
export function installExpirySweep(app: FastifyInstance, options: ExpirySweepOptions): void {
  const { indexes, metrics, intervalMs, log } = options;
  if (intervalMs <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const sweepOne = async (index: NearDupIndex, name: string | undefined) => {
    const of = name === undefined ? '' : ` of index "${name}"`;
    try {
      const ids = await index.purgeExpired();
      if (ids.length) {
        metrics.inc('neardup_documents_expired_total', 'Expired documents purged by the sweep.', {}, ids.length);
        log(`neardup serve: ${new Date().toISOString()} purged ${ids.length} expired document${ids.length === 1 ? '' : 's'}${of}\n`);
      }
    } catch (e) {
      // A store that is away (503 elsewhere) is tried again at the next sweep.
      log(`neardup serve: ${new Date().toISOString()} expiry sweep${of} failed: ${(e as Error).message}\n`);
    }
  };
  const sweep = async () => {
    for (const { index, name, release } of await indexes()) {
      try {
        await sweepOne(index, name);
      } finally {
        release?.();
      }
    }
  };
  app.addHook('onReady', async () => {
    timer = setInterval(() => {
      running = running.then(sweep);
    }, intervalMs);
    // The sweep never keeps the process alive by itself.
    timer.unref();
  });
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await running;
  });
}
