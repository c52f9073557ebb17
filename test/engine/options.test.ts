/**
 * A user-visible option of the engine is defined in one place (src/engine/options.ts) and what each
 * route does with it in one table per route (src/engine/routes.ts): a harmless option added to the
 * table here reaches `neardup dedup` and the job commands, every route accepts it or refuses it by
 * name (exit 2), and `--help` marks the routes that refuse it. Also: every default written once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ENGINE_DEFAULTS, ENGINE_OPTIONS, intParser, type EngineOptionDef } from '../../src/engine/options.js';
import { ROUTES, ROUTE_NAMES, refusalOf, routeMarks, supportOf, type Support } from '../../src/engine/routes.js';
import { createProgram, runProgram } from '../../src/cli/program.js';
import { dedupCommand } from '../../src/cli/dedup/command.js';
import { jobCommand } from '../../src/cli/job/command.js';
import { indexCommand } from '../../src/cli/index/command.js';
import { dedup, DEDUP_DEFAULTS } from '../../src/dedup/dedup.js';
import { resolveManifest } from '../../src/online/manifest.js';
import { chooseBands } from '../../src/lsh/params.js';
import { repoRoot } from '../helpers.js';

/** Runs `neardup ...args` in this process: exit code, stdout (help) and what the error path wrote. */
async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const program = createProgram();
  program.addCommand(dedupCommand()).addCommand(jobCommand()).addCommand(indexCommand());
  let stderr = '';
  let stdout = '';
  program.configureOutput({ writeOut: (s) => void (stdout += s) });
  for (const c of program.commands) {
    c.configureOutput({ writeOut: (s) => void (stdout += s) });
    for (const s of c.commands) s.configureOutput({ writeOut: (x) => void (stdout += x) });
  }
  const sink = { write: (s: string) => ((stderr += s), true) } as unknown as NodeJS.WritableStream;
  const code = await runProgram(program, ['node', 'neardup', ...args], sink);
  return { code, stdout, stderr };
}

/** A harmless option: it parses a small integer and changes nothing. */
const PROBE: EngineOptionDef = {
  name: 'probeWidth',
  group: 'kind',
  flags: '--probe-width <n>',
  help: 'a harmless option of this test',
  parse: intParser('probe-width', 1, 9),
};

/** Adds PROBE to the table (and `support` to route tables) for the length of `fn`. */
async function withProbe(support: Partial<Record<keyof typeof ROUTES, Support>>, fn: () => Promise<void>): Promise<void> {
  ENGINE_OPTIONS.push(PROBE);
  for (const [route, s] of Object.entries(support)) ROUTES[route as keyof typeof ROUTES].options[PROBE.name] = s;
  try {
    await fn();
  } finally {
    ENGINE_OPTIONS.splice(ENGINE_OPTIONS.indexOf(PROBE), 1);
    for (const route of ROUTE_NAMES) delete ROUTES[route].options[PROBE.name];
  }
}

function corpus(): { dir: string; file: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-engine-options-'));
  const file = path.join(dir, 'docs.txt');
  fs.writeFileSync(
    file,
    ['the quick brown fox jumps over the lazy dog', 'the quick brown fox jumps over the lazy dog!', 'something else entirely, nothing alike'].join('\n') + '\n',
  );
  return { dir, file };
}

test('an option added to the engine table: every route accepts it or refuses it by name with exit 2, with no other edit', async () => {
  const { dir, file } = corpus();
  await withProbe({}, async () => {
    // In one process: memory, streamed, --exact (nothing to change there) and --against take it.
    for (const extra of [[], ['--stream'], ['--exact'], ['--against', file]]) {
      const r = await run(['dedup', file, '--probe-width', '3', '-q', '--out', path.join(dir, 'out.tsv'), ...extra]);
      assert.equal(r.code, 0, `${extra.join(' ')}: ${r.stderr}`);
    }
    // Its validator is the table's: a bad value is a usage error naming it.
    const bad = await run(['dedup', file, '--probe-width', '12', '-q']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /probe-width must be an integer from 1 to 9, got "12"/);
    // A sharded job does not implement an option it does not list: refused by name, exit 2, nothing planned.
    const job = await run(['job', 'plan', file, '--work-dir', path.join(dir, 'job'), '--probe-width', '3', '-q']);
    assert.equal(job.code, 2, job.stderr);
    assert.match(job.stderr, /--probe-width is not supported by sharded jobs: sharded jobs do not implement it/);
    assert.ok(!fs.existsSync(path.join(dir, 'job', 'job.json')));
    // The online index takes only the options its table lists: --probe-width is no option of it.
    const online = await run(['index', 'add', file, '--store', 'memory', '--probe-width', '3', '-q']);
    assert.equal(online.code, 2, online.stderr);
    assert.match(online.stderr, /--probe-width/);
    assert.equal(supportOf('online', PROBE.name), ROUTES.online.otherwise);
  });
});

