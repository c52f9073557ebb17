/**
 * The HTTP service over a NearDupIndex, on Fastify: JSON-schema validation (400 with per-field
 * errors), a body size limit (413), optional bearer-token auth (401, constant-time comparison),
 * Prometheus metrics, an OpenAPI document and graceful shutdown. buildApp assembles the parts:
 * metrics hooks (metricsRoutes.ts), auth (auth.ts), error handling (errorHandler.ts), then the
 * routes by group: documents, queries, clusters, admin and health, metrics, the web page.
 * @module
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { UsageError } from '../common/errors.js';
import { bearerTokenProblem } from '../common/bearer.js';
import type { NearDupIndex } from '../online/nearDupIndex.js';
import type { IndexRegistry } from '../online/registry/registry.js';
import { registerIndexRoutes } from './indexRoutes.js';
import { fixedScope } from './scope.js';
import { webUi } from '../web/plugin.js';
import { installAuth } from './auth.js';
import { registerClusterRoutes } from './clusterRoutes.js';
import { installErrorHandling } from './errorHandler.js';
import { installRequestMetrics, registerMetricsRoute } from './metricsRoutes.js';
import { registerDocumentRoutes } from './documentRoutes.js';
import { registerQueryRoutes } from './queryRoutes.js';
import { registerAdminRoutes } from './adminRoutes.js';
import { installJsonBodyParser } from './jsonBody.js';
import { DEFAULT_PURGE_INTERVAL_MS, installExpirySweep } from './expirySweep.js';

export { openApiDocument } from './openapi.js';
export { DEFAULT_PURGE_INTERVAL_MS } from './expirySweep.js';

/** Options of {@link buildApp}. */
export interface AppOptions {
  /**
   * Require `Authorization: Bearer <token>` on every route except /healthz, /readyz and the web page.
   * Default (undefined): no auth. An empty or blank token is a {@link UsageError}: it would turn
   * auth off without saying so; so is one no client can send (`bearerTokenProblem`), which would shut every route.
   */
  token?: string;
  /** Maximum request body in bytes; larger bodies get 413. Default 1 MiB. */
  bodyLimit?: number;
  /** Fastify logger (pino options or boolean). Default false. */
  logger?: boolean;
  /**
   * Keep each added document's text in its metadata (`meta.text`), so the web page can show what
   * near duplicates share and what differs. Default true; `neardup serve --no-store-text` turns it off.
   */
  storeText?: boolean;
  /**
   * Where every 5xx answer is reported with its cause (one line with the stack), whatever `logger`
   * says. Default: standard error.
   */
  errorLog?: (line: string) => void;
  /**
   * Milliseconds a client has to send a whole request, headers and body (then 408 and the connection
   * closed): a body trickled in forever no longer holds a connection. 0 turns it off. Default
   * {@link DEFAULT_REQUEST_TIMEOUT_MS}.
   */
  requestTimeout?: number;
  /** Milliseconds a client has to send the request headers (then 408). Default {@link DEFAULT_HEADER_TIMEOUT_MS}. */
  headerTimeout?: number;
  /**
   * Milliseconds between two purges of expired documents (src/server/expirySweep.ts); 0 turns the
   * sweep off. Default {@link DEFAULT_PURGE_INTERVAL_MS}.
   */
  purgeInterval?: number;
  /**
   * Named indexes served beside the server's own under `/v1/indexes/{name}` (src/server/indexRoutes.ts).
   * Default: none (those routes are absent). Closing the app does not close the registry.
   */
  registry?: IndexRegistry;
}

