/**
 * The file store (`file:DIR`) filled to N generated ~1.4 KB documents (bench/gen.ts), with the
 * text kept in each record's metadata as `neardup index add` keeps it. At each decade (10k, 100k,
 * 1M, 10M up to N) it prints: adds/s over the decade (addMany batches of 1,000, two in flight; the
 * texts generated ahead, in chunks of 50,000, outside the clock) and
 * the share of that time spent in the store's put; query p50/p99 in process (300 near duplicates
 * of indexed documents, their texts made before the clock, one at a time, whole query: shingling,
 * signature, lookup, verification);
 * process CPU µs per add (less sensitive than wall time to other processes); the longest batch
 * (from its addMany call to its answer: a stall of the store shows here, not in the mean); the LSH candidates an add met,
 * those whose records it read (the others' screens rejected them unread) and those it verified, per add over the decade
 * (the reads and re-shingling are what grows with N); bytes per document on disk (records file: text against the rest; log); the process's RSS; and
 * the checkpoints taken during the decade (how many, and the seconds spent writing their files, inside
 * writes, and committing them, outside); the time to close the store (it writes the table's checkpoint), the checkpoint's bytes per document
 * and the time to open it again. Modes: `exact` (sets in the records), `text` (setSource 'text':
 * sets recomputed from the stored text), `estimate16`.
 * Usage: node dist/bench/file-store.js [N=1000000] [exact|text|estimate16]; STORE=sqlite compares the
 * SQLite store; WORKERS=N prepare workers (default 0); KEEP=1 keeps the store; REOPEN=DIR (FILLED=N: the fill's documents) only opens
 * a kept store and runs 7 rounds of 300 queries, then (ADD=N, START=S) N adds from document S; with CRASH=1
 * the checkpoint from before those adds is put back after them, as a kill -9 at their end would leave it, and a
 * new process opens the store (a restart after a crash: it folds the adds' log frames on top of that checkpoint).
 */
import { mkdtempSync, rmSync, statSync, existsSync, linkSync, renameSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NearDupIndex, type NearDupIndexOptions } from '../src/index.js';
import { openStore } from '../src/store/open/open.js';
import type { NearDupStore } from '../src/store/types.js';
import { readRecordMeta } from '../src/online/records/record.js';
import { CorpusGenerator, storeDocument } from './gen.js';
import { percentile } from './online-corpus.js';
import { pageFaultProbe } from './util.js';

const N = Number(process.argv[2] ?? 1_000_000);
const MODE = process.argv[3] ?? 'exact';
const KIND = process.env.STORE ?? 'file';
const WORKERS = Number(process.env.WORKERS ?? 0);
const B = 1000;
const gen = new CorpusGenerator(11);
const dir = mkdtempSync(path.join(process.env.BENCH_DIR ?? tmpdir(), 'nd-filestore-'));
const spec = KIND === 'sqlite' ? `sqlite:${path.join(dir, 'index.db')}` : `file:${path.join(dir, 'index')}`;
const opts: NearDupIndexOptions = {
  workers: WORKERS,
  ...(MODE === 'estimate16' ? { verify: 'estimate', signatureBits: 16 } : MODE === 'text' ? { setSource: 'text' } : {}),
};

/** Document i: every tenth an edited copy of an earlier one, as a dedup corpus has. */
const text = (i: number): string => storeDocument(gen, i);

/** Documents generated ahead of each timed run of adds. */
const CHUNK = 50_000;

/** Documents `from` … `from + n - 1` in batches of {@link B}, each text generated once (text and meta share it). */
function chunkOf(from: number, n: number): { id: string; text: string; meta: { text: string } }[][] {
  const out = [];
  for (let b = from; b < from + n; b += B) {
    out.push(
      Array.from({ length: Math.min(B, from + n - b) }, (_, j) => {
        const t = text(b + j);
        return { id: `d${b + j}`, text: t, meta: { text: t } };
      }),
    );
  }
  return out;
}

/** The store, with the time spent in its put counted. */
async function timedStore(): Promise<{ store: NearDupStore; putMs: () => number }> {
  const store = await openStore(spec);
  let ms = 0;
  const put = store.put.bind(store);
  store.put = async (e) => {
    const t = performance.now();
    await put(e);
    ms += performance.now() - t;
  };
  return { store, putMs: () => ms };
}

const size = (f: string) => (existsSync(f) ? statSync(f).size : 0);

function diskBytes(): { records: number; log: number } {
  if (KIND === 'sqlite') return { records: size(path.join(dir, 'index.db')) + size(path.join(dir, 'index.db-wal')), log: 0 };
  return { records: size(path.join(dir, 'index', 'records')), log: size(path.join(dir, 'index', 'log')) };
}

