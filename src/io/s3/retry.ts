/**
 * How S3 requests are retried. The SDK's retry loop runs every request: it decides what is
 * retryable (throttling and 429, 500/502/503/504, timeouts, refused and dropped connections), and
 * {@link retryStrategy} decides how often and how long to wait (never for a host name that does not
 * exist), and says each retry at `-v`.
 * {@link retrying} runs a request again for what the SDK's loop cannot see: a body cut short after
 * the response began, and a 404 of a key just listed or written (stores that are only eventually
 * consistent after a write). Both wait the same way: exponential from 100 ms (NEARDUP_S3_RETRY_MS),
 * with jitter, at most 10 s, up to 8 attempts (NEARDUP_S3_ATTEMPTS).
 * @module
 */

/** Attempts of one request before its error is final (NEARDUP_S3_ATTEMPTS overrides). */
const ATTEMPTS = 8;

/** Attempts of a request, retries included. */
export function attempts(): number {
  const n = Number(process.env.NEARDUP_S3_ATTEMPTS);
  return Number.isInteger(n) && n >= 1 ? n : ATTEMPTS;
}

/** The first retry's wait in ms, doubled per attempt (NEARDUP_S3_RETRY_MS overrides 100: tests wait less). */
const firstWait = (): number => (process.env.NEARDUP_S3_RETRY_MS ? Math.max(0, Number(process.env.NEARDUP_S3_RETRY_MS) || 0) : 100);

let log: ((line: string) => void) | undefined;
/** Requests sent since start (every attempt counted): for `-v` and the bench. */
export const s3Requests = { count: 0, retries: 0 };

/** Where retries are reported (the CLI passes stderr at `-v`). */
export function setS3Log(fn: ((line: string) => void) | undefined): void {
  log = fn;
}

