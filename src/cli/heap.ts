/**
 * What this process's heap may hold, for choosing the in-memory or streamed route and for stopping
 * with a message before V8 aborts. V8's `heap_size_limit` counts the young generation (three
 * semi-spaces: 48 MiB on 64-bit Node 20, whatever `--max-old-space-size` says), which holds only
 * short-lived objects: at a small heap it is most of that figure (`--max-old-space-size=24` gives
 * 75 MB), and texts sized against it would take the in-memory route and abort V8.
 * @module
 */
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { UsageError } from '../common/errors.js';

/** V8's default young generation on 64-bit Node 20: 3 semi-spaces of 16 MiB. */
const YOUNG_GENERATION = 48 * 2 ** 20;

/** The `--max-old-space-size` this process runs with (NODE_OPTIONS, then its argv: the later wins), in bytes. */
function oldSpaceFlag(): number | undefined {
  let mib: number | undefined;
  for (const a of [...(process.env.NODE_OPTIONS ?? '').split(/\s+/), ...process.execArgv]) {
    const m = /^--max[-_]old[-_]space[-_]size=(\d+)$/.exec(a);
    if (m) mib = Number(m[1]);
  }
  return mib === undefined ? undefined : mib * 2 ** 20;
}

/**
 * What the old generation may hold, in bytes: `--max-old-space-size` when given, else the heap
 * limit less the default young generation (never below an eighth of the limit). A young generation
 * other than the default only moves the estimate of a large default heap a little.
 */
export function heapLimit(): number {
  const limit = getHeapStatistics().heap_size_limit;
  const flag = oldSpaceFlag();
  return flag !== undefined ? Math.min(flag, limit) : Math.max(limit - YOUNG_GENERATION, limit / 8);
}

/** Bytes the heap holds outside the young generation (garbage not yet collected included). */
export function heapUsed(): number {
  let used = 0;
  for (const s of getHeapSpaceStatistics()) if (!s.space_name.startsWith('new_')) used += s.space_used_size;
  return used;
}

/** What the heap has left now: {@link heapLimit} less {@link heapUsed} (the program itself holds ~6 MB). */
export function heapRoom(): number {
  return Math.max(0, heapLimit() - heapUsed());
}

/** A reader's chunk: decoded, then split into records, it takes twice its size on the heap. */
const READ_CHUNK = 4 * 2 ** 20;

/**
 * The largest input (bytes of its file) a run may hold in memory: ~2.5× its size on the heap
 * (docs/operations.md), beside a reader's chunk (the whole file when smaller) twice over.
 */
export function inMemoryMost(): number {
  const room = heapRoom();
  return room >= 4.5 * READ_CHUNK ? (room - 2 * READ_CHUNK) / 2.5 : room / 4.5;
}

/**
 * Whether `dedup` streams an input of `size` bytes by default: past a quarter of what the heap has
 * left (a margin for what its texts cost beyond their bytes), or past {@link inMemoryMost}.
 */
export function streamsByDefault(size: number): boolean {
  return size > Math.min(heapRoom() / 4, inMemoryMost());
}

/**
 * The smallest heap a streamed run is made for: a pass holds a read chunk decoded and split into
 * lines (twice {@link READ_CHUNK}) beside the ~6 MB the program holds (`--max-old-space-size=16`).
 */
export const STREAM_MIN_HEAP = 16 * 2 ** 20;

/** In MiB, the unit of --max-old-space-size. */
const mib = (b: number): string => `${Math.round(b / 2 ** 20)} MiB`;

/** Refuses (exit 2) a streamed run in a heap smaller than {@link STREAM_MIN_HEAP}, before V8 would abort. */
export function checkStreamHeap(name: string): void {
  const limit = heapLimit();
  if (limit >= STREAM_MIN_HEAP) return;
  throw new UsageError(
    `${name} is streamed (texts stay on disk), which needs a heap of at least ${mib(STREAM_MIN_HEAP)}; this process may hold about ${
      mib(limit)
    }: raise the limit (NODE_OPTIONS=--max-old-space-size=${STREAM_MIN_HEAP / 2 ** 20} or more)`,
  );
}

/**
 * Throws a usage error (exit 2) when what the heap holds, plus `reserve` bytes the run will still
 * need, passes `fraction` of {@link heapLimit}: `what` says how far the run got (`12,288 documents
 * (6 MB of a.jsonl)`), `advice` what to do.
 */
export function checkHeap(fraction: number, what: () => string, advice: string, reserve = 0): void {
  const limit = heapLimit();
  if (heapUsed() + reserve <= fraction * limit) return;
  throw new UsageError(`out of memory after ${what()}: this process's heap may hold about ${mib(limit)}; ${advice}`);
}