/** Mean bytes of a record's text (the metadata's JSON) and of the rest, over a sample of 2,000. */
async function recordParts(idx: NearDupIndex, n: number): Promise<{ text: number; rest: number }> {
  const ids = Array.from({ length: 2000 }, (_, j) => `d${Math.floor((j * n) / 2000)}`);
  const recs = await idx.store.get(ids);
  let t = 0;
  let all = 0;
  for (const r of recs) {
    all += r!.length;
    t += Buffer.byteLength(JSON.stringify(readRecordMeta(r!)));
  }
  return { text: t / recs.length, rest: (all - t) / recs.length };
}

async function queries(idx: NearDupIndex, n: number): Promise<{ p50: number; p99: number; found: number }> {
  const lat: number[] = [];
  let found = 0;
  // The texts are made before the clock, as the adds' are: the generator's garbage filled the young
  // generation between queries, and the scavenge it called for fell inside a query (0.5–1.6 ms each).
  const texts = Array.from({ length: 300 }, (_, q) => {
    const i = Math.floor(((q * 7919) % 300) * (n / 300));
    return gen.render(gen.edit(gen.original(i - (i % 10 === 9 ? 5 : 0)), 0.03, 1e9 + q), i);
  });
  for (const t of texts) {
    const t0 = performance.now();
    const m = await idx.query(t);
    lat.push(performance.now() - t0);
    if (m.length) found++;
  }
  lat.sort((a, b) => a - b);
  return { p50: percentile(lat, 50), p99: percentile(lat, 99), found };
}

/** The index's counts of candidates met, screened out unread and verified so far (since it was opened). */
async function candidateCounts(idx: NearDupIndex): Promise<{ candidates: number; screened: number; verified: number }> {
  const st = await idx.stats();
  const { candidates, verified } = st.counters;
  return { candidates, screened: Number(st.storeStats.candidatesScreenedOut ?? 0), verified };
}

type Counts = Awaited<ReturnType<typeof candidateCounts>>;

/** Candidates, those read (not screened out) and verified matches per add between two counts over `adds` adds: `1.63 / 0.04 (0.001)`. */
function perAdd(before: Counts, after: Counts, adds: number): string {
  const per = (k: keyof Counts, d: number) => ((after[k] - before[k]) / adds).toFixed(d);
  const read = ((after.candidates - after.screened - before.candidates + before.screened) / adds).toFixed(2);
  return `${per('candidates', 2)} / ${read} (${per('verified', 3)})`;
}

/** A file store's checkpoints since open, and the seconds their files' writes and commits took (the SQLite store has none). */
function ckCell(st: Record<string, number | string>): string {
  if (st.checkpointsSinceOpen === undefined) return '—';
  return `${st.checkpointsSinceOpen}, ${(Number(st.checkpointWriteMs) / 1000).toFixed(1)} / ${(Number(st.checkpointCommitMs) / 1000).toFixed(1)}`;
}

/** Adds the batches of `chunk`, two in flight: wall ms, CPU µs, and the longest batch's ms (from its call to its answer). */
async function addChunk(idx: NearDupIndex, chunk: ReturnType<typeof chunkOf>): Promise<{ ms: number; cpuUs: number; longest: number }> {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let longest = 0;
  let pending: Promise<unknown> = Promise.resolve();
  for (const batch of chunk) {
    const called = performance.now();
    const cur = idx.addMany(batch).then(() => {
      longest = Math.max(longest, performance.now() - called);
    });
    await pending;
    pending = cur;
  }
  await pending;
  const cpu = process.cpuUsage(cpu0);
  return { ms: performance.now() - t0, cpuUs: cpu.user + cpu.system, longest };
}

