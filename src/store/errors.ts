/**
 * Store errors that callers handle specially.
 * @module
 */

/**
 * The store cannot be reached right now (Redis down, paused or loading). The request did not
 * complete and was not acknowledged; retrying later is safe. The HTTP service answers 503 with a
 * Retry-After header.
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  /** Seconds a client should wait before retrying. */
  readonly retryAfter: number;

  constructor(message: string, retryAfter = 1, options?: { cause?: unknown }) {
    super(message, options);
    this.retryAfter = retryAfter;
  }
}

/**
 * A store needs an optional package that is not installed (better-sqlite3 for `sqlite:`, ioredis
 * for `redis://`). One class for every optional package, defined with the loader in src/common/lazy.ts.
 */
export { MissingDependencyError } from '../common/lazy.js';

/**
 * The store cannot take a batch: its in-memory band table would hold more documents than it can
 * number (~67M of 32 keys), or the in-process store's records would outgrow their one array of
 * 4 GiB. Nothing of the batch was written; the store goes on with what it holds. The HTTP service
 * answers 507.
 */
export class StoreFullError extends Error {
  override readonly name = 'StoreFullError';
}
