/**
 * Keep policies (`--keep`, #34): every policy, on JSONL and TSV shards, with the dedup, annotate
 * and clusters outputs, writes the same bytes in memory, with --stream and as a sharded job: as
 * array stages (`job plan`, `stage --all`, `job report`) in two of those six cases per policy,
 * with `job dedup --local` in the other four. A clustered record whose field is
 * missing or not a number is an input error naming file, line and field, the same in one process
 * (over the shard directory) and in a job.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { neardup, tmpDir } from '../cliUtil.js';
import { cliInProcess } from '../helpers/inProcessCli.js';
import { plantedDocs } from '../helpers/shards.js';
import { writeParquet } from '../helpers/formats.js';
import { STAGES } from '../../src/shard/files/job.js';
import fc from 'fast-check';
import { chooseKept, keepValue } from '../../src/cluster/keepPolicy.js';
import { isoDateMs } from '../../src/io/read/isoDate.js';

const POLICIES = ['first', 'longest', 'shortest', 'max:score', 'min:score', 'max:day', 'min:day', 'none'];
const OUTPUTS = ['dedup', 'annotate', 'clusters'] as const;

interface Layout {
  /** The concatenation, and the shards (the second gzipped). */
  all: string;
  shards: string[];
  shardDir: string;
  read: string[];
}

/** Writes `rows` (header first for TSV) as one file and as three shards. */
function layout(dir: string, ext: 'jsonl' | 'tsv', header: string | undefined, rows: string[], read: string[]): Layout {
  fs.mkdirSync(path.join(dir, 'shards'), { recursive: true });
  const body = (xs: string[]): string => (header !== undefined ? [header, ...xs] : xs).map((l) => l + '\n').join('');
  const all = path.join(dir, `all.${ext}`);
  fs.writeFileSync(all, body(rows));
  const cut = [0, Math.floor(rows.length / 3), Math.floor((2 * rows.length) / 3), rows.length];
  const shards: string[] = [];
  for (let s = 0; s < 3; s++) {
    const f = path.join(dir, 'shards', `part-${s}.${ext}${s === 1 ? '.gz' : ''}`);
    const text = body(rows.slice(cut[s], cut[s + 1]));
    fs.writeFileSync(f, s === 1 ? zlib.gzipSync(text) : text);
    shards.push(f);
  }
  return { all, shards, shardDir: path.join(dir, 'shards'), read };
}

/** The job's output shards concatenated and decompressed (TSV: one header, as dedup writes the concatenation). */
function joined(dir: string, shards: string[], tsv: boolean): string {
  return shards
    .map((s, i) => {
      const b = fs.readFileSync(path.join(dir, path.basename(s)));
      const t = (s.endsWith('.gz') ? zlib.gunzipSync(b) : b).toString('utf8');
      return tsv && i > 0 ? t.slice(t.indexOf('\n') + 1) : t;
    })
    .join('');
}