/** Default of {@link AppOptions.requestTimeout}: 30 s for the headers and the body of one request. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Default of {@link AppOptions.headerTimeout}: 10 s for the headers. */
export const DEFAULT_HEADER_TIMEOUT_MS = 10_000;
/** Default of {@link installShutdown}'s deadline: requests in flight get 10 s to finish. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

/** Builds the Fastify app (not listening). Closing the app does not close the index. */
export function buildApp(index: NearDupIndex, options: AppOptions = {}): FastifyInstance & { draining: boolean } {
  if (options.token !== undefined && (typeof options.token !== 'string' || options.token.trim() === '')) {
    throw new UsageError('buildApp: options.token is empty: give the bearer token clients must send, or leave token out to serve without auth');
  }
  const problem = options.token === undefined ? undefined : bearerTokenProblem(options.token);
  if (problem) throw new UsageError(`buildApp: options.token ${problem}`);
  const bodyLimit = options.bodyLimit ?? 1024 * 1024;
  const requestTimeout = options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS;
  // Node refuses a header timeout longer than the request timeout (when that is on).
  const headersTimeout = Math.min(options.headerTimeout ?? DEFAULT_HEADER_TIMEOUT_MS, requestTimeout || Infinity);
  const app = Fastify({
    requestTimeout,
    // Node checks the two timeouts every connectionsCheckingInterval (30 s by default): often
    // enough that a timeout is kept to within about a tenth of itself (at least 100 ms).
    http: {
      requestTimeout,
      headersTimeout,
      connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(Math.min(headersTimeout, requestTimeout || Infinity) / 10))),
    },
    logger: options.logger ?? false,
    bodyLimit,
    ajv: { customOptions: { allErrors: true, coerceTypes: false, removeAdditional: false } },
    forceCloseConnections: 'idle',
    // Ids may be 1024 characters, up to 9 bytes each once percent-encoded in the path (the default
    // limit of 100 made long ids impossible to GET or DELETE: 414).
    routerOptions: { maxParamLength: 10 * 1024 },
    return503OnClosing: true,
  }) as unknown as FastifyInstance & { draining: boolean };
  app.draining = false;
  // The API takes JSON only: without this, Fastify's built-in text/plain parser turned a text body
  // into a 400 "body must be object" instead of the documented 415.
  app.removeContentTypeParser('text/plain');
  // JSON bodies are decoded strictly: invalid UTF-8 is a 400 naming the field, not U+FFFD.
  installJsonBodyParser(app);

  const metrics = installRequestMetrics(app);
  // Before any route: authorization is decided per matched route (config.public), never by URL text.
  installAuth(app, options.token);
  const errorLog = options.errorLog ?? ((line: string) => void process.stderr.write(line));
  installErrorHandling(app, { bodyLimit, errorLog });
  const { registry } = options;
  const swept = async () => [{ index }, ...(registry ? await registry.acquireOpen() : [])];
  installExpirySweep(app, { indexes: swept, metrics, intervalMs: options.purgeInterval ?? DEFAULT_PURGE_INTERVAL_MS, log: errorLog });

  const storeText = options.storeText ?? true;
  const own = fixedScope(index);
  registerDocumentRoutes(app, own, metrics, storeText);
  registerQueryRoutes(app, own, metrics);
  registerClusterRoutes(app, own);
  if (registry) registerIndexRoutes(app, { registry, token: options.token, metrics, storeText });
  registerAdminRoutes(app, index);
  registerMetricsRoute(app, index, metrics);
  app.register(webUi);
  return app;
}

/**
 * Graceful shutdown on SIGTERM and SIGINT: /healthz turns 503, the server stops accepting
 * connections, requests in flight finish (their writes are acknowledged and durable) for at most
 * `deadlineMs` (default {@link DEFAULT_SHUTDOWN_TIMEOUT_MS}); then the connections still open (a
 * slow client) are closed, the index is closed and `onDone` runs (default: exit 0).
 */
export function installShutdown(
  app: FastifyInstance & { draining: boolean },
  index: NearDupIndex,
  onDone: () => void = () => process.exit(0),
  deadlineMs = DEFAULT_SHUTDOWN_TIMEOUT_MS,
): void {
  let started = false;
  const stop = async () => {
    if (started) return;
    started = true;
    app.draining = true;
    try {
      const closed = app.close();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), deadlineMs)));
      if (await Promise.race([closed.then(() => false), late])) {
        process.stderr.write(`neardup serve: requests still open after ${deadlineMs} ms: closing their connections\n`);
        app.server.closeAllConnections();
      }
      clearTimeout(timer);
      await closed;
      await index.close();
    } finally {
      onDone();
    }
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
