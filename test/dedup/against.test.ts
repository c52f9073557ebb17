/**
 * `--against` names the reference (#34 item 4, in one process): each matched new document's best
 * reference document (ties: the first) with its similarity, and the summary's counts of new and of
 * reference documents matched. A directory of shards in mixed formats writes, with --against as
 * without it, one output shard per input shard, the same files as `neardup job dedup --against`
 * (those runs in this process, cliIn: they write files; the runs read on standard output are processes).
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { dedupAgainst } from '../../src/dedup/against.js';
import { jsonl, plantedDocs } from '../helpers/shards.js';
import { neardup, tmpDir } from '../cliUtil.js';
import { cliIn } from '../helpers/inProcessCli.js';

const all = plantedDocs(1200, 0.4, 17);
const corpus = all.filter((_, i) => i % 3 !== 0);
// The reference holds one document twice, so that two reference documents tie.
const reference = [...all.filter((_, i) => i % 3 === 0), { ...all[3]!, id: 'd3-copy' }];

test('dedupAgainst: best match is the most similar reference document (ties: the first), with its similarity; both sides counted', () => {
  const r = dedupAgainst(corpus.map((d) => d.text), reference.map((d) => d.text));
  assert.ok(r.pairs.length > 50);
  const best = new Map<number, { b: number; s: number }>();
  for (const p of r.pairs) {
    const cur = best.get(p.a);
    if (!cur || p.similarity > cur.s || (p.similarity === cur.s && p.b < cur.b)) best.set(p.a, { b: p.b, s: p.similarity });
  }
  for (let a = 0; a < corpus.length; a++) {
    const want = best.get(a);
    assert.equal(r.bestMatch[a], want ? want.b : -1, `document ${a}`);
    assert.equal(r.bestSimilarity[a], want ? want.s : -1, `document ${a}`);
  }
  assert.equal(r.matched, best.size);
  assert.equal(r.referenceMatched, new Set(r.pairs.map((p) => p.b)).size);
  // all[3] is reference 1 and its copy is the last reference document: a tie, the first wins.
  const tied = r.pairs.filter((p) => p.b === reference.length - 1);
  assert.ok(tied.length > 0, 'the copied reference document matches something');
  for (const p of tied) assert.notEqual(r.bestMatch[p.a], reference.length - 1, 'ties go to the first reference document');
});

test('CLI: the summary and --json count new documents matched and reference documents matched', () => {
  const dir = tmpDir();
  try {
    fs.writeFileSync(path.join(dir, 'new.jsonl'), jsonl(corpus));
    fs.writeFileSync(path.join(dir, 'old.jsonl'), jsonl(reference));
    const r = dedupAgainst(corpus.map((d) => d.text), reference.map((d) => d.text));
    const human = neardup(['dedup', 'new.jsonl', '--against', 'old.jsonl', '--id-field', 'id', '-o', 'p.tsv'], { cwd: dir });
    assert.equal(human.code, 0, human.stderr);
    assert.match(
      human.stderr,
      new RegExp(`^matched     ${r.matched} of ${corpus.length} documents of new.jsonl are near duplicates of a document of old.jsonl$`, 'm'),
    );
    assert.match(
      human.stderr,
      new RegExp(`^reference   ${r.referenceMatched} of ${reference.length} documents of old.jsonl are near duplicates of a document of new.jsonl$`, 'm'),
    );
    const json = neardup(['dedup', 'new.jsonl', '--against', 'old.jsonl', '--id-field', 'id', '-o', 'p.tsv', '--json'], { cwd: dir });
    const j = JSON.parse(json.stdout) as { matched: number; referenceMatched: number; recall: { verifiedPairs: number } };
    assert.deepEqual([j.matched, j.referenceMatched, j.recall.verifiedPairs], [r.matched, r.referenceMatched, r.pairs.length]);
    // Pairs name the reference document of each match with its similarity.
    const lines = fs.readFileSync(path.join(dir, 'p.tsv'), 'utf8').trim().split('\n');
    assert.equal(lines.length, r.pairs.length);
    assert.deepEqual(lines[0]!.split('\t').slice(0, 2), [corpus[r.pairs[0]!.a]!.id, reference[r.pairs[0]!.b]!.id]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** Every file under `dir` (relative name → bytes). */
function tree(dir: string, rel = ''): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = path.join(rel, e.name);
    if (e.isDirectory()) { for (const [k, v] of tree(dir, r)) out.set(k, v); }
    else out.set(r, fs.readFileSync(path.join(dir, r)));
  }
  return out;
}