if (process.env.REOPEN) {
  // A store kept by an earlier run (KEEP=1): open it, then 2,000 queries.
  const t0 = performance.now();
  const idx = await NearDupIndex.open({ store: `file:${process.env.REOPEN}` });
  const openS = (performance.now() - t0) / 1000;
  // FILLED: how many of its documents the fill made (later runs may have added others): queries are edits of those.
  const size = await idx.size();
  const n = Math.min(size, Number(process.env.FILLED ?? Infinity));
  const runs = [];
  for (let r = 0; r < 7; r++) runs.push(await queries(idx, n));
  const st = (await idx.stats()).storeStats as Record<string, number>;
  console.log(
    `reopened ${size} documents in ${openS.toFixed(2)} s (frames folded after the checkpoint: ${st.framesFoldedAtOpen}); RSS ${
      (process.memoryUsage().rss / 2 ** 20).toFixed(0)
    } MB; ${pageFaultProbe()}`,
  );
  console.log(`query p50 / p99 ms, 7 rounds of 300: ${runs.map((q) => `${q.p50.toFixed(2)} / ${q.p99.toFixed(2)} (${q.found}/300 found)`).join(', ')}`);
  // ADD=N: then N more documents, from document START (default 10^9: new ids), made before the clock.
  const add = Number(process.env.ADD ?? 0);
  // CRASH=1: the checkpoint in place before the adds is put back after them, as a kill -9 at their end leaves it.
  const crashed = process.env.CRASH === '1' && add > 0;
  const table = path.join(process.env.REOPEN, 'table');
  const before = `${table}.before-adds`;
  // A run cut short before it put the checkpoint back leaves its link: the table in place is the store's own.
  if (crashed && existsSync(before)) rmSync(before);
  if (crashed) linkSync(table, before);
  if (add > 0) {
    const chunk = chunkOf(Number(process.env.START ?? 1e9), add);
    const c0 = await candidateCounts(idx);
    const t = await addChunk(idx, chunk);
    const c = await candidateCounts(idx);
    console.log(
      `${add} adds: ${Math.round((add / t.ms) * 1000)} adds/s, CPU ${Math.round(t.cpuUs / add)} µs/add, longest batch ${
        t.longest.toFixed(0)
      } ms, candidates / read (verified) per add ${perAdd(c0, c, add)}`,
    );
  }
  await idx.close();
  if (crashed) {
    // Checkpoints are renamed into place, so the link still names the one from before the adds.
    renameSync(before, table);
    console.log('the checkpoint from before the adds put back; a new process opens the store:');
    const env = { ...process.env, ADD: '0', CRASH: '' };
    const r = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!], { env, stdio: 'inherit' });
    process.exit(r.status ?? 1);
  }
  process.exit(0);
}

console.log(`file-store bench: ${KIND} store (${spec}), N = ${N}, ${MODE}, prepare workers ${WORKERS}, batches of ${B}; ${pageFaultProbe()}`);
console.log(
  '| docs | adds/s over the decade | CPU µs/add | longest batch ms | candidates / read (verified) per add | store put share | query p50 / p99 ms (found) | records B/doc: text + rest | log B/doc | RSS MB | checkpoints: n, write / commit s | close s | table B/doc | open s |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
let { store, putMs } = await timedStore();
let idx = await NearDupIndex.open({ ...opts, store });
let done = 0;
for (let decade = Math.min(10_000, N); done < N; decade = Math.min(decade * 10, N)) {
  // Wall and CPU time of the adds only: the texts of each chunk are generated before its clock
  // starts (the generator costs ~30–35 µs a document, a third of an add). CPU time as well as wall
  // time: on a shared machine the wall time is mostly the neighbours'.
  let ms = 0;
  let cpuUs = 0;
  let longest = 0;
  const put0 = putMs();
  const from = done;
  const cands0 = await candidateCounts(idx);
  while (done < decade) {
    const chunk = chunkOf(done, Math.min(CHUNK, decade - done));
    const t = await addChunk(idx, chunk);
    ms += t.ms;
    cpuUs += t.cpuUs;
    longest = Math.max(longest, t.longest);
    done += chunk.reduce((n, b) => n + b.length, 0);
  }
  cpuUs /= done - from;
  const cands = perAdd(cands0, await candidateCounts(idx), done - from);
  const share = (putMs() - put0) / ms;
  // The store was opened at the decade's start: its checkpoints since then.
  const ck = (await idx.stats()).storeStats;
  const q = await queries(idx, done);
  const parts = await recordParts(idx, done);
  const disk = diskBytes();
  const rss = process.memoryUsage().rss / 2 ** 20;
  const c0 = performance.now();
  // Close writes the table's checkpoint.
  await idx.close();
  const closeS = (performance.now() - c0) / 1000;
  const o0 = performance.now();
  ({ store, putMs } = await timedStore());
  idx = await NearDupIndex.open({ ...opts, store });
  const openS = (performance.now() - o0) / 1000;
  const restB = disk.records / done - parts.text;
  console.log(
    `| ${done.toLocaleString('en')} | ${(((done - from) / ms) * 1000).toFixed(0)} | ${cpuUs.toFixed(0)} | ${longest.toFixed(0)} | ${cands} | ${
      (share * 100).toFixed(0)
    } % | ${q.p50.toFixed(2)} / ${q.p99.toFixed(2)} (${q.found}/300) | ${parts.text.toFixed(0)} + ${restB.toFixed(0)} (record rest ${
      parts.rest.toFixed(0)
    }) | ${(disk.log / done).toFixed(0)} | ${rss.toFixed(0)} | ${ckCell(ck)} | ${closeS.toFixed(2)} | ${
      (size(path.join(dir, 'index', 'table')) / done).toFixed(0)
    } | ${openS.toFixed(2)} |`,
  );
}
await idx.close();
if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
else console.log(`kept ${dir}`);
