/**
 * Compaction of the log layout's posting log (`neardup index compact`): the log is rewritten as one
 * put entry per 1,000 live documents, and one Lua script swaps the rewrite in, carrying over the
 * entries other processes appended meanwhile and recording the renumbering in `P:compacted`, so
 * processes that had folded the rewritten part carry on where they were.
 * @module
 */
import type { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { encodeLogEntry, type LogDoc } from '../log/entry.js';
import type { RedisKeys } from './shared.js';

/**
 * The atomic end of a compaction. KEYS: log, the rewritten list, layout, compacted. ARGV: L (entries
 * rewritten), the token the rewrite was made under, the new token, c (entries of the rewrite).
 * Appends the entries pushed since (positions ≥ L) to the rewrite, swaps it in, records the
 * renumbering and returns how many entries it carried over (−1: the store changed identity).
 */
const COMPACT_LUA = `
if redis.call('GET', KEYS[3]) ~= ARGV[2] then return -1 end
local L = tonumber(ARGV[1])
local tail = redis.call('LRANGE', KEYS[1], L, -1)
for i = 1, #tail, 1000 do redis.call('RPUSH', KEYS[2], unpack(tail, i, math.min(#tail, i + 999))) end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('RENAME', KEYS[2], KEYS[1]) else redis.call('DEL', KEYS[1]) end
redis.call('SET', KEYS[3], ARGV[3])
redis.call('SET', KEYS[4], cjson.encode({ from = ARGV[2], to = ARGV[3], rewritten = L, entries = tonumber(ARGV[4]) }))
return #tail`;

/** The record of a compaction: log token `from` became `to`; entries [0, rewritten) became [0, entries). */
export interface CompactionRecord {
  from: string;
  to: string;
  rewritten: number;
  entries: number;
}

/** The record of the last compaction (`P:compacted`), or null (absent or unreadable: fold all). */
export function parseCompacted(raw: string | null): CompactionRecord | null {
  if (!raw) return null;
  try {
    const o = JSON.parse(raw) as { from: unknown; to: unknown; rewritten: unknown; entries: unknown };
    if (typeof o.from === 'string' && typeof o.to === 'string' && typeof o.rewritten === 'number' && typeof o.entries === 'number') {
      return { from: o.from, to: o.to, rewritten: o.rewritten, entries: o.entries };
    }
  } catch {
    // fall through: an unreadable record means a full fold
  }
  return null;
}

/** Total bytes of the first `n` entries of a list (read in chunks). */
async function logBytes(r: Redis, key: string, n: number): Promise<number> {
  let total = 0;
  for (let i = 0; i < n; i += 64) for (const b of await r.lrangeBuffer(key, i, Math.min(n, i + 64) - 1)) total += b.length;
  return total;
}

/** What {@link rewriteLog} did. */
export interface Rewrite {
  /** The layout token now in force. */
  token: string;
  /** Entries of the rewritten part. */
  entries: number;
  /** Entries appended by others during the rewrite, carried over after it. */
  tail: number;
  documents: number;
  bytesBefore: number;
  bytesAfter: number;
}

/**
 * Rewrites the first `at.L` log entries, made under layout token `at.oldToken`, from `live` (the folded
 * table's documents and their keys), dropping documents whose record is missing (leftovers of writes that died).
 */
export async function rewriteLog(r: Redis, keys: RedisKeys, live: Iterable<LogDoc>, at: { L: number; oldToken: string }): Promise<Rewrite> {
  const { L, oldToken } = at;
  const bytesBefore = await logBytes(r, keys.log, L);
  const tmp = `${keys.log}:compacting`;
  await r.del(tmp);
  let batch: LogDoc[] = [];
  let entries = 0;
  let documents = 0;
  let bytesAfter = 0;
  const flush = async () => {
    if (!batch.length) return;
    const ids = batch.map((d) => d.id);
    const exists = await Promise.all(ids.map((id) => r.exists(keys.doc(id))));
    const kept = batch.filter((_, i) => exists[i] === 1);
    batch = [];
    if (!kept.length) return;
    const e = encodeLogEntry('put', kept);
    await r.rpush(tmp, e);
    entries++;
    documents += kept.length;
    bytesAfter += e.length;
  };
  for (const d of live) {
    batch.push(d);
    if (batch.length === 1000) await flush();
  }
  await flush();
  const token = `log ${randomBytes(8).toString('hex')}`;
  const tail = (await r.eval(COMPACT_LUA, 4, keys.log, tmp, keys.layout, keys.compacted, String(L), oldToken, token, String(entries))) as number;
  if (tail < 0) throw new Error(`the Redis store at prefix "${keys.prefix}" changed identity during compaction; nothing was rewritten`);
  return { token, entries, tail, documents, bytesBefore, bytesAfter };
}