test('CLI: --against a directory of mixed shards (JSONL, TSV, .jsonl.gz) writes the output shards of job dedup --against, for dedup and annotate', async () => {
  const dir = tmpDir();
  try {
    const docs = corpus.slice(0, 300);
    const part = [docs.slice(0, 100), docs.slice(100, 200), docs.slice(200)];
    fs.mkdirSync(path.join(dir, 'new'));
    fs.writeFileSync(path.join(dir, 'new', 'a.jsonl'), jsonl(part[0]!));
    fs.writeFileSync(path.join(dir, 'new', 'b.tsv'), 'id\ttext\n' + part[1]!.map((d) => `${d.id}\t${d.text}\n`).join(''));
    fs.writeFileSync(path.join(dir, 'new', 'c.jsonl.gz'), zlib.gzipSync(jsonl(part[2]!)));
    fs.writeFileSync(path.join(dir, 'old.jsonl'), jsonl(reference));
    const opts = ['--id-field', 'id', '--id', 'id'];
    for (const mode of ['dedup', 'annotate']) {
      const one = await cliIn(['dedup', 'new/', '--against', 'old.jsonl', ...opts, '--output', mode, '--out', `d1-${mode}`], { cwd: dir });
      assert.equal(one.code, 0, one.stderr);
      const job = await cliIn([
        'job',
        'dedup',
        'new/',
        '--against',
        'old.jsonl',
        '--local',
        '--work-dir',
        `w-${mode}`,
        ...opts,
        '--output',
        mode,
        '--out-dir',
        `d2-${mode}`,
      ], { cwd: dir });
      assert.equal(job.code, 0, job.stderr);
      const got = tree(path.join(dir, `d1-${mode}`));
      const want = tree(path.join(dir, `d2-${mode}`));
      assert.deepEqual([...got.keys()].sort(), ['_SUCCESS', 'a.jsonl', 'b.tsv', 'c.jsonl.gz'], mode);
      assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort(), mode);
      for (const [k, v] of want) assert.ok(got.get(k)!.equals(v), `${mode}: ${k} differs from job dedup's`);
      const b = fs.readFileSync(path.join(dir, `d1-${mode}`, 'b.tsv'), 'utf8').split('\n');
      if (mode === 'annotate') {
        assert.equal(b[0], 'id\ttext\tcluster\tcluster_size\tduplicate_of\tsimilarity\tkept');
        assert.equal(b.length, part[1]!.length + 2);
      } else assert.ok(b.length < part[1]!.length + 2, 'some TSV rows are near duplicates of the reference');
    }
    // --removed still lists each dropped document with its reference match.
    const audited = await cliIn(['dedup', 'new/', '--against', 'old.jsonl', ...opts, '--output', 'dedup', '--out', 'd3', '--removed', 'removed.tsv'], {
      cwd: dir,
    });
    assert.equal(audited.code, 0, audited.stderr);
    assert.ok(fs.existsSync(path.join(dir, 'd3', '_SUCCESS')));
    const removed = fs.readFileSync(path.join(dir, 'removed.tsv'), 'utf8').trim().split('\n');
    assert.equal(removed.length - 1, dedupAgainst(docs.map((d) => d.text), reference.map((d) => d.text)).matched);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("CLI: --against keeps a file's bytes as the route without it does: BOM and CRLF line ends (a last line without a break gets one in both)", () => {
  const dir = tmpDir();
  try {
    const texts = [
      'the quick brown fox jumps over the lazy dog again and again',
      'something else entirely, about another subject',
      'a third line of its own words here',
    ];
    const body = `\ufeffid\ttext\r\nm0\t${texts[0]}\r\nm1\t${texts[1]}\r\nm2\t${texts[2]}`;
    fs.writeFileSync(path.join(dir, 'new.tsv'), body);
    fs.writeFileSync(path.join(dir, 'ref.jsonl'), jsonl([{ id: 'r0', text: texts[0]! }]));
    const r = neardup(['dedup', 'new.tsv', '--against', 'ref.jsonl', '--id', 'id', '--id-field', 'id', '--output', 'dedup', '-q'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    // The matched record is dropped; every other byte is the input's (the route without --against keeps them alike).
    assert.equal(r.stdout, `\ufeffid\ttext\r\nm1\t${texts[1]}\r\nm2\t${texts[2]}\n`);
    const plain = neardup(['dedup', 'new.tsv', '--id', 'id', '--output', 'dedup', '-q'], { cwd: dir });
    assert.equal(plain.stdout, `${body}\n`, 'without --against nothing is dropped, and the bytes are the same');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
