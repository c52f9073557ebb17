/**
 * Several positional inputs of `neardup dedup` (#34): a TSV file, a JSONL.zst file, a directory of
 * shards (Parquet and JSONL.gz) and a glob, read as one corpus in the order given. Every output and
 * keep policy (`source` too) writes the same bytes in memory, with --stream and in `job dedup
 * --local`; pairs and clusters equal dedup of the concatenation; a dedup copy keeps the ids the
 * concatenation's keeps. `--keep source` keeps the member of the earliest input given, whatever the
 * order. Duplicate ids across inputs and a bad record are input errors naming the files and lines,
 * alike in every route; what several inputs cannot do is refused naming the option.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { tmpDir } from '../cliUtil.js';
import { cliInProcess } from '../helpers/inProcessCli.js';
import { plantedDocs } from '../helpers/shards.js';
import { readParquetRows, writeParquet, zstd } from '../helpers/formats.js';
import { zstdDecompress } from '../../src/io/codec/zstd.js';

const POLICIES = ['first', 'source', 'longest', 'shortest', 'max:score', 'min:score', 'max:day', 'min:day', 'none'];

interface Row {
  id: string;
  score: number;
  day: string;
  text: string;
}

/** Every file below `dir` (relative, sorted) with its bytes: two output directories are equal when these are. */
function tree(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const r = path.join(rel, e.name);
      if (e.isDirectory()) walk(r);
      else out.set(r, fs.readFileSync(path.join(dir, r)));
    }
  };
  walk('');
  return out;
}

function sameTree(a: string, b: string, what: string): void {
  const x = tree(a);
  const y = tree(b);
  assert.deepEqual([...y.keys()], [...x.keys()], `${what}: other files`);
  for (const [k, v] of x) assert.ok(v.equals(y.get(k)!), `${what}: ${k} differs`);
}

/** The ids of the records of an output file, in order (TSV: first column after the header). */
async function idsOf(file: string): Promise<string[]> {
  if (file.endsWith('.parquet')) return (await readParquetRows(file)).rows.map((r) => String(r.id));
  let b = fs.readFileSync(file);
  if (file.endsWith('.gz')) b = zlib.gunzipSync(b);
  if (file.endsWith('.zst')) {
    const parts: Buffer[] = [];
    for await (
      const x of zstdDecompress((async function* () {
        yield b;
      })())
    ) parts.push(x);
    b = Buffer.concat(parts);
  }
  const lines = b.toString('utf8').split('\n').filter((l) => l !== '');
  if (/\.tsv/.test(file)) return lines.slice(1).map((l) => l.split('\t')[0]!);
  return lines.map((l) => String((JSON.parse(l) as { id: string }).id));
}

