/**
 * How the HTTP service answers errors: 400 with per-field errors for schema violations, 503 +
 * Retry-After while the store is unavailable, 413 naming the body limit, 404 for unknown routes,
 * and a generic 500 whose cause goes to the error log (never to the client).
 * @module
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { StoreFullError, StoreUnavailableError } from '../store/errors.js';
import { ForbiddenKeyBodyError, InvalidUtf8BodyError } from './jsonBody.js';

/** What the error handler needs from the app's options. */
export interface ErrorHandling {
  /** The body limit in bytes, quoted in 413 answers. */
  bodyLimit: number;
  /** Where every 5xx is reported with its cause. */
  errorLog: (line: string) => void;
}

function fieldOf(e: { instancePath?: string; params?: Record<string, unknown> }): string {
  const base = e.instancePath || '';
  const p = e.params ?? {};
  if (typeof p.missingProperty === 'string') return `${base}/${p.missingProperty}`;
  if (typeof p.additionalProperty === 'string') return `${base}/${p.additionalProperty}`;
  return base || '/';
}

/** A validation error in plain words (Ajv's "must NOT have additional properties" names no field). */
function messageOf(e: { keyword?: string; message?: string; params?: Record<string, unknown> }): string {
  if (e.keyword === 'additionalProperties') return 'is not a field of this request: remove it (see /openapi.json for the fields)';
  if (e.keyword === 'required') return 'is required';
  return e.message ?? 'invalid';
}

function httpName(status: number): string {
  const names: Record<number, string> = {
    400: 'Bad Request',
    401: 'Unauthorized',
    404: 'Not Found',
    405: 'Method Not Allowed',
    413: 'Payload Too Large',
    415: 'Unsupported Media Type',
  };
  return names[status] ?? 'Error';
}

/** Installs the error and not-found handlers on `app`. */
export function installErrorHandling(app: FastifyInstance, { bodyLimit, errorLog }: ErrorHandling): void {
  /** A 5xx never goes unseen: its request and cause on stderr (the client only sees a generic message). */
  const report5xx = (status: number, method: string, url: string, error: unknown): void => {
    const e = error as Error;
    const cause = e?.cause ? `\n  caused by: ${String((e.cause as Error)?.stack ?? e.cause)}` : '';
    errorLog(`neardup serve: ${new Date().toISOString()} ${status} ${method} ${url}: ${e?.stack ?? String(error)}${cause}\n`);
  };

  app.setErrorHandler((error: FastifyError, req, reply) => {
    if (error.validation) {
      const errors = error.validation.map((e) => ({ field: fieldOf(e as never), message: messageOf(e as never) }));
      return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: errors.map((e) => `${e.field} ${e.message}`).join('; '), errors });
    }
    if ((error as unknown) instanceof InvalidUtf8BodyError) {
      const e = error as unknown as InvalidUtf8BodyError;
      return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: e.message, errors: [{ field: e.field, message: 'is not valid UTF-8' }] });
    }
    if ((error as unknown) instanceof ForbiddenKeyBodyError) {
      const e = error as unknown as ForbiddenKeyBodyError;
      return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: e.message, errors: [{ field: e.field, message: `is a "${e.key}" key` }] });
    }
    if ((error as unknown) instanceof StoreUnavailableError) {
      // Not acknowledged, safe to retry: the store (Redis) is away and the client reconnects by itself.
      // One line, no stack: an outage (a restart of the store's server) is expected, not a bug,
      // and its message already says what failed and why.
      req.log.warn({ err: error }, 'store unavailable');
      errorLog(`neardup serve: ${new Date().toISOString()} 503 ${req.method} ${req.url}: ${error.message}\n`);
      const retry = (error as unknown as StoreUnavailableError).retryAfter;
      reply.header('retry-after', String(retry));
      return reply.code(503).send({ statusCode: 503, error: 'Service Unavailable', message: `${error.message}; retry in ${retry} s` });
    }
    if ((error as unknown) instanceof StoreFullError) {
      // The batch was refused whole; the index goes on with what it holds.
      return reply.code(507).send({ statusCode: 507, error: 'Insufficient Storage', message: error.message });
    }
    const status = error.statusCode ?? 500;
    if (status === 413) {
      // Say the number and how to change it: "Request body is too large" leaves a user guessing.
      const limit = bodyLimit;
      return reply.code(413).send({
        statusCode: 413,
        error: 'Payload Too Large',
        message: `the request body is larger than this server's limit of ${limit} bytes (${
          (limit / 1048576).toFixed(limit % 1048576 ? 2 : 0)
        } MiB); start it with neardup serve --body-limit BYTES to raise it`,
      });
    }
    if (status === 415) {
      // Say what the server takes: "Unsupported Media Type: text/plain" alone leaves a user guessing.
      const got = req.headers['content-type'] ?? 'none';
      return reply.code(415).send({
        statusCode: 415,
        error: 'Unsupported Media Type',
        message: `the request body must be JSON: send it with Content-Type: application/json (got ${got})`,
      });
    }
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ statusCode: status, error: httpName(status), message: error.message });
    }
    if (error instanceof RangeError || error instanceof TypeError) {
      return reply.code(400).send({ statusCode: 400, error: 'Bad Request', message: error.message });
    }
    req.log.error(error);
    report5xx(500, req.method, req.url, error);
    return reply.code(500).send({ statusCode: 500, error: 'Internal Server Error', message: 'internal error (see the server log)' });
  });

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ statusCode: 404, error: 'Not Found', message: `no route ${req.method} ${req.url}` });
  });
}
