/**
 * Tags and the audit of removals (#34 items 2–4): annotate's cluster, cluster_size, duplicate_of,
 * similarity and kept; `--removed FILE` (TSV, JSONL, Parquet) and `--dry-run`; `--against` naming
 * the reference. For every keep policy, the same bytes in memory, with --stream, in `job dedup
 * --local` and as array stages; and what the bytes say is checked against the definitions: the
 * similarity is the exact Jaccard of the two documents' shingle sets, the kept id is the cluster's
 * kept member, the audit lists exactly what `--output dedup` drops.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import zlib from 'node:zlib';
import { neardup, tmpDir } from '../../cliUtil.js';
import { cliInProcess } from '../../helpers/inProcessCli.js';
import { plantedDocs, type Doc } from '../../helpers/shards.js';
import { readParquetRows, writeParquet } from '../../helpers/formats.js';
import { STAGES } from '../../../src/shard/files/job.js';
import { createShingler } from '../../../src/text/shingler.js';
import { jaccard } from '../../../src/similarity/jaccard.js';
import { csvField, formatSimilarity } from '../../../src/io/write/write.js';
import { KeptSimilarity } from '../../../src/cluster/keptSimilarity.js';
import { createSet64 } from '../../../src/text/fingerprint64.js';

const POLICIES = ['first', 'longest', 'shortest', 'max:score', 'min:score', 'none'];
const AUDITS = ['removed.tsv', 'removed.jsonl.gz', 'removed.parquet'];

interface AuditRow {
  id: string;
  kept_id: string | null;
  similarity: number | null;
  cluster: number | null;
  reference_id?: string | null;
  reference_source?: string | null;
}

/** An audit file's rows, whatever its format (TSV empty fields are nulls). */
async function readAudit(file: string): Promise<AuditRow[]> {
  if (file.endsWith('.parquet')) return (await readParquetRows(file)).rows as unknown as AuditRow[];
  const b = fs.readFileSync(file);
  const text = (file.endsWith('.gz') ? zlib.gunzipSync(b) : b).toString('utf8');
  const lines = text.split('\n').filter(Boolean);
  if (file.includes('.jsonl')) return lines.map((l) => JSON.parse(l) as AuditRow);
  const names = lines[0]!.split('\t');
  return lines.slice(1).map((l) => {
    const f = l.split('\t');
    const o: Record<string, unknown> = {};
    names.forEach((n, i) => (o[n] = f[i] === '' ? null : n === 'similarity' || n === 'cluster' ? Number(f[i]) : f[i]));
    return o as unknown as AuditRow;
  });
}

/** Similarities as the writers round them (6 decimals): TSV and JSONL print that, Parquet keeps the double. */
const rounded = (rows: AuditRow[]): AuditRow[] =>
  rows.map((r) => ({ ...r, similarity: r.similarity === null ? null : Number(formatSimilarity(r.similarity)) }));