describe('several positional inputs: one corpus in order, the same bytes in memory, --stream and job dedup --local', () => {
  let root: string;
  /** The inputs as given on the command line, in order, and the files each stands for (output names under --out DIR). */
  let args: string[];
  let outFiles: string[];
  let all: string;
  /** The input (index into args) of each id. */
  const sourceOf = new Map<string, number>();
  const read = ['--id', 'id', '--text', 'text', '--threshold', '0.6'];

  before(async () => {
    root = tmpDir();
    const docs = plantedDocs(240, 0.45, 3403);
    const rows: Row[] = docs.map((d, i) => ({
      id: `m${i}`,
      score: (i * 7) % 5,
      day: `2024-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + ((i * 5) % 28)).padStart(2, '0')}`,
      text: d.text.replace(/[\t\n\r]/g, ' '),
    }));
    const jsonl = (xs: Row[]): string => xs.map((r) => JSON.stringify(r) + '\n').join('');
    const inDir = path.join(root, 'in');
    fs.mkdirSync(path.join(inDir, 'dir'), { recursive: true });
    fs.mkdirSync(path.join(inDir, 'glob'), { recursive: true });
    fs.writeFileSync(
      path.join(inDir, 'a.tsv'),
      ['id\tscore\tday\ttext', ...rows.slice(0, 50).map((r) => `${r.id}\t${r.score}\t${r.day}\t${r.text}`)].map((l) => l + '\n').join(''),
    );
    fs.writeFileSync(path.join(inDir, 'b.jsonl.zst'), await zstd(jsonl(rows.slice(50, 100))));
    const p = rows.slice(100, 150);
    await writeParquet(
      path.join(inDir, 'dir', 'part-0.parquet'),
      [
        { name: 'id', data: p.map((r) => r.id), type: 'STRING' },
        { name: 'score', data: p.map((r) => r.score), type: 'DOUBLE' },
        { name: 'day', data: p.map((r) => r.day), type: 'STRING' },
        { name: 'text', data: p.map((r) => r.text), type: 'STRING' },
      ] as never,
      'SNAPPY',
      20,
    );
    fs.writeFileSync(path.join(inDir, 'dir', 'part-1.jsonl.gz'), zlib.gzipSync(jsonl(rows.slice(150, 190))));
    fs.writeFileSync(path.join(inDir, 'glob', 'x-0.jsonl'), jsonl(rows.slice(190, 215)));
    fs.writeFileSync(path.join(inDir, 'glob', 'x-1.jsonl'), jsonl(rows.slice(215)));
    args = ['a.tsv', 'b.jsonl.zst', 'dir', 'glob/x-*.jsonl'].map((a) => path.join(inDir, a));
    outFiles = ['a.tsv', 'b.jsonl.zst', 'dir/part-0.parquet', 'dir/part-1.jsonl.gz', 'glob/x-0.jsonl', 'glob/x-1.jsonl'];
    rows.forEach((r, i) => sourceOf.set(r.id, i < 50 ? 0 : i < 100 ? 1 : i < 190 ? 2 : 3));
    all = path.join(root, 'all.jsonl');
    fs.writeFileSync(all, jsonl(rows));
  });

  after(() => fs.rmSync(root, { recursive: true, force: true }));

  /** The output of dedup of the concatenation (one JSONL file). */
  async function concat(opts: string[]): Promise<string> {
    const o = path.join(root, `concat-${opts.join('_').replace(/[^\w-]/g, '_')}.out`);
    const r = await cliInProcess(['dedup', all, ...read, ...opts, '--out', o, '-q']);
    assert.equal(r.code, 0, r.stderr);
    return fs.readFileSync(o, 'utf8');
  }

  /** Runs one option set through the three routes; returns the output (a file's text, or a directory). */
  async function routes(tag: string, opts: string[], shardOut: boolean): Promise<string> {
    const dir = path.join(root, tag);
    fs.mkdirSync(dir, { recursive: true });
    const outs: string[] = [];
    for (const how of [['--no-stream'], ['--stream'], ['--no-stream', '--workers', '2']]) {
      const o = path.join(dir, `one${how.join('')}`);
      const r = await cliInProcess(['dedup', ...args, ...read, ...opts, ...how, '--out', o, '-q']);
      assert.equal(r.code, 0, `${tag} ${how.join(' ')}: ${r.stderr}`);
      outs.push(o);
    }
    const o = path.join(dir, 'job');
    const r = await cliInProcess([
      'job',
      'dedup',
      ...args,
      ...read,
      ...opts,
      shardOut ? '--out-dir' : '--out',
      o,
      '--local',
      '--task-bytes',
      '1',
      '--work-dir',
      path.join(dir, 'w'),
      '-q',
    ]);
    assert.equal(r.code, 0, `${tag} job: ${r.stderr}`);
    outs.push(o);
    for (const x of outs.slice(1)) {
      if (shardOut) sameTree(outs[0]!, x, `${tag}: ${path.basename(x)}`);
      else assert.equal(fs.readFileSync(x, 'utf8'), fs.readFileSync(outs[0]!, 'utf8'), `${tag}: ${path.basename(x)} differs`);
    }
    return outs[0]!;
  }

  it("pairs and clusters (every policy) equal dedup of the concatenation; source keeps the earliest input's member", async () => {
    const pairs = await routes('pairs', ['--output', 'pairs'], false);
    assert.equal(fs.readFileSync(pairs, 'utf8'), await concat(['--output', 'pairs']));
    const byPolicy = new Map<string, string>();
    for (const keep of POLICIES) {
      const o = await routes(`clusters-${keep.replace(':', '_')}`, ['--output', 'clusters', '--keep', keep], false);
      const got = fs.readFileSync(o, 'utf8');
      assert.equal(got, await concat(['--output', 'clusters', '--keep', keep]), keep);
      if (keep === 'source') assert.equal(got, byPolicy.get('first'), 'source keeps the first member: inputs are numbered in the order given');
      byPolicy.set(keep, got);
    }
    const clusters = byPolicy.get('source')!.trim().split('\n').map((l) => JSON.parse(l) as { representative: string; members: string[] });
    assert.ok(clusters.some((k) => new Set(k.members.map((m) => sourceOf.get(m))).size > 1), 'some cluster spans inputs');
    for (const k of clusters) assert.equal(sourceOf.get(k.representative), Math.min(...k.members.map((m) => sourceOf.get(m)!)), JSON.stringify(k));
  });

  it('--keep source in reverse order keeps the member of the input given first, the same in every route', async () => {
    const saved = args;
    args = [...saved].reverse();
    try {
      const o = await routes('reversed', ['--output', 'clusters', '--keep', 'source'], false);
      const clusters = fs.readFileSync(o, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { representative: string; members: string[] });
      let spanning = 0;
      for (const k of clusters) {
        const sources = k.members.map((m) => sourceOf.get(m)!);
        if (new Set(sources).size > 1) spanning++;
        // Reversed: the highest original index is the input given first.
        assert.equal(sourceOf.get(k.representative), Math.max(...sources), JSON.stringify(k));
      }
      assert.ok(spanning > 0);
    } finally {
      args = saved;
    }
  });

  it("dedup and annotate: one output file per input file under --out DIR, named as job dedup names them; dedup keeps the concatenation's ids", async () => {
    for (const keep of ['first', 'source', 'longest', 'max:score', 'min:day', 'none']) {
      for (const output of ['dedup', 'annotate']) {
        const o = await routes(`${output}-${keep.replace(':', '_')}`, ['--output', output, '--keep', keep], true);
        assert.deepEqual([...tree(o).keys()].filter((f) => f !== '_SUCCESS'), [...outFiles].sort());
        const ids: string[] = [];
        for (const f of outFiles) ids.push(...(await idsOf(path.join(o, f))));
        const c = path.join(root, `concat-${output}-${keep.replace(':', '_')}.jsonl`);
        const r = await cliInProcess(['dedup', all, ...read, '--output', output, '--keep', keep, '--out', c, '-q']);
        assert.equal(r.code, 0, r.stderr);
        assert.deepEqual(ids, await idsOf(c), `${output} ${keep}: other records than the concatenation's`);
      }
    }
  });

  it("--exact with several inputs: the concatenation's clusters; --keep source is first there too", async () => {
    const o = path.join(root, 'exact.out');
    const r = await cliInProcess(['dedup', ...args, ...read, '--exact', '--output', 'clusters', '--keep', 'source', '--out', o, '-q']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(fs.readFileSync(o, 'utf8'), await concat(['--exact', '--output', 'clusters']));
  });

  it('an id repeated across inputs, and a bad record in a later input, are input errors naming both places, alike in every route', async () => {
    const dir = path.join(root, 'errors');
    fs.mkdirSync(dir, { recursive: true });
    const dup = path.join(dir, 'dup.jsonl');
    fs.writeFileSync(dup, '{"id":"n1","text":"one two three"}\n{"id":"m7","text":"four five six"}\n');
    const bad = path.join(dir, 'bad.jsonl');
    fs.writeFileSync(bad, '{"id":"n2","text":"one two three"}\n{"id":"n3","text": \n');
    for (
      const [extra, want] of [
        [
          dup,
          new RegExp(
            `${dup.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: duplicate id "m7" \\(first on ${
              args[0]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
            }:9\\); ids must be unique`,
          ),
        ],
        [bad, new RegExp(`${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2`)],
      ] as const
    ) {
      const messages: string[] = [];
      for (const how of [['--no-stream'], ['--stream']]) {
        const r = await cliInProcess(['dedup', ...args, extra, ...read, ...how, '--output', 'clusters', '-q']);
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, want);
        assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
        messages.push(r.stderr.trim());
      }
      const j = await cliInProcess([
        'job',
        'dedup',
        ...args,
        extra,
        ...read,
        '--output',
        'clusters',
        '--out',
        path.join(dir, 'j.out'),
        '--local',
        '--work-dir',
        path.join(dir, `w-${path.basename(extra)}`),
        '-q',
      ]);
      assert.equal(j.code, 2, j.stderr);
      assert.match(j.stderr, want);
      if (extra === dup) assert.equal(new Set([...messages, j.stderr.trim()]).size, 1, [...messages, j.stderr].join('\n'));
    }
  });

  it('--keep max:FIELD: a clustered record of a later input without the field is named by its file and line, alike in every route', async () => {
    const dir = path.join(root, 'keep-error');
    fs.mkdirSync(dir, { recursive: true });
    const text = fs.readFileSync(all, 'utf8').split('\n').map((l) => (l ? (JSON.parse(l) as Row) : undefined));
    // A copy of a document of the first input, without a score: it joins that document's cluster.
    const noScore = path.join(dir, 'noscore.jsonl');
    fs.writeFileSync(noScore, `{"id":"z0","text":"short"}\n${JSON.stringify({ id: 'z1', text: text[3]!.text })}\n`);
    const want = `${noScore}:2: field "score" has no value: --keep max:score ranks the members of its cluster by it`;
    const messages: string[] = [];
    for (const how of [['--no-stream'], ['--stream']]) {
      const r = await cliInProcess(['dedup', ...args, noScore, ...read, ...how, '--output', 'clusters', '--keep', 'max:score', '-q']);
      assert.equal(r.code, 2, r.stderr);
      messages.push(r.stderr.trim());
    }
    const j = await cliInProcess([
      'job',
      'dedup',
      ...args,
      noScore,
      ...read,
      '--output',
      'clusters',
      '--keep',
      'max:score',
      '--out',
      path.join(dir, 'j.out'),
      '--local',
      '--work-dir',
      path.join(dir, 'w'),
      '-q',
    ]);
    assert.equal(j.code, 2, j.stderr);
    messages.push(j.stderr.trim());
    for (const m of messages) assert.equal(m, `neardup: ${want}`);
  });

  it('what several inputs cannot do is refused with exit 2 naming it', async () => {
    const cases: [string[], RegExp][] = [
      [[...args, '-'], /- \(standard input\) cannot be one of several inputs/],
      [[args[0]!, args[0]!], /is given twice/],
      [[...args, '--against', all], /--against takes one input/],
      [[...args, '--output', 'dedup'], /needs --out DIR/],
      [[...args, '--output', 'dedup', '--out', path.join(root, 'in')], /overlaps the input/],
      [[args[0]!, path.join(root, 'nope.tsv')], /nope\.tsv: no such file or directory/],
    ];
    for (const [a, want] of cases) {
      const r = await cliInProcess(['dedup', ...a, ...read, '-q']);
      assert.equal(r.code, 2, `${a.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, want);
    }
  });

  it('one file given twice through a symbolic or hard link is refused by dedup and by jobs, naming both', async () => {
    const links = path.join(root, 'links');
    fs.mkdirSync(links, { recursive: true });
    const sym = path.join(links, `sym${path.extname(args[0]!)}`);
    const hard = path.join(links, `hard${path.extname(args[0]!)}`);
    fs.symlinkSync(path.resolve(args[0]!), sym);
    fs.linkSync(args[0]!, hard);
    for (const twin of [sym, hard]) {
      for (const cmd of [['dedup'], ['job', 'plan']]) {
        const extra = cmd[0] === 'job' ? ['--work-dir', path.join(links, `w-${path.basename(twin)}`)] : [];
        const r = await cliInProcess([...cmd, args[0]!, twin, ...read, ...extra, '-q']);
        assert.equal(r.code, 2, `${cmd.join(' ')} ${twin}: ${r.stderr}`);
        assert.match(r.stderr, /are the same file, given twice/);
      }
    }
  });
});