test('the route tables decide: a route that refuses the option names it (exit 2), one that honours some values says which', async () => {
  const { dir, file } = corpus();
  const support = {
    against: { no: 'probes are not taken across two inputs' },
    exact: { only: ['1'], why: 'exact copies have width 1' },
    stream: { only: ['1', '2'], why: 'the stream holds two' },
    job: 'yes' as const,
  };
  await withProbe(support, async () => {
    const out = path.join(dir, 'out.tsv');
    const against = await run(['dedup', file, '--against', file, '--probe-width', '3', '-q', '--out', out]);
    assert.equal(against.code, 2);
    assert.match(against.stderr, /--probe-width is not supported with --against: probes are not taken across two inputs/);
    const exact = await run(['dedup', file, '--exact', '--probe-width', '3', '-q', '--out', out]);
    assert.equal(exact.code, 2);
    assert.match(exact.stderr, /--probe-width 3 is not supported with --exact: exact copies have width 1/);
    assert.equal((await run(['dedup', file, '--exact', '--probe-width', '1', '-q', '--out', out])).code, 0);
    const stream = await run(['dedup', file, '--stream', '--probe-width', '3', '-q', '--out', out]);
    assert.equal(stream.code, 2);
    assert.match(stream.stderr, /--probe-width 3 is not supported streamed: the stream holds two/);
    assert.equal((await run(['dedup', file, '--probe-width', '3', '-q', '--out', out])).code, 0);
    // A job that honours it plans.
    const job = await run(['job', 'plan', file, '--work-dir', path.join(dir, 'job'), '--probe-width', '3', '-q']);
    assert.equal(job.code, 0, job.stderr);
    // --help marks the routes that do not take every value.
    const help = (await run(['dedup', '--help'])).stdout.replace(/\s+/g, ' ');
    assert.match(help, /--probe-width <n> a harmless option of this test \[streamed: 1 or 2 only; with --exact: 1 only; with --against: not taken\]/);
    assert.equal(routeMarks(PROBE.name, ['memory', 'job']), '');
  });
});

test('the route tables give the CLI its refusals word for word', () => {
  assert.equal(
    refusalOf('job', { name: 'measure', flag: '--measure', value: 'containment' }),
    '--measure containment is not supported by sharded jobs: sharded jobs measure Jaccard similarity; containment needs the exact join of one process (neardup dedup --measure containment)',
  );
  assert.equal(refusalOf('job', { name: 'measure', flag: '--measure', value: 'jaccard' }), undefined);
  assert.equal(
    refusalOf('against', { name: 'clusterMode', flag: '--cluster-mode', value: 'centre' }),
    '--cluster-mode centre does not apply with --against: it writes no clusters',
  );
  assert.equal(
    refusalOf('exact', { name: 'buckets', flag: '--buckets', value: 4 }),
    '--exact finds identical documents: it takes no --measure, --candidates, --buckets, --cluster-mode or --representative',
  );
  assert.equal(refusalOf('memory', { name: 'measure', flag: '--measure', value: 'containment' }), undefined);
});

test('every default is written once: the library, the index, the banding and the CLI read ENGINE_DEFAULTS', async () => {
  assert.deepEqual(DEDUP_DEFAULTS, { threshold: ENGINE_DEFAULTS.threshold, verify: ENGINE_DEFAULTS.verify, maxPairs: ENGINE_DEFAULTS.maxPairs });
  assert.equal(resolveManifest({}).threshold, ENGINE_DEFAULTS.threshold);
  assert.equal(resolveManifest({}).minhash.numPerm, ENGINE_DEFAULTS.numPerm);
  assert.equal(chooseBands(ENGINE_DEFAULTS.threshold, ENGINE_DEFAULTS.numPerm).recallAtThreshold >= ENGINE_DEFAULTS.minRecall, true);
  assert.equal(dedup(['a b c d e f', 'a b c d e f']).bands.threshold, ENGINE_DEFAULTS.threshold);
  const help = (await run(['dedup', '--help'])).stdout.replace(/\s+/g, ' ');
  assert.match(help, new RegExp(`--threshold <t> .*?default: ${ENGINE_DEFAULTS.threshold}\\)`));
  assert.ok(help.includes(`(default ${ENGINE_DEFAULTS.maxPairs}, ~40 bytes each)`));
  // No 0.8 threshold default written anywhere else in src/ (examples in help texts aside).
  const hits: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts') && !p.includes(`${path.sep}engine${path.sep}`)) {
        for (const line of fs.readFileSync(p, 'utf8').split('\n')) {
          const code = line.trim();
          // Comments and the help texts' examples (`$ neardup params --threshold 0.8`) are not defaults.
          if (code.startsWith('*') || code.startsWith('/*') || code.startsWith('//') || code.includes('$ neardup')) continue;
          if (/thresh.*\b0\.8\b/i.test(code)) hits.push(`${p}: ${code}`);
        }
      }
    }
  };
  walk(path.join(repoRoot, 'src'));
  assert.deepEqual(hits, []);
});