/** How long to wait before retry `attempt` (1 for the first). */
function backoff(attempt: number): number {
  return Math.min(10_000, firstWait() * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
}

/** A failure as the `-v` lines name it: its HTTP status, error code or name. */
function failureOf(e: unknown): string {
  return String(statusOf(e) ?? (e as NodeJS.ErrnoException)?.code ?? (e as Error)?.name);
}

/** The request a failed attempt was, for the `-v` line of its retry. */
interface FailedRequest {
  $neardupRequest?: string;
}

/** The verbs of the `-v` lines, by SDK command. */
const VERBS: Record<string, string> = {
  HeadObjectCommand: 'HEAD',
  GetObjectCommand: 'GET',
  ListObjectsV2Command: 'LIST',
  PutObjectCommand: 'PUT',
  UploadPartCommand: 'PUT part',
  CreateMultipartUploadCommand: 'CREATE-MULTIPART',
  CompleteMultipartUploadCommand: 'COMPLETE-MULTIPART',
  AbortMultipartUploadCommand: 'ABORT-MULTIPART',
  DeleteObjectCommand: 'DELETE',
};

/**
 * A middleware inside the SDK's retry loop (its step's lowest priority): counts every attempt, and
 * names the request on a failed attempt's error for {@link retryStrategy}'s line.
 */
export const countAttempts =
  ((next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: { input?: Record<string, unknown> }) => {
    s3Requests.count++;
    try {
      return await next(args);
    } catch (e) {
      const input = args.input ?? {};
      const name = `s3://${String(input.Bucket ?? '')}/${String(input.Key ?? input.Prefix ?? '')}`;
      const verb = VERBS[context.commandName ?? ''] ?? context.commandName ?? 'request';
      if (e && typeof e === 'object')
        (e as FailedRequest).$neardupRequest = `${verb}${input.PartNumber !== undefined ? ` ${String(input.PartNumber)}` : ''} ${name}`;
      throw e;
    }
  }) as unknown as import('@smithy/types').FinalizeRequestMiddleware<
    import('@aws-sdk/client-s3').ServiceInputTypes,
    import('@aws-sdk/client-s3').ServiceOutputTypes
  >;

/**
 * neardup's retry strategy for the SDK's retry loop (the SDK's `RetryStrategyV2` interface): the
 * SDK decides what is retryable (throttling and 429, 500/502/503/504, timeouts, dropped
 * connections; other 5xx too, as neardup always did), this decides how often (`most` attempts) and
 * how long to wait (exponential from 100 ms or NEARDUP_S3_RETRY_MS, with jitter, at most 10 s), and
 * says each retry at `-v`. No retry budget: a run retries each request up to its attempts.
 */
export function retryStrategy(most: number): import('@aws-sdk/client-s3').S3ClientConfig['retryStrategy'] {
  const token = (count: number, delay: number) => ({ getRetryCount: () => count, getRetryDelay: () => delay, getRetryTokenCount: () => 0 });
  return {
    acquireInitialRetryToken: async () => token(0, 0),
    refreshRetryTokenForRetry: async (previous, info) => {
      const attempt = previous.getRetryCount() + 1;
      const failed = (info as { error?: unknown }).error;
      // A host name that does not exist (a mistyped endpoint) stays so: no retries. EAI_AGAIN, a DNS
      // server that did not answer, is retried.
      if (attempt >= most || info.errorType === 'CLIENT_ERROR' || hostNotFound(failed)) throw new Error('not retried');
      const wait = backoff(attempt);
      s3Requests.retries++;
      const what = (failed as FailedRequest | undefined)?.$neardupRequest ?? 'a request';
      log?.(`s3: ${what} failed (${failureOf(failed)}), retry ${attempt} of ${most - 1} in ${Math.round(wait)} ms`);
      return token(attempt, wait);
    },
    recordSuccess: () => {},
  };
}

/** True for a failure to resolve the endpoint's host name because it does not exist (`ENOTFOUND`). */
export function hostNotFound(e: unknown): boolean {
  return (e as NodeJS.ErrnoException | undefined)?.code === 'ENOTFOUND';
}

/** The HTTP status of an SDK error, if it has one. */
export function statusOf(e: unknown): number | undefined {
  return (e as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

/**
 * Whether a failure is worth running the request again here: a 404 when asked, or a body cut short
 * after the response began (which the SDK's loop, done by then, does not retry). A request's own
 * failures (5xx, 429, connections refused or dropped before the response) were retried by the SDK.
 */
function retryable(e: unknown, notFoundToo: boolean): boolean {
  const status = statusOf(e);
  if (status !== undefined) return notFoundToo && status === 404;
  if ((e as { $metadata?: { attempts?: number } })?.$metadata?.attempts !== undefined) return false;
  const code = (e as NodeJS.ErrnoException)?.code ?? (e as Error)?.name;
  return typeof code === 'string'
    && /ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|socket hang up|TimeoutError|NetworkingError/i.test(code + ((e as Error)?.message ?? ''));
}

/** What {@link retrying} runs again, and how its `-v` line names it. */
export interface RetriedRequest {
  url: string;
  /** The verb of the `-v` line (`GET`). */
  what: string;
  /** Retry a 404 too: a key just listed or written. */
  notFoundToo: boolean;
}

/**
 * Runs `run` (one request and the reading of its body) and runs it again on a body cut short, or a
 * 404 with `notFoundToo`; a final failure goes through `final` (the error that names the object).
 */
export async function retrying<T>(req: RetriedRequest, run: () => Promise<T>, final: (e: unknown) => Error): Promise<T> {
  const most = attempts();
  for (let attempt = 1;; attempt++) {
    try {
      return await run();
    } catch (e) {
      if (attempt >= most || !retryable(e, req.notFoundToo)) throw final(e);
      const wait = backoff(attempt);
      s3Requests.retries++;
      log?.(`s3: ${req.what} ${req.url} failed (${failureOf(e)}), retry ${attempt} of ${most - 1} in ${Math.round(wait)} ms`);
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}
