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

/** Default of `AppOptions.purgeInterval`: one sweep a minute. */
export const DEFAULT_PURGE_INTERVAL_MS = 60_000;

/** Installs the sweep on `app` (nothing when `intervalMs` is 0). `log` gets one line per sweep that removed something or failed. */
export function installExpirySweep(app: FastifyInstance, index: NearDupIndex, metrics: Metrics, intervalMs: number, log: (line: string) => void): void {
  if (intervalMs <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const sweep = async () => {
    try {
      const ids = await index.purgeExpired();
      if (ids.length) {
        metrics.inc('neardup_documents_expired_total', 'Expired documents purged by the sweep.', {}, ids.length);
        log(`neardup serve: ${new Date().toISOString()} purged ${ids.length} expired document${ids.length === 1 ? '' : 's'}\n`);
      }
    } catch (e) {
      // A store that is away (503 elsewhere) is tried again at the next sweep.
      log(`neardup serve: ${new Date().toISOString()} expiry sweep failed: ${(e as Error).message}\n`);
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