describe('--keep policies: one process (memory, --stream) and sharded jobs (--local, array stages) write the same bytes', () => {
  let root: string;
  const inputs: Record<string, Layout> = {};

  before(() => {
    root = tmpDir();
    const docs = plantedDocs(240, 0.45, 3401);
    // score has ties (five values); day is an ISO date.
    const score = (i: number): number => (i * 7) % 5;
    const day = (i: number): string => `2024-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + ((i * 5) % 28)).padStart(2, '0')}`;
    inputs.jsonl = layout(
      path.join(root, 'jsonl'),
      'jsonl',
      undefined,
      docs.map((d, i) => JSON.stringify({ id: `j${i}`, score: score(i), day: day(i), tag: `t${i % 3}`, text: d.text })),
      ['--id-field', 'id'],
    );
    inputs.tsv = layout(
      path.join(root, 'tsv'),
      'tsv',
      'id\tscore\tday\ttag\ttext',
      docs.map((d, i) => [`t${i}`, String(score(i)), day(i), `t${i % 3}`, d.text.replace(/[\t\n\r]/g, ' ')].join('\t')),
      ['--id', 'id', '--text', 'text'],
    );
  });

  after(() => fs.rmSync(root, { recursive: true, force: true }));

  for (const [f, format] of ['jsonl', 'tsv'].entries()) {
    for (const [o, output] of OUTPUTS.entries()) {
      it(`${format}, --output ${output}: every policy`, async () => {
        const inp = inputs[format]!;
        const tsv = format === 'tsv';
        const firstOut = new Map<string, string>();
        for (const keep of POLICIES) {
          const dir = path.join(root, format, `${output}-${keep.replace(':', '_')}`);
          fs.mkdirSync(dir, { recursive: true });
          const opts = [...inp.read, '--threshold', '0.6', '--output', output, '--keep', keep];
          const want = path.join(dir, 'memory.out');
          let r = await cliInProcess(['dedup', inp.all, ...opts, '--no-stream', '--out', want, '-q']);
          assert.equal(r.code, 0, r.stderr);
          const wantText = fs.readFileSync(want, 'utf8');
          const streamed = path.join(dir, 'stream.out');
          r = await cliInProcess(['dedup', inp.all, ...opts, '--stream', '--out', streamed, '-q']);
          assert.equal(r.code, 0, r.stderr);
          assert.equal(fs.readFileSync(streamed, 'utf8'), wantText, `--stream differs (${keep})`);
          const shardOut = output !== 'clusters';
          // Every policy in every case runs as a job, by one of the two runners of the same stages: array
          // stages (one command each) in a third of the cases, job --local (a task process per stage and
          // core) in the rest. Both in every case were 64 jobs of ~11 commands each.
          if ((POLICIES.indexOf(keep) + f + o) % 3 === 0) {
            const work = path.join(dir, 'w-array');
            const outArray = path.join(dir, shardOut ? 'array' : 'array.out');
            r = await cliInProcess([
              'job',
              'plan',
              ...inp.shards,
              ...opts,
              ...(shardOut ? ['--out-dir', outArray] : []),
              '--task-bytes',
              '1',
              '--work-dir',
              work,
              '-q',
            ]);
            assert.equal(r.code, 0, r.stderr);
            for (const stage of STAGES) {
              if (stage === 'filter' && !shardOut) break;
              r = await cliInProcess(['stage', stage, '--work-dir', work, '--all']);
              assert.equal(r.code, 0, `${stage}: ${r.stderr}`);
            }
            r = await cliInProcess(['job', 'report', '--work-dir', work, ...(shardOut ? [] : ['--out', outArray]), '-q']);
            assert.equal(r.code, 0, r.stderr);
            assert.equal(shardOut ? joined(outArray, inp.shards, tsv) : fs.readFileSync(outArray, 'utf8'), wantText, `array stages differ (${keep})`);
          } else {
            const outLocal = path.join(dir, shardOut ? 'local' : 'local.out');
            r = await cliInProcess([
              'job',
              'dedup',
              ...inp.shards,
              ...opts,
              ...(shardOut ? ['--out-dir', outLocal] : ['--out', outLocal]),
              '--local',
              '--task-bytes',
              '1',
              '--work-dir',
              path.join(dir, 'w-local'),
              '-q',
            ]);
            assert.equal(r.code, 0, r.stderr);
            assert.equal(shardOut ? joined(outLocal, inp.shards, tsv) : fs.readFileSync(outLocal, 'utf8'), wantText, `job --local differs (${keep})`);
          }
          firstOut.set(keep, wantText);
        }
        // The policies do choose: each of these keeps another member than first somewhere.
        for (const keep of ['longest', 'max:score', 'min:day', 'none'])
          assert.notEqual(firstOut.get(keep), firstOut.get('first'), `--keep ${keep} kept the same members as first`);
        if (output === 'clusters') {
          // The clusters themselves do not change, only their kept members (and who duplicates whom).
          const strip = (t: string): string =>
            t.replace(/"representative":("[^"]*"|null),/g, '').replace(/,"duplicate_of":\[[^\]]*\],"similarity":\[[^\]]*\]/g, '');
          for (const keep of POLICIES) assert.equal(strip(firstOut.get(keep)!), strip(firstOut.get('first')!), keep);
        }
      });
    }
  }

  it('standard input: --output clusters reads it again for the policy (spooled), as from the file', () => {
    const inp = inputs.jsonl!;
    for (const keep of ['longest', 'max:score', 'none']) {
      const args = ['--id-field', 'id', '--threshold', '0.6', '--output', 'clusters', '--keep', keep, '-q'];
      const fromFile = neardup(['dedup', inp.all, ...args]);
      const fromStdin = neardup(['dedup', '-', '--format', 'jsonl', ...args], { input: fs.readFileSync(inp.all) });
      assert.equal(fromStdin.code, 0, fromStdin.stderr);
      assert.equal(fromStdin.stdout, fromFile.stdout, keep);
    }
  });

  it('parquet shards: every policy, annotate and clusters, one process over the shards (memory, --stream) and job --local alike', async () => {
    const dir = path.join(root, 'parquet');
    const shardDir = path.join(dir, 'shards');
    fs.mkdirSync(shardDir, { recursive: true });
    const docs = plantedDocs(150, 0.45, 3402);
    const shards: string[] = [];
    for (let s = 0; s < 3; s++) {
      const rows = docs.slice(s * 50, (s + 1) * 50);
      const f = path.join(shardDir, `part-${s}.parquet`);
      await writeParquet(
        f,
        [
          { name: 'id', data: rows.map((d) => d.id), type: 'STRING' },
          { name: 'score', data: rows.map((_, i) => ((s * 50 + i) * 7) % 5), type: 'DOUBLE' },
          { name: 'text', data: rows.map((d) => d.text), type: 'STRING' },
        ] as never,
        'SNAPPY',
        20,
      );
      shards.push(f);
    }
    const kept = new Set<string>();
    for (const keep of ['first', 'longest', 'shortest', 'max:score', 'min:score', 'none']) {
      for (const output of ['clusters', 'annotate']) {
        const tag = `${output}-${keep.replace(':', '_')}`;
        const opts = ['--id-field', 'id', '--threshold', '0.6', '--output', output, '--keep', keep];
        const files = output === 'clusters' ? ['.'] : shards.map((f) => path.basename(f));
        const read = (o: string): string => files.map((f) => fs.readFileSync(path.join(o, f === '.' ? '' : f)).toString('base64')).join('|');
        const outs: string[] = [];
        for (const how of [['--no-stream'], ['--stream']]) {
          const o = path.join(dir, `${tag}${how[0]}`);
          const r = await cliInProcess(['dedup', shardDir, ...opts, ...how, '--out', o, '-q']);
          assert.equal(r.code, 0, r.stderr);
          outs.push(read(o));
        }
        const o = path.join(dir, `${tag}-job`);
        const r = await cliInProcess([
          'job',
          'dedup',
          ...shards,
          ...opts,
          ...(output === 'clusters' ? ['--out', o] : ['--out-dir', o]),
          '--local',
          '--work-dir',
          path.join(dir, `w-${tag}`),
          '-q',
        ]);
        assert.equal(r.code, 0, r.stderr);
        outs.push(read(o));
        assert.equal(new Set(outs).size, 1, `${keep} ${output}: memory, --stream and job --local differ`);
        if (output === 'clusters') kept.add(outs[0]!);
      }
    }
    assert.equal(kept.size, 6, 'every policy keeps other members');
  });

  // #48: a Parquet row has no line; the error names its row group and row (it said `file:23:`).
  it('parquet: a value --keep cannot rank by is named by row group and row, in memory and --stream, in a file and in shards (property)', async () => {
    const dir = path.join(root, 'parquet-err');
    let k = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 60 }).chain((n) =>
          fc.tuple(
            fc.constant(n),
            fc.integer({ min: 0, max: n - 1 }),
            fc.integer({ min: 1, max: 16 }),
            fc.boolean(),
            fc.boolean(),
            fc.constantFrom('max', 'min'),
            fc.boolean(),
          )
        ),
        async ([n, bad, groupRows, missing, stream, kind, split]) => {
          const here = path.join(dir, String(k++));
          fs.mkdirSync(here, { recursive: true });
          // Every row the same text: one cluster, so every row is ranked and the bad one is met.
          const cut = split ? Math.ceil(n / 2) : n;
          const files: { name: string; from: number; to: number }[] = [{ name: 'a.parquet', from: 0, to: cut }];
          if (cut < n) files.push({ name: 'b.parquet', from: cut, to: n });
          for (const f of files) {
            const rows = Array.from({ length: f.to - f.from }, (_, i) => f.from + i);
            await writeParquet(
              path.join(here, f.name),
              [
                { name: 'text', data: rows.map(() => 'the same words in every row of this file'), type: 'STRING' },
                { name: 'ts', data: rows.map((i) => (i === bad ? (missing ? null : 'soon') : String(i))), type: 'STRING', nullable: true },
              ] as never,
              'SNAPPY',
              groupRows,
            );
          }
          const f = files.find((x) => bad >= x.from && bad < x.to)!;
          const row = bad - f.from;
          const input = split ? here : path.join(here, 'a.parquet');
          const r = await cliInProcess([
            'dedup',
            input,
            '--keep',
            `${kind}:ts`,
            '--output',
            'dedup',
            stream ? '--stream' : '--no-stream',
            '--out',
            path.join(here, split ? 'out' : 'out.parquet'),
            '-q',
          ]);
          const why = missing ? 'has no value' : 'is not a number or an ISO date';
          assert.equal(r.code, 2, r.stderr);
          assert.equal(
            r.stderr,
            `neardup: ${path.join(here, f.name)}: row group ${
              Math.floor(row / groupRows)
            }, row ${row}: field "ts" ${why}: --keep ${kind}:ts ranks the members of its cluster by it\n`,
          );
        },
      ),
      { numRuns: 30, seed: 4848 },
    );
  });

  // #48: a job named a Parquet shard's bad value by `file:LINE:` (its row + 1), not as dedup does.
  it('parquet: job dedup names a bad --keep value by row group and row, byte for byte as dedup does (property)', async () => {
    const dir = path.join(root, 'parquet-job-err');
    let k = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 4, max: 40 }).chain((n) =>
          fc.tuple(
            fc.constant(n),
            fc.integer({ min: 0, max: n - 1 }),
            fc.integer({ min: 1, max: 9 }),
            fc.boolean(),
            fc.constantFrom('max', 'min'),
            fc.integer({ min: 1, max: 3 }),
          )
        ),
        async ([n, bad, groupRows, missing, kind, files]) => {
          const here = path.join(dir, String(k++));
          const shards = path.join(here, 'sx');
          fs.mkdirSync(shards, { recursive: true });
          const cut = Array.from({ length: files + 1 }, (_, i) => Math.floor((i * n) / files));
          for (let f = 0; f < files; f++) {
            const rows = Array.from({ length: cut[f + 1]! - cut[f]! }, (_, i) => cut[f]! + i);
            await writeParquet(
              path.join(shards, `part-${f}.parquet`),
              [
                { name: 'text', data: rows.map(() => 'the same words in every row of these shards'), type: 'STRING' },
                { name: 'ts', data: rows.map((i) => (i === bad ? (missing ? null : 'soon') : String(i))), type: 'STRING', nullable: true },
              ] as never,
              'SNAPPY',
              groupRows,
            );
          }
          const opts = ['--keep', `${kind}:ts`, '--output', 'dedup', '-q'];
          const one = await cliInProcess(['dedup', shards, ...opts, '--out', path.join(here, 'o')]);
          const job = await cliInProcess(['job', 'dedup', shards, ...opts, '--out-dir', path.join(here, 'j'), '--local', '--work-dir', path.join(here, 'w')]);
          assert.equal(one.code, 2, one.stderr);
          assert.equal(job.code, 2, job.stderr);
          assert.match(one.stderr, /: row group \d+, row \d+: field "ts"/);
          assert.equal(job.stderr, one.stderr);
        },
      ),
      { numRuns: 8, seed: 4849 },
    );
  });

  for (const format of ['jsonl', 'tsv']) {
    for (
      const [keep, why] of [
        ['max:nope', 'has no value'],
        ['min:tag', 'is not a number or an ISO date'],
      ] as const
    ) {
      it(`${format}: --keep ${keep} is an input error naming file, line and field, in one process and in a job`, async () => {
        const inp = inputs[format]!;
        const field = keep.slice(4);
        const dir = path.join(root, format, `err-${field}`);
        fs.mkdirSync(dir, { recursive: true });
        const opts = [...inp.read, '--threshold', '0.6', '--output', 'dedup', '--keep', keep];
        const messages: string[] = [];
        for (const stream of ['--no-stream', '--stream']) {
          const r = await cliInProcess(['dedup', inp.shardDir, ...opts, stream, '--out', path.join(dir, `o${stream}`), '-q']);
          assert.equal(r.code, 2, r.stderr);
          // An unknown TSV column is known from the header (line 1); a JSONL record's field from its line.
          assert.match(
            r.stderr,
            format === 'tsv' && field === 'nope'
              ? /part-0\.tsv:1: --keep max:nope names an unknown column "nope"/
              : new RegExp(`part-\\d\\.${format}(\\.gz)?:\\d+: field "${field}" ${why}`),
          );
          messages.push(r.stderr.trim());
        }
        const j = await cliInProcess([
          'job',
          'dedup',
          ...inp.shards,
          ...opts,
          '--out-dir',
          path.join(dir, 'job'),
          '--local',
          '--work-dir',
          path.join(dir, 'w'),
          '-q',
        ]);
        assert.equal(j.code, 2, j.stderr);
        messages.push(j.stderr.trim());
        assert.equal(new Set(messages).size, 1, messages.join('\n'));
        // The concatenation names its own file and line.
        const c = await cliInProcess(['dedup', inp.all, ...opts, '--out', path.join(dir, 'c'), '-q']);
        assert.equal(c.code, 2);
        assert.match(
          c.stderr,
          format === 'tsv' && field === 'nope'
            ? /all\.tsv:1: --keep max:nope names an unknown column/
            : new RegExp(`all\\.${format}:\\d+: field "${field}" ${why}`),
        );
      });
    }
  }
});