describe('tags and the --removed audit: every policy, every route, checked against their definitions', () => {
  let root: string;
  let docs: Doc[];
  let all: string;
  let shards: string[];
  const shingler = createShingler();
  const textOf = new Map<string, string>();

  before(() => {
    root = tmpDir();
    docs = plantedDocs(150, 0.45, 3404);
    const rows = docs.map((d, i) => JSON.stringify({ id: d.id, score: (i * 7) % 5, text: d.text }));
    for (const d of docs) textOf.set(d.id, d.text);
    all = path.join(root, 'all.jsonl');
    fs.writeFileSync(all, rows.map((l) => l + '\n').join(''));
    fs.mkdirSync(path.join(root, 'shards'));
    shards = [0, 1, 2].map((s) => {
      const f = path.join(root, 'shards', `part-${s}.jsonl`);
      fs.writeFileSync(f, rows.slice(s * 50, (s + 1) * 50).map((l) => l + '\n').join(''));
      return f;
    });
  });

  after(() => fs.rmSync(root, { recursive: true, force: true }));

  for (const keep of POLICIES) {
    it(`--keep ${keep}: annotate's tags and the audit mean what they say, the same on every route and in every format`, async () => {
      const dir = path.join(root, keep.replace(':', '_'));
      fs.mkdirSync(dir);
      const opts = ['--id-field', 'id', '--threshold', '0.6', '--keep', keep];
      // The clusters and the deduplicated copy: the reference the tags and the audit are checked against.
      let r = await cliInProcess(['dedup', all, ...opts, '--output', 'clusters', '--out', path.join(dir, 'clusters.jsonl'), '-q']);
      assert.equal(r.code, 0, r.stderr);
      const clusters = fs.readFileSync(path.join(dir, 'clusters.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) =>
        JSON.parse(l) as { cluster: number; size: number; representative: string | null; members: string[]; duplicate_of: (string | null)[] }
      );
      r = await cliInProcess(['dedup', all, ...opts, '--output', 'dedup', '--out', path.join(dir, 'dedup.jsonl'), '-q']);
      assert.equal(r.code, 0, r.stderr);
      const keptIds = new Set(
        fs.readFileSync(path.join(dir, 'dedup.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { id: string }).id),
      );
      const clusterOf = new Map<string, (typeof clusters)[number]>();
      for (const c of clusters) for (const m of c.members) clusterOf.set(m, c);
      const sim = (a: string, b: string): number => jaccard(shingler.set(textOf.get(a)!), shingler.set(textOf.get(b)!));

      // annotate: every record, its tags as defined.
      r = await cliInProcess(['dedup', all, ...opts, '--output', 'annotate', '--out', path.join(dir, 'annotate.jsonl'), '-q']);
      assert.equal(r.code, 0, r.stderr);
      const annotated = fs.readFileSync(path.join(dir, 'annotate.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) =>
        JSON.parse(l) as Record<string, unknown>
      );
      assert.equal(annotated.length, docs.length);
      for (const a of annotated) {
        const id = a.id as string;
        const c = clusterOf.get(id);
        assert.equal(a.kept, keptIds.has(id), `${id}: kept is whether dedup keeps it`);
        assert.equal(a.cluster, c ? c.cluster : null);
        assert.equal(a.cluster_size, c ? c.size : null);
        // The verified removal rule: the cluster line names each member's kept near duplicate.
        const dup = c ? c.duplicate_of[c.members.indexOf(id)]! : null;
        assert.equal(a.duplicate_of, dup);
        if (dup === null) assert.equal(a.similarity, null, `${id}: no kept member to compare with`);
        else {
          assert.equal(a.similarity, Number(formatSimilarity(sim(id, dup))), `${id}: the exact Jaccard to ${dup}`);
          assert.ok(keptIds.has(dup) && sim(id, dup) >= 0.6, `${id}: ${dup} is kept and a near duplicate of it`);
        }
      }
      // --tag-prefix renames the five tags and nothing else.
      r = await cliInProcess(['dedup', all, ...opts, '--output', 'annotate', '--tag-prefix', 'nd_', '--out', path.join(dir, 'prefixed.jsonl'), '-q']);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        fs.readFileSync(path.join(dir, 'prefixed.jsonl'), 'utf8'),
        fs.readFileSync(path.join(dir, 'annotate.jsonl'), 'utf8').replace(/"(cluster|cluster_size|duplicate_of|similarity|kept)":/g, '"nd_$1":'),
      );

      // The audit: exactly the dropped documents, in input order, the same on every route and format.
      const want: AuditRow[] = annotated
        .filter((a) => !a.kept)
        .map((a) => {
          const dup = (a.duplicate_of as string | null) ?? null;
          return { id: a.id as string, kept_id: dup, similarity: dup === null ? null : sim(a.id as string, dup), cluster: a.cluster as number };
        });
      assert.equal(want.length, docs.length - keptIds.size);
      if (keep === 'none') assert.ok(want.length > 0 && want.every((w) => w.kept_id === null && w.similarity === null));
      for (const [k, audit] of AUDITS.entries()) {
        const got: Record<string, AuditRow[]> = {};
        const out = (how: string): string => path.join(dir, `${how}-${audit}`);
        r = await cliInProcess([
          'dedup',
          all,
          ...opts,
          '--output',
          'dedup',
          '--no-stream',
          '--out',
          path.join(dir, `m${k}.jsonl`),
          '--removed',
          out('memory'),
          '-q',
        ]);
        assert.equal(r.code, 0, r.stderr);
        got.memory = await readAudit(out('memory'));
        // --dry-run: the audit only, the deduplicated copy not written.
        r = await cliInProcess(['dedup', all, ...opts, '--output', 'dedup', '--stream', '--dry-run', '--removed', out('stream'), '-q']);
        assert.equal(r.code, 0, r.stderr);
        got.stream = await readAudit(out('stream'));
        r = await cliInProcess([
          'job',
          'dedup',
          ...shards,
          ...opts,
          '--output',
          'dedup',
          '--out-dir',
          path.join(dir, `job${k}`),
          '--removed',
          out('job'),
          '--local',
          '--task-bytes',
          '1',
          '--work-dir',
          path.join(dir, `w${k}`),
          '-q',
        ]);
        assert.equal(r.code, 0, r.stderr);
        got.job = await readAudit(out('job'));
        if (k === 0) {
          // Array stages: a dry-run plan with the audit's path, the stages, then job report writes it.
          const work = path.join(dir, 'w-array');
          r = await cliInProcess([
            'job',
            'plan',
            ...shards,
            ...opts,
            '--output',
            'dedup',
            '--dry-run',
            '--removed',
            out('array'),
            '--task-bytes',
            '1',
            '--work-dir',
            work,
            '-q',
          ]);
          assert.equal(r.code, 0, r.stderr);
          for (const stage of STAGES) {
            r = await cliInProcess(['stage', stage, '--work-dir', work, '--all']);
            assert.equal(r.code, 0, `${stage}: ${r.stderr}`);
          }
          r = await cliInProcess(['job', 'report', '--work-dir', work, '-q']);
          assert.equal(r.code, 0, r.stderr);
          got.array = await readAudit(out('array'));
          assert.equal(fs.readFileSync(out('array'), 'utf8'), fs.readFileSync(out('memory'), 'utf8'), 'array stages: the same bytes');
          assert.equal(fs.readFileSync(out('job'), 'utf8'), fs.readFileSync(out('memory'), 'utf8'), 'job --local: the same bytes');
        }
        const expected = audit.endsWith('.parquet') ? want : rounded(want);
        for (const [how, rows] of Object.entries(got)) assert.deepEqual(rows, expected, `${audit}, ${how}`);
        if (audit.endsWith('.parquet')) {
          const { metadata } = await readParquetRows(out('memory'));
          assert.deepEqual(metadata.schema.slice(1).map((e) => [e.name, e.type]), [['id', 'BYTE_ARRAY'], ['kept_id', 'BYTE_ARRAY'], ['similarity', 'DOUBLE'], [
            'cluster',
            'INT32',
          ]]);
        }
      }
      // annotate on the job: the same bytes as in one process (the output shards concatenated).
      r = await cliInProcess([
        'job',
        'dedup',
        ...shards,
        ...opts,
        '--output',
        'annotate',
        '--out-dir',
        path.join(dir, 'job-ann'),
        '--local',
        '--work-dir',
        path.join(dir, 'w-ann'),
        '-q',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(
        shards.map((s) => fs.readFileSync(path.join(dir, 'job-ann', path.basename(s)), 'utf8')).join(''),
        fs.readFileSync(path.join(dir, 'annotate.jsonl'), 'utf8'),
      );
    });
  }

  it('--against names the reference document (the most similar, the first on ties) in annotate and the audit, in one process and sharded, and the summary counts both sides', async () => {
    const dir = path.join(root, 'against');
    fs.mkdirSync(path.join(dir, 'ref'), { recursive: true });
    const corpus = shards[2]!;
    const refs = [path.join(dir, 'ref', 'r0.jsonl'), path.join(dir, 'ref', 'r1.jsonl')];
    fs.copyFileSync(shards[0]!, refs[0]!);
    fs.copyFileSync(shards[1]!, refs[1]!);
    const opts = ['--id-field', 'id', '--threshold', '0.6'];
    // The pairs: the definition of each document's best match.
    let r = await cliInProcess([
      'dedup',
      corpus,
      '--against',
      path.join(dir, 'ref'),
      ...opts,
      '--output-format',
      'jsonl',
      '--out',
      path.join(dir, 'pairs.jsonl'),
      '-q',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const pairs = fs.readFileSync(path.join(dir, 'pairs.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) =>
      JSON.parse(l) as { a: string; b: string; similarity: number }
    );
    assert.ok(pairs.length > 0);
    const best = new Map<string, { b: string; s: number }>();
    for (const p of pairs) if (!best.has(p.a) || p.similarity > best.get(p.a)!.s) best.set(p.a, { b: p.b, s: p.similarity });
    const sourceOf = (id: string): string => path.resolve(refs[Number(id.slice(1)) < 50 ? 0 : 1]!);
    const want: AuditRow[] = [...best].map(([a, m]) => ({
      id: a,
      kept_id: m.b,
      similarity: m.s,
      cluster: null,
      reference_id: m.b,
      reference_source: sourceOf(m.b),
    }));

    const summaries: Record<string, unknown>[] = [];
    // --json prints on stdout: these two run as child processes.
    let c = neardup([
      'dedup',
      corpus,
      '--against',
      path.join(dir, 'ref'),
      ...opts,
      '--output',
      'dedup',
      '--out',
      path.join(dir, 'one.jsonl'),
      '--removed',
      path.join(dir, 'one-removed.jsonl'),
      '--json',
    ]);
    assert.equal(c.code, 0, c.stderr);
    summaries.push(JSON.parse(c.stdout) as Record<string, unknown>);
    c = neardup([
      'job',
      'dedup',
      corpus,
      '--against',
      ...refs,
      ...opts,
      '--output',
      'dedup',
      '--out-dir',
      path.join(dir, 'job'),
      '--removed',
      path.join(dir, 'job-removed.jsonl'),
      '--local',
      '--work-dir',
      path.join(dir, 'w'),
      '--json',
    ]);
    assert.equal(c.code, 0, c.stderr);
    summaries.push(JSON.parse(c.stdout) as Record<string, unknown>);
    const refMatched = new Set(pairs.map((p) => p.b)).size;
    for (const s of summaries) {
      assert.equal(s.matched, best.size, 'new documents matched');
      assert.equal(s.referenceMatched, refMatched, 'reference documents that matched anything');
    }
    for (const f of ['one-removed.jsonl', 'job-removed.jsonl']) assert.deepEqual(await readAudit(path.join(dir, f)), want, f);
    assert.equal(fs.readFileSync(path.join(dir, 'job', path.basename(corpus)), 'utf8'), fs.readFileSync(path.join(dir, 'one.jsonl'), 'utf8'));

    // annotate: duplicate_of and similarity name the best match; kept is false exactly for matched documents.
    r = await cliInProcess(['dedup', corpus, '--against', path.join(dir, 'ref'), ...opts, '--output', 'annotate', '--out', path.join(dir, 'ann.jsonl'), '-q']);
    assert.equal(r.code, 0, r.stderr);
    r = await cliInProcess([
      'job',
      'dedup',
      corpus,
      '--against',
      ...refs,
      ...opts,
      '--output',
      'annotate',
      '--out-dir',
      path.join(dir, 'job-ann'),
      '--local',
      '--work-dir',
      path.join(dir, 'w2'),
      '-q',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const ann = fs.readFileSync(path.join(dir, 'ann.jsonl'), 'utf8');
    assert.equal(fs.readFileSync(path.join(dir, 'job-ann', path.basename(corpus)), 'utf8'), ann);
    for (const l of ann.split('\n').filter(Boolean)) {
      const o = JSON.parse(l) as Record<string, unknown>;
      const m = best.get(o.id as string);
      assert.deepEqual([o.cluster, o.cluster_size, o.duplicate_of, o.similarity, o.kept], m ? [null, null, m.b, m.s, false] : [null, null, null, null, true]);
    }
  });

  it('options a route cannot honour are refused by name (exit 2), and a failed run leaves no audit', async () => {
    const dir = path.join(root, 'refused');
    fs.mkdirSync(path.join(dir, 'd.tsv'), { recursive: true });
    const base = ['dedup', all, '--id-field', 'id'];
    const refused: [string[], RegExp][] = [
      [[...base, '--output', 'pairs', '--removed', path.join(dir, 'r.tsv')], /--removed .*--output pairs/],
      [[...base, '--output', 'annotate', '--removed', path.join(dir, 'r.tsv')], /--removed .*--output annotate/],
      [[...base, '--output', 'dedup', '--tag-prefix', 'x_'], /--tag-prefix .*--output dedup/],
      [[...base, '--output', 'clusters', '--dry-run'], /--dry-run .*--output clusters/],
      [[...base, '--output', 'dedup', '--dry-run', '--out', path.join(dir, 'o.jsonl')], /--dry-run writes no output/],
      [[...base, '--output', 'dedup', '--removed', path.join(dir, 'r.csv')], /--removed .*\.tsv, \.jsonl or \.parquet/],
      [[...base, '--output', 'annotate', '--tag-prefix', 'a\tb'], /--tag-prefix/],
      [[...base, '--output', 'dedup', '--dry-run', '--removed', path.join(dir, 'd.tsv')], /--removed .* is a directory/],
      [[...base, '--output', 'dedup', '--dry-run', '--removed', path.join(dir, 'no', 'r.tsv')], /--removed .*does not exist/],
      [
        ['job', 'plan', all, '--id-field', 'id', '--output', 'pairs', '--removed', path.join(dir, 'r.tsv'), '--work-dir', path.join(dir, 'w')],
        /--removed .*--output pairs/,
      ],
      [
        ['job', 'dedup', all, '--id-field', 'id', '--output', 'pairs', '--removed', path.join(dir, 'r.tsv'), '--local', '--work-dir', path.join(dir, 'w2')],
        /--removed .*--output pairs/,
      ],
    ];
    for (const [args, why] of refused) {
      const r = await cliInProcess(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, why);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    }
    // A job planned without --removed computed no similarities: job report refuses to write an audit.
    const work = path.join(dir, 'w3');
    let j = await cliInProcess(['job', 'dedup', all, '--id-field', 'id', '--output', 'dedup', '--dry-run', '--local', '--work-dir', work, '-q']);
    assert.equal(j.code, 0, j.stderr);
    j = await cliInProcess(['job', 'report', '--work-dir', work, '--removed', path.join(dir, 'late.tsv')]);
    assert.equal(j.code, 2, j.stderr);
    assert.match(j.stderr, /--removed: this job was planned without it/);
    // An input error (a field the policy cannot rank by) after the audit was asked for: no audit file, no temp file.
    const r = await cliInProcess([
      ...base,
      '--output',
      'dedup',
      '--threshold',
      '0.6',
      '--keep',
      'max:nope',
      '--out',
      path.join(dir, 'o.jsonl'),
      '--removed',
      path.join(dir, 'r.jsonl'),
    ]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /all\.jsonl:\d+: field "nope" has no value/);
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f.includes('r.jsonl') || f.includes('o.jsonl')), []);
  });
});

// With --fingerprint-bits 64 the tag is the Jaccard of the 64-bit sets verification scores, not of
// 32-bit ones: checked against a plain Set of BigInts, for Jaccard and containment, empty texts too.
describe('the similarity tag with 64-bit fingerprints', () => {
  it('equals the exact similarity of the 64-bit shingle sets', () => {
    const docs = plantedDocs(60, 0.5, 9).map((d) => d.text);
    docs.push('', 'abc');
    const set64 = createSet64({});
    for (const measure of ['jaccard', 'containment'] as const) {
      const got = new Map<number, number>();
      const ks = new KeptSimilarity({}, measure, (d, x) => got.set(d, x), 64);
      for (let d = 1; d < docs.length; d++) ks.add(d, 0);
      for (let d = 0; d < docs.length; d++) ks.feed(d, docs[d]!);
      const a = new Set(set64(docs[0]!));
      for (let d = 1; d < docs.length; d++) {
        const b = set64(docs[d]!);
        const inter = b.filter((x) => a.has(x)).length;
        const want = b.length === 0 || a.size === 0 ? 0 : measure === 'containment' ? inter / Math.min(a.size, b.length) : inter / (a.size + b.length - inter);
        assert.equal(got.get(d), want, `${measure}, document ${d}`);
      }
    }
  });
});

// #48: annotate's tags never duplicate a field of the input. The tags go to neardup_… when a plain
// name is taken; when those are taken too (an annotated output annotated again), or a --tag-prefix
// name is taken (in any case), the run is refused with exit 2 naming the field and --tag-prefix,
// and no output is left. Every writer: JSONL, TSV, CSV, Parquet.
describe("annotate tags never collide with the input's fields", () => {
  const FORMATS = ['jsonl', 'tsv', 'csv', 'parquet'] as const;
  type Fmt = (typeof FORMATS)[number];
  const docs = plantedDocs(12, 0.5, 4807);

  async function writeInput(file: string, fmt: Fmt, extra: string | undefined): Promise<void> {
    const cols: { name: string; data: string[] }[] = [{ name: 'id', data: docs.map((d) => d.id) }, { name: 'text', data: docs.map((d) => d.text) }];
    if (extra !== undefined) cols.push({ name: extra, data: docs.map(() => '1') });
    if (fmt === 'parquet') return writeParquet(file, cols);
    const sep = fmt === 'csv' ? ',' : '\t';
    if (fmt === 'jsonl') fs.writeFileSync(file, docs.map((_, i) => JSON.stringify(Object.fromEntries(cols.map((c) => [c.name, c.data[i]]))) + '\n').join(''));
    else fs.writeFileSync(
        file,
        [cols.map((c) => c.name).join(sep), ...docs.map((_, i) => cols.map((c) => (fmt === 'csv' ? csvField(c.data[i]!) : c.data[i])).join(sep))].join('\n')
          + '\n',
      );
  }

  /** The field names of every record of `file` (one list for a file with a header or a schema). */
  async function fieldNames(file: string, fmt: Fmt): Promise<string[][]> {
    if (fmt === 'parquet') return [(await readParquetRows(file)).metadata.schema.slice(1).map((e) => e.name)];
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
    if (fmt === 'jsonl') return lines.map((l) => [...l.matchAll(/"([^"\\]*)":/g)].map((m) => m[1]!));
    return [lines[0]!.split(fmt === 'csv' ? ',' : '\t')];
  }

  const unique = (names: string[]): boolean => new Set(names.map((n) => n.toLowerCase())).size === names.length;

  for (const fmt of FORMATS) {
    it(`${fmt}: annotating an annotated output renames the tags once, then refuses (exit 2) unless --tag-prefix is given`, async () => {
      const dir = tmpDir();
      let input = path.join(dir, `in0.${fmt}`);
      await writeInput(input, fmt, undefined);
      for (let round = 1; round <= 2; round++) {
        const out = path.join(dir, `in${round}.${fmt}`);
        const r = await cliInProcess(['dedup', input, '--output', 'annotate', '--out', out, '-q']);
        assert.equal(r.code, 0, r.stderr);
        for (const names of await fieldNames(out, fmt)) assert.ok(unique(names), `round ${round}: ${names.join(' ')}`);
        input = out;
      }
      const out = path.join(dir, `in3.${fmt}`);
      const r = await cliInProcess(['dedup', input, '--output', 'annotate', '--out', out, '-q']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`in2\\.${fmt}.*"neardup_cluster".*--tag-prefix`));
      assert.doesNotMatch(r.stderr, /\n\s+at /);
      assert.deepEqual(fs.readdirSync(dir).filter((f) => f.includes('in3')), []);
      const ok = await cliInProcess(['dedup', input, '--output', 'annotate', '--out', out, '--tag-prefix', 'x_', '-q']);
      assert.equal(ok.code, 0, ok.stderr);
      for (const names of await fieldNames(out, fmt)) assert.ok(unique(names), names.join(' '));
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it(`${fmt}: --tag-prefix P on an input with a field P<tag> (any tag, any case) is refused naming the field`, async () => {
      const dir = tmpDir();
      for (const [k, tag] of ['cluster', 'cluster_size', 'duplicate_of', 'similarity', 'kept'].entries()) {
        const field = k % 2 === 0 ? `nd_${tag}` : `ND_${tag.toUpperCase()}`;
        const input = path.join(dir, `t${k}.${fmt}`);
        await writeInput(input, fmt, field);
        const out = path.join(dir, `o${k}.${fmt}`);
        const r = await cliInProcess(['dedup', input, '--output', 'annotate', '--tag-prefix', 'nd_', '--out', out, '-q']);
        assert.equal(r.code, 2, `${field}: ${r.stderr}`);
        assert.match(r.stderr, new RegExp(`t${k}\\.${fmt}.*"nd_${tag}".*--tag-prefix`, 'i'));
        assert.ok(!fs.readdirSync(dir).some((f) => f.includes(`o${k}`)), `${field}: output left`);
        // Without the clash the same prefix works.
        const r2 = await cliInProcess(['dedup', input, '--output', 'annotate', '--tag-prefix', 'nd2_', '--out', out, '-q']);
        assert.equal(r2.code, 0, r2.stderr);
        for (const names of await fieldNames(out, fmt)) assert.ok(unique(names), names.join(' '));
      }
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }
});

// #48: the output and the --removed audit are put in place together. A disk that fills while either
// is written (a tiny tmpfs, filled up) fails the run and leaves both old files as they were, no
// temp file, and no _SUCCESS: for a file output, a Parquet output and a directory of shards, each
// audit format, the full disk under the audit or under the output. Needs root for mount (else skipped).
describe('a failed write of the output or the audit leaves neither', () => {
  const base = tmpDir();
  const full = path.join(base, 'full');
  let mounted = false;
  const docs = plantedDocs(60, 0.5, 4821);

  before(async () => {
    fs.mkdirSync(full);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', full], { stdio: 'ignore' });
      mounted = true;
    } catch {
      return;
    }
    fs.writeFileSync(path.join(base, 'in.jsonl'), docs.map((d) => JSON.stringify({ id: d.id, text: d.text }) + '\n').join(''));
    await writeParquet(path.join(base, 'in.parquet'), [{ name: 'id', data: docs.map((d) => d.id) }, { name: 'text', data: docs.map((d) => d.text) }]);
    fs.mkdirSync(path.join(base, 'shards'));
    for (let s = 0; s < 2; s++)
      fs.writeFileSync(
        path.join(base, 'shards', `p${s}.jsonl`),
        docs.slice(s * 30, s * 30 + 30).map((d) => JSON.stringify({ id: d.id, text: d.text }) + '\n').join(''),
      );
  });

  after(() => {
    if (mounted) execFileSync('umount', [full]);
    fs.rmSync(base, { recursive: true, force: true });
  });

  /**
   * Every file under `dir` with its size and SHA-256, temp files included (not the bytes: a failed
   * comparison of the megabyte filler would print a diff the test runner takes minutes to render).
   */
  const snapshot = (dir: string): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (!e.isFile()) continue;
      const bytes = fs.readFileSync(path.join(e.parentPath, e.name));
      out[path.relative(dir, path.join(e.parentPath, e.name))] = `${bytes.length} ${createHash('sha256').update(bytes).digest('hex')}`;
    }
    return out;
  };

  const OUTPUTS = [
    { input: 'in.jsonl', out: 'out.jsonl' },
    { input: 'in.parquet', out: 'out.parquet' },
    { input: 'shards', out: 'outdir' },
  ];
  for (const o of OUTPUTS) {
    for (const audit of ['removed.tsv', 'removed.jsonl.gz', 'removed.parquet']) {
      for (const fullSide of ['audit', 'output'] as const) {
        it(`${o.out}, ${audit}: the disk of the ${fullSide} is full`, async (t) => {
          if (!mounted) return t.skip('cannot mount a tmpfs here (needs root)');
          for (const f of fs.readdirSync(full)) fs.rmSync(path.join(full, f), { recursive: true, force: true });
          const work = path.join(base, `w-${o.out}-${audit}-${fullSide}`);
          fs.mkdirSync(work);
          const outDir = fullSide === 'output' ? full : work;
          const auditDir = fullSide === 'audit' ? full : work;
          const out = path.join(outDir, o.out);
          if (o.out === 'outdir') {
            fs.mkdirSync(out);
            fs.writeFileSync(path.join(out, 'p0.jsonl'), 'old\n');
          } else fs.writeFileSync(out, 'old\n');
          fs.writeFileSync(path.join(auditDir, audit), 'old audit\n');
          try {
            fs.writeFileSync(path.join(full, 'filler'), Buffer.alloc(1 << 20));
          } catch {
            // full now
          }
          const before = { out: snapshot(outDir), audit: snapshot(auditDir) };
          const r = await cliInProcess(['dedup', path.join(base, o.input), '--output', 'dedup', '--out', out, '--removed', path.join(auditDir, audit), '-q']);
          assert.notEqual(r.code, 0, 'the run must fail');
          assert.match(r.stderr, /ENOSPC/);
          assert.doesNotMatch(r.stderr, /\n\s+at /);
          assert.deepEqual(snapshot(outDir), before.out, 'the output directory is as it was');
          assert.deepEqual(snapshot(auditDir), before.audit, 'the audit directory is as it was');
        });
      }
    }
  }
});
