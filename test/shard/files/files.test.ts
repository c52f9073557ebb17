/**
 * The building blocks of sharded jobs: column files (round trip, ranges, rejection of truncated,
 * foreign or other-version files) and task commits (a killed task's temp directory is never read,
 * a rerun is idempotent, later stages refuse a task without its marker).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';
import path from 'node:path';
import fc from 'fast-check';
import { ColumnFile, writeColumns } from '../../../src/shard/files/columns.js';
import { commitTask, failedFile, readFailed, readMarker, requireMarker, taskDir, tempDirs } from '../../../src/shard/files/commit.js';
import { tasksOfMember, arrayIndexFromEnv } from '../../../src/shard/stages/registry.js';
import { outputNames } from '../../../src/shard/files/layout.js';
import { groupBy, U32Buf } from '../../../src/shard/files/u32buf.js';
import { Reusable } from '../../../src/shard/stages/reuse.js';
import { docsCache, jobDocs } from '../../../src/shard/files/docs.js';
import { PieceReader } from '../../../src/shard/files/verified.js';
import { DamagedFileError } from '../../../src/shard/files/columns.js';
import { loadJob } from '../../../src/shard/files/job.js';
import { numbering } from '../../../src/shard/files/shardInput.js';
import { partitionOf } from '../../../src/shard/files/signRows.js';
import { neardup, tmpDir } from '../../cliUtil.js';

const PLAN = 'aaaaaaaaaaaa';
const JOB = { id: PLAN };

describe('column files', () => {
  it('round-trip every column type, whole and by row range (property)', async () => {
    const dir = tmpDir();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat({ max: 0xffffffff }), { maxLength: 50 }),
        fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { maxLength: 50 }),
        fc.array(fc.double({ noNaN: true }), { maxLength: 50 }),
        fc.array(fc.string({ unit: 'grapheme' }), { maxLength: 20 }),
        fc.array(fc.array(fc.nat({ max: 0xffffffff }), { maxLength: 9 }), { maxLength: 6 }),
        async (u, i, f, s, parts) => {
          const file = path.join(dir, 'x.bin');
          // A u32 column may be given as pieces (views into bigger arrays, some empty): read back joined.
          const pieces = parts.map((p) => new Uint32Array([7, ...p, 7]).subarray(1, p.length + 1));
          await writeColumns(file, { kind: 'test', plan: PLAN, meta: { n: 1 } }, {
            u: Uint32Array.from(u),
            i: Int32Array.from(i),
            f: Float64Array.from(f),
            s,
            parted: { u32Parts: pieces },
          });
          const c = ColumnFile.open(file, 'test', PLAN);
          try {
            assert.deepEqual([...c.u32('parted')], parts.flat());
            assert.deepEqual([...c.u32('u')], u);
            assert.deepEqual([...c.i32('i')], i);
            assert.deepEqual([...c.f64('f')], f);
            assert.deepEqual(c.strings('s').all(), s);
            if (s.length > 0) assert.equal(c.strings('s').get(s.length - 1), s.at(-1));
            if (u.length > 2) assert.deepEqual([...c.u32('u', 1, u.length - 1)], u.slice(1, -1));
            if (s.length > 1) assert.deepEqual(c.strings('s').range(1, s.length), s.slice(1));
            if (s.length > 1) {
              // Undecoded rows: each string's UTF-8 bytes at its offsets.
              const { bytes, offs } = c.strings('s').raw(1, s.length);
              assert.equal(offs.length, s.length);
              for (let k = 1; k < s.length; k++) assert.deepEqual(bytes.subarray(offs[k - 1]!, offs[k]!), Buffer.from(s[k]!));
            }
            assert.deepEqual(c.meta, { n: 1 });
          } finally {
            c.close();
          }
        },
      ),
      { numRuns: 60 },
    );
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('u32Into reads any row range into a view equal to u32 of it, across block edges (property)', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'x.bin');
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 3000 }),
        fc.constantFrom(64, 128, 4096),
        fc.nat(),
        fc.nat(),
        fc.nat({ max: 5 }),
        async (n, block, x, y, pad) => {
          const u = Uint32Array.from({ length: n }, (_, i) => Math.imul(i + 1, 2654435761) >>> 0);
          await writeColumns(file, { kind: 'test', plan: PLAN, meta: {} }, { pre: new Uint32Array(pad), u }, { block });
          const a = n === 0 ? 0 : x % (n + 1);
          const b = a + (n - a === 0 ? 0 : y % (n - a + 1));
          const c = ColumnFile.open(file, 'test', PLAN);
          try {
            const out = new Uint32Array(b - a + 2).fill(9);
            c.u32Into('u', a, b, out.subarray(1));
            assert.deepEqual(out.subarray(1, b - a + 1), c.u32('u', a, b));
            assert.equal(out[0], 9);
            assert.equal(out[b - a + 1], 9);
            assert.throws(() => c.u32Into('u', a, n + 1, new Uint32Array(n + 1)), /damaged \(rows/);
          } finally {
            c.close();
          }
        },
      ),
      { numRuns: 80 },
    );
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reject truncated, foreign, other-kind, other-plan and other-version files', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'x.bin');
    await writeColumns(file, { kind: 'band-keys', plan: PLAN, meta: {} }, { a: new Uint32Array(100) });
    assert.throws(() => ColumnFile.open(file, 'sets', PLAN), /holds band-keys, expected sets/);
    assert.throws(() => ColumnFile.open(file, 'band-keys', 'bbbbbbbbbbbb'), /belongs to job aaaaaaaaaaaa, not to this directory's job bbbbbbbbbbbb/);
    const full = fs.readFileSync(file);
    fs.writeFileSync(file, full.subarray(0, full.length - 4));
    assert.throws(() => ColumnFile.open(file, 'band-keys', PLAN), /truncated or damaged/);
    const v2 = Buffer.from(full);
    v2.writeUInt32LE(1, 4);
    fs.writeFileSync(file, v2);
    assert.throws(() => ColumnFile.open(file, 'band-keys', PLAN), /version 1/);
    fs.writeFileSync(file, 'hello world, not a column file');
    assert.throws(() => ColumnFile.open(file, 'band-keys', PLAN), /not a neardup intermediate file/);
    fs.writeFileSync(file, full.subarray(0, 9));
    assert.throws(() => ColumnFile.open(file, 'band-keys', PLAN), /truncated \(9 bytes\)/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('any flipped byte or cut anywhere in a file is an error naming it, never other values (property)', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'x.bin');
    // Several blocks of data, strings and fixed columns, so flips land in header, data and checksums.
    const u = Uint32Array.from({ length: 20000 }, (_, i) => (i * 2654435761) >>> 0);
    const ids = Array.from({ length: 3000 }, (_, i) => `id-${i}`);
    await writeColumns(file, { kind: 'sets', plan: PLAN, meta: { shard: 1 } }, { u, ids, f: Float64Array.from({ length: 500 }, (_, i) => i / 7) });
    const full = fs.readFileSync(file);
    const readAll = (): void => {
      const c = ColumnFile.open(file, 'sets', PLAN);
      try {
        assert.deepEqual(c.u32('u', 5, 19000), u.subarray(5, 19000));
        const into = new Uint32Array(18995);
        c.u32Into('u', 5, 19000, into);
        assert.deepEqual(into, u.subarray(5, 19000));
        assert.deepEqual(c.strings('ids').all(), ids);
        c.f64('f');
      } finally {
        c.close();
      }
    };
    readAll();
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: full.length - 1 }), fc.integer({ min: 1, max: 255 }), fc.boolean(), async (at, xor, cut) => {
        const bad = cut ? full.subarray(0, at) : Buffer.from(full);
        if (!cut) bad[at] = bad[at]! ^ xor;
        fs.writeFileSync(file, bad);
        assert.throws(readAll, (e: Error) => e.message.startsWith(file) && !(e instanceof assert.AssertionError));
      }),
      { numRuns: 300 },
    );
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('task commits', () => {
  it('a task that dies leaves only a temp directory, never read; a rerun commits; a third run is a no-op', async () => {
    const work = tmpDir();
    await assert.rejects(
      commitTask({ workDir: work, job: JOB, stage: 'sign', task: 3 }, async (d) => {
        fs.writeFileSync(path.join(d, 'keys.bin'), 'partial');
        throw new Error('killed');
      }),
      /killed/,
    );
    assert.equal(readMarker(work, JOB, 'sign', 3), undefined);
    assert.throws(() => requireMarker(work, JOB, 'sign', 3), /sign task 3 has not completed/);
    // The failed attempt left a record of its error, for job status.
    assert.equal(readFailed(work, 'sign', 3)?.error, 'killed');
    // A SIGKILLed task cannot clean up: simulate its leftover.
    const leftover = path.join(work, 'sign', '.00003.tmp-99999-dead');
    fs.mkdirSync(leftover);
    fs.writeFileSync(path.join(leftover, 'keys.bin'), 'partial');
    fs.writeFileSync(path.join(leftover, '_SUCCESS.json'), '{"docs": 1}');
    assert.equal(readMarker(work, JOB, 'sign', 3), undefined, 'a temp directory is never complete, even with a marker inside');
    let runs = 0;
    const m = await commitTask({ workDir: work, job: JOB, stage: 'sign', task: 3 }, async (d) => {
      runs++;
      fs.writeFileSync(path.join(d, 'keys.bin'), 'full');
      return { docs: 7 };
    });
    const { stats, ...rest } = m;
    assert.deepEqual(rest, { docs: 7, plan: PLAN, files: { 'keys.bin': { bytes: 4 } } });
    // What the task cost, in the marker (#36): values vary, the fields do not.
    assert.equal(stats?.bytesWritten, 4);
    assert.ok(stats.wallMs >= 0 && stats.cpuMs >= 0 && stats.peakRss > 0 && stats.endedAt >= stats.startedAt);
    assert.equal(stats.pid, process.pid);
    // A peak reached without awaiting (where the sampler cannot run) is still the task's peak.
    const big = 512 * 2 ** 20;
    const rssBefore = process.memoryUsage.rss();
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const peak = await commitTask({ workDir: work, job: JOB, stage: 'sign', task: 5 }, (d) => {
      Buffer.alloc(big, 1);
      gc(); // gone again before the task ends: only the high-water mark still knows
      fs.writeFileSync(path.join(d, 'keys.bin'), 'x');
      return Promise.resolve({});
    });
    assert.ok(peak.stats!.peakRss >= rssBefore + big * 0.9, `peak ${peak.stats!.peakRss} after ${rssBefore}`);
    // The failed first attempt's record went when the task committed.
    assert.equal(fs.existsSync(failedFile(work, 'sign', 3)), false);
    // Another job's marker in this directory is refused, never taken as done or not done.
    assert.throws(() => readMarker(work, { id: 'bbbbbbbbbbbb' }, 'sign', 3), /belongs to job aaaaaaaaaaaa/);
    const mf = path.join(taskDir(work, 'sign', 3), '_SUCCESS.json');
    const good = fs.readFileSync(mf);
    fs.writeFileSync(mf, good.subarray(0, 10));
    assert.throws(() => readMarker(work, JOB, 'sign', 3), /damaged task marker/);
    fs.writeFileSync(mf, good);
    assert.equal(fs.readFileSync(path.join(taskDir(work, 'sign', 3), 'keys.bin'), 'utf8'), 'full');
    const again = await commitTask({ workDir: work, job: JOB, stage: 'sign', task: 3 }, async () => {
      runs++;
      return { docs: 0 };
    });
    assert.deepEqual(again, m);
    assert.equal(runs, 1);
    assert.deepEqual(await tempDirs(work), [leftover]);
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('two runs of one task at once: the first commit wins, the second is discarded', async () => {
    const work = tmpDir();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = commitTask({ workDir: work, job: JOB, stage: 'join', task: 0 }, async (d) => {
      await gate;
      fs.writeFileSync(path.join(d, 'pairs.bin'), 'slow');
      return { who: 'slow' };
    });
    const fast = await commitTask({ workDir: work, job: JOB, stage: 'join', task: 0 }, async (d) => {
      fs.writeFileSync(path.join(d, 'pairs.bin'), 'fast');
      return { who: 'fast' };
    });
    release();
    assert.equal(fast.who, 'fast');
    assert.equal((await slow).who, 'fast');
    assert.equal(fs.readFileSync(path.join(taskDir(work, 'join', 0), 'pairs.bin'), 'utf8'), 'fast');
    assert.deepEqual(await tempDirs(work), []);
    fs.rmSync(work, { recursive: true, force: true });
  });
});

describe('array jobs and plans', () => {
  it('members of an array cover every task exactly once (property)', () => {
    fc.assert(
      fc.property(fc.nat({ max: 200 }), fc.integer({ min: 1, max: 40 }), (total, members) => {
        const seen = new Array<number>(total).fill(0);
        for (let i = 0; i < members; i++) for (const t of tasksOfMember(total, i, members)) seen[t]!++;
        assert.ok(seen.every((c) => c === 1));
      }),
    );
  });

  it('reads the index from Slurm, Kubernetes and AWS Batch', () => {
    assert.deepEqual(arrayIndexFromEnv({ SLURM_ARRAY_TASK_ID: '12', SLURM_ARRAY_TASK_MIN: '10', SLURM_ARRAY_TASK_COUNT: '4' }), { index: 2, members: 4 });
    assert.deepEqual(arrayIndexFromEnv({ JOB_COMPLETION_INDEX: '5' }), { index: 5 });
    assert.deepEqual(arrayIndexFromEnv({ AWS_BATCH_JOB_ARRAY_INDEX: '7' }), { index: 7 });
    assert.deepEqual(arrayIndexFromEnv({}), {});
  });

  it("names output shards relative to the shards' common directory", () => {
    assert.deepEqual(outputNames(['/d/a/x.jsonl', '/d/a/y.jsonl.gz']), ['x.jsonl', 'y.jsonl.gz']);
    assert.deepEqual(outputNames(['/d/a/x.jsonl', '/d/b/x.jsonl']), ['a/x.jsonl', 'b/x.jsonl']);
  });

  it('groupBy is a stable counting sort, one group included (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 7 }), fc.array(fc.nat({ max: 6 }), { maxLength: 100 }), (groups, drawn) => {
        const g = drawn.map((x) => x % groups);
        const vals = Uint32Array.from(g.map((_, i) => i));
        const r = groupBy(Uint32Array.from(g), groups, [vals]);
        const expected = g.map((x, i) => [x, i] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map((x) => x[1]);
        assert.deepEqual([...r.columns[0]!], expected);
        for (let x = 0; x < groups; x++) assert.equal(r.start[x + 1]! - r.start[x]!, g.filter((y) => y === x).length);
      }),
    );
  });

  it('U32Buf: pushes and room() writes read back, across its growth (property)', () => {
    fc.assert(
      fc.property(fc.nat({ max: 40 }), fc.array(fc.oneof(fc.nat(), fc.array(fc.nat(), { maxLength: 700 })), { maxLength: 60 }), (cap, steps) => {
        const b = new U32Buf(cap);
        const want: number[] = [];
        for (const s of steps) {
          if (typeof s === 'number') b.push(s);
          else {
            b.room(s.length).set(s, b.length);
            b.length += s.length;
          }
          want.push(...(typeof s === 'number' ? [s] : s));
        }
        assert.deepEqual([...b.view()], want);
      }),
    );
  });
});

// What a task process keeps between tasks is borrowed, not shared: two tasks running at once (a
// worker with --concurrency 2) get a value each, and a value comes back when its task ends, also
// when it fails.
describe('Reusable', () => {
  it('gives tasks running at once a value each, and reuses a value once its task ended', async () => {
    let made = 0;
    const pool = new Reusable(() => ({ n: made++ }));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = pool.with(async (v) => {
      await held;
      return v.n;
    });
    const second = await pool.with(async (v) => v.n);
    release();
    assert.deepEqual([await first, second], [0, 1]);
    await assert.rejects(pool.with(async () => Promise.reject(new Error('task failed'))), /task failed/);
    assert.equal(await pool.with(async (v) => v.n), 0, 'values come back, and no new one is made');
    assert.equal(made, 2);
  });
});

describe('docs rows kept between tasks', () => {
  it("a process reads a shard's docs rows once, and again when its sign task wrote them again", () => {
    const dir = tmpDir();
    const shards = path.join(dir, 'shards');
    fs.mkdirSync(shards);
    for (const k of [0, 1])
      fs.writeFileSync(
        path.join(shards, `${k}.jsonl`),
        [0, 1, 2].map((i) => JSON.stringify({ id: `s${k}-${i}`, text: `text ${k} ${i} of the shard` }) + '\n').join(''),
      );
    const work = path.join(dir, 'work');
    assert.equal(neardup(['job', 'plan', shards, '--id-field', 'id', '--work-dir', work]).code, 0);
    assert.equal(neardup(['stage', 'sign', '--all', '--work-dir', work]).code, 0);
    const job = loadJob(work);
    const num = numbering(work, job);
    const read = (): { view: unknown; ids: (string | number)[] } => {
      const docs = jobDocs(work, job, num);
      try {
        const v = docs.get(1);
        return { view: v, ids: [0, 1, 2].map((d) => v.id(d)) };
      } finally {
        docs.close();
      }
    };
    const first = read();
    assert.deepEqual(first.ids, ['s1-0', 's1-1', 's1-2']);
    assert.equal(read().view, first.view, 'the second task of the process reuses the rows');
    // The sign task run again (its directory removed): a new file at the same path is read afresh.
    const signDir = path.dirname(
      fs.readdirSync(path.join(work, 'sign'), { recursive: true }).map(String).filter((f) => f.endsWith('docs.bin')).map((f) => path.join(work, 'sign', f))
        .sort().at(-1)!,
    );
    fs.rmSync(signDir, { recursive: true });
    assert.equal(neardup(['stage', 'sign', '--all', '--work-dir', work]).code, 0);
    const again = read();
    assert.notEqual(again.view, first.view);
    assert.deepEqual(again.ids, first.ids);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('docs rows kept between tasks: the limit', () => {
  it('past its byte limit the least recently used view goes, and is read afresh when asked again', () => {
    const dir = tmpDir();
    const shards = path.join(dir, 'shards');
    fs.mkdirSync(shards);
    for (const k of [0, 1, 2])
      fs.writeFileSync(
        path.join(shards, `${k}.jsonl`),
        [0, 1, 2].map((i) => JSON.stringify({ id: `s${k}-${i}`, text: `text ${k} ${i} of the shard` }) + '\n').join(''),
      );
    const work = path.join(dir, 'work');
    assert.equal(neardup(['job', 'plan', shards, '--id-field', 'id', '--work-dir', work]).code, 0);
    assert.equal(neardup(['stage', 'sign', '--all', '--work-dir', work]).code, 0);
    const job = loadJob(work);
    const num = numbering(work, job);
    const before = docsCache();
    // Each read is a task of its own (a fresh jobDocs), as the verify tasks of one process are.
    const read = (s: number): unknown => {
      const docs = jobDocs(work, job, num);
      try {
        const v = docs.get(s);
        assert.deepEqual([0, 1, 2].map((d) => v.id(d)), [0, 1, 2].map((i) => `s${s}-${i}`));
        return v;
      } finally {
        docs.close();
      }
    };
    try {
      docsCache(0);
      const v0 = read(0);
      const one = (v0 as { bytes: number }).bytes;
      assert.ok(one > 0);
      // Room for two views of these shards (all the same size), not three.
      docsCache(2 * one);
      assert.notEqual(read(0), v0, 'a view bigger than the limit was not kept');
      const a0 = read(0);
      const a1 = read(1);
      assert.equal(read(0), a0, 'kept, and now the most recently used');
      const a2 = read(2);
      assert.ok(docsCache().bytes <= 2 * one && docsCache().views === 2, JSON.stringify(docsCache()));
      assert.equal(read(0), a0);
      assert.equal(read(2), a2);
      assert.notEqual(read(1), a1, 'shard 1 was the least recently used: evicted, and read again');
      docsCache(0);
      assert.deepEqual({ views: docsCache().views, bytes: docsCache().bytes }, { views: 0, bytes: 0 }, 'a lowered limit evicts at once');
    } finally {
      docsCache(before.limit);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('reading pair lines in pieces', () => {
  it("PieceReader gives each piece's bytes across refills and pieces longer than its buffer, and refuses a short file (property)", () => {
    const dir = tmpDir();
    const file = path.join(dir, 'pairs.txt');
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 3000 }),
        fc.array(fc.nat({ max: 700 }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 300 }),
        (bytes, lengths, bufferBytes) => {
          fs.writeFileSync(file, bytes);
          const r = new PieceReader(file, bufferBytes);
          try {
            let at = 0;
            for (const n of lengths) {
              if (at + n > bytes.length) {
                assert.throws(() => r.take(n), (e: Error) => e instanceof DamagedFileError && e.message.includes('shorter than its pairs.bin says'));
                return;
              }
              assert.deepEqual(new Uint8Array(r.take(n)), bytes.subarray(at, at + n));
              at += n;
            }
          } finally {
            r.close();
          }
        },
      ),
      { numRuns: 300, seed: 36 },
    );
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('band-key partitions', () => {
  it('partitionOf is the uint32 hash modulo P, for every P (property)', () => {
    fc.assert(
      fc.property(fc.nat({ max: 255 }), fc.nat({ max: 0xffffffff }), fc.nat({ max: 0xffffffff }), fc.integer({ min: 1, max: 100000 }), (band, hi, lo, P) => {
        const h = Math.imul(hi ^ Math.imul(lo, 0x9e3779b1) ^ band, 0x85ebca6b) >>> 0;
        assert.equal(partitionOf(band, hi, lo, P), h % P);
      }),
      { numRuns: 2000, seed: 36 },
    );
  });
});