describe('ranking values compared exactly', () => {
  const max = { kind: 'max' as const, field: 'ts' };
  it('integer literals beyond 2^53 never tie: the kept member is the exact maximum and minimum (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }), { minLength: 2, maxLength: 8 }), (xs) => {
        const vals = xs.map((x) => keepValue(max, '', String(x)));
        for (const v of vals) assert.equal(v.status, 0);
        const big = (j: number): bigint => BigInt(vals[j]!.value) + BigInt(vals[j]!.lo);
        xs.forEach((x, j) => assert.equal(big(j), x, `${x} read back exactly`));
        const want = (cmp: (a: bigint, b: bigint) => boolean): number => xs.reduce((b, x, j) => (cmp(x, xs[b]!) ? j : b), 0);
        assert.equal(chooseKept(max, xs.length, (j) => vals[j]!.value, (j) => vals[j]!.lo), want((a, b) => a > b));
        assert.equal(chooseKept({ kind: 'min', field: 'ts' }, xs.length, (j) => vals[j]!.value, (j) => vals[j]!.lo), want((a, b) => a < b));
      }),
      { numRuns: 500, seed: 7 },
    );
  });

  it('a date-time without an offset is UTC on every machine; an impossible date is not a date', () => {
    assert.equal(isoDateMs('2024-03-01T10:00:00'), Date.UTC(2024, 2, 1, 10));
    assert.equal(isoDateMs('2024-03-01 10:00'), Date.UTC(2024, 2, 1, 10));
    assert.equal(isoDateMs('2024-03-01T10:00:00+02:00'), Date.UTC(2024, 2, 1, 8));
    assert.equal(isoDateMs('2024-02-29'), Date.UTC(2024, 1, 29));
    for (const bad of ['2024-02-30', '2023-02-29', '2024-13-01', '2024-04-31', '2024-03-01T25:00', '2024-03-01T10:61']) {
      assert.ok(Number.isNaN(isoDateMs(bad)), bad);
      assert.equal(keepValue({ kind: 'max', field: 'day' }, '', bad).status, 2, bad);
    }
  });

  it('every route keeps the exact maximum of 64-bit timestamps, in every time zone', async () => {
    const dir = tmpDir();
    try {
      const text = 'the same advert for a flat near the station with two rooms and a balcony';
      // 2^63 − 3 … 2^63 − 1 round to one double: only an exact comparison tells them apart.
      const rows = ['9223372036854775805', '9223372036854775807', '9223372036854775806'].map((ts, i) =>
        JSON.stringify({ id: `a${i}`, ts: Number.NaN, day: '2024-01-01', text }).replace('null', ts)
      );
      // Without an offset b0 is 10:00 UTC, after b1's 09:30 UTC: in Tokyo, read as local time, it would be 01:00 UTC.
      const other = 'another advert entirely, about a house in the hills with a garden';
      rows.push(JSON.stringify({ id: 'b0', ts: 1, day: '2024-03-01T10:00:00', text: other }));
      rows.push(JSON.stringify({ id: 'b1', ts: 2, day: '2024-03-01T09:30:00+00:00', text: other }));
      const file = path.join(dir, 'ts.jsonl');
      fs.writeFileSync(file, rows.join('\n') + '\n');
      fs.mkdirSync(path.join(dir, 'sx'));
      fs.writeFileSync(path.join(dir, 'sx', 'part-0.jsonl'), rows.slice(0, 2).join('\n') + '\n');
      fs.writeFileSync(path.join(dir, 'sx', 'part-1.jsonl'), rows.slice(2).join('\n') + '\n');
      for (const [keep, want] of [['max:ts', 'a1'], ['min:ts', 'a0'], ['max:day', 'b0'], ['min:day', 'b1']] as const) {
        const kept = (out: string): string[] => out.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { id: string }).id);
        for (const tz of ['UTC', 'America/New_York', 'Asia/Tokyo']) {
          for (const route of [['--no-stream'], ['--stream']]) {
            const r = neardup(['dedup', file, '--id-field', 'id', '--keep', keep, '--output', 'dedup', '-q', ...route], { env: { TZ: tz } });
            assert.equal(r.code, 0, r.stderr);
            assert.ok(kept(r.stdout).includes(want), `${keep} ${tz} ${route}: ${r.stdout}`);
          }
        }
        const out = path.join(dir, `job-${keep.replace(':', '_')}`);
        const j = await cliInProcess([
          'job',
          'dedup',
          path.join(dir, 'sx'),
          '--id-field',
          'id',
          '--keep',
          keep,
          '--output',
          'dedup',
          '--out-dir',
          out,
          '--local',
          '--work-dir',
          `${out}.work`,
          '-q',
        ]);
        assert.equal(j.code, 0, j.stderr);
        assert.ok(
          kept(fs.readFileSync(path.join(out, 'part-0.jsonl'), 'utf8') + fs.readFileSync(path.join(out, 'part-1.jsonl'), 'utf8')).includes(want),
          `job ${keep}`,
        );
      }
      // An impossible date on a clustered record is an input error naming it.
      fs.writeFileSync(file, rows.slice(3).join('\n').replace('2024-03-01T10:00:00', '2024-02-30T10:00:00') + '\n');
      const bad = neardup(['dedup', file, '--id-field', 'id', '--keep', 'max:day', '--output', 'dedup', '-q']);
      assert.equal(bad.code, 2, bad.stderr);
      assert.match(bad.stderr, /ts\.jsonl:1: field "day" is not a number or an ISO date/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
