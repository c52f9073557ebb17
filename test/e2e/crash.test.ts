/**
 * Issue 7, crash safety: kill -9 of the CLI mid-run leaves no output that looks complete (an older
 * output stays intact), and kill -9 of `neardup serve` mid-ingest on SQLite loses no acknowledged
 * document (and on the file store and PostgreSQL); `neardup index check` then says the index is consistent (and detects damage).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { openDatabase } from '../../src/store/sqlite/driver.js';
import { mainJs } from '../cliUtil.js';
import { kijijiTexts } from '../helpers/kijiji.js';
import { startPostgres } from '../helpers/postgres.js';
import { needsPostgres } from '../helpers/needs.js';
import { startServe as serveChild } from '../helpers/procs.js';
import { restartUnderWrites } from '../helpers/restartUnderWrites.js';

const texts = kijijiTexts();
const cleanup: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const f of cleanup.reverse()) await f();
});

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'nd-crash-'));
  cleanup.push(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
}

test('CLI: kill -9 at any point leaves the previous output intact and no complete-looking new one', { timeout: 60000 }, async () => {
  const dir = tmp();
  const input = path.join(dir, 'ads.tsv');
  // ~24k ads (Kijiji ×9 with variations): a run of a few seconds.
  const rows = ['id\ttext'];
  for (let r = 0; r < 9; r++) texts.forEach((t, i) => rows.push(`${r}-${i}\t${r % 3 ? t : t + ' ' + r}`));
  fs.writeFileSync(input, rows.join('\n') + '\n');
  const outputs: [string, string[]][] = [
    ['pairs.tsv', []],
    ['unique.tsv', ['--output', 'dedup']],
    ['clusters.jsonl.gz', ['--output', 'clusters']],
  ];
  let killedMidRun = 0;
  const text = (file: string): string => {
    const b = fs.readFileSync(file);
    return (file.endsWith('.gz') && b[0] === 0x1f && b[1] === 0x8b ? gunzipSync(b) : b).toString();
  };
  for (const [name, extra] of outputs) {
    const out = path.join(dir, name);
    // The output of an uninterrupted run: a kill that lands after the rename (the process still
    // exiting) leaves this complete output, which is fine; anything else must be the old file.
    const full = path.join(dir, `full-${name}`);
    const done = spawnSync(process.execPath, [mainJs, 'dedup', input, '--text', 'text', '--id', 'id', '--out', full, '-q', ...extra]);
    assert.equal(done.status, 0, done.stderr?.toString());
    const complete = text(full);
    fs.rmSync(full);
    fs.writeFileSync(out, 'OLD COMPLETE OUTPUT\n');
    for (const delay of [150, 600, 1200]) {
      const child = spawn(process.execPath, [mainJs, 'dedup', input, '--text', 'text', '--id', 'id', '--out', out, ...extra], { stdio: 'ignore' });
      await new Promise((s) => setTimeout(s, delay));
      if (child.exitCode === null) {
        child.kill('SIGKILL');
        killedMidRun++;
      }
      await exited(child);
      const content = text(out);
      if (child.signalCode === 'SIGKILL') {
        assert.ok(
          content === 'OLD COMPLETE OUTPUT\n' || content === complete,
          `${name} after kill -9 at ${delay} ms: neither the old output nor a complete new one`,
        );
      }
      fs.writeFileSync(out, 'OLD COMPLETE OUTPUT\n');
      // Anything else left behind is an unmistakable hidden temp file, or the output's lock (a dead process's: the next run takes it over).
      for (const f of fs.readdirSync(dir)) {
        if (f === 'ads.tsv' || outputs.some(([n]) => n === f)) continue;
        assert.match(f, new RegExp(`^\\.${name.replace(/\./g, '\\.')}\\.(\\d+\\.\\w+\\.tmp|neardup-writing)$`), `unexpected file ${f}`);
        fs.rmSync(path.join(dir, f));
      }
    }
  }
  assert.ok(killedMidRun >= 3, `only ${killedMidRun} runs were killed mid-run`);
});

async function startServe(store: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [mainJs, 'serve', '--store', store, '--port', '0', '-k', '10', '--normalize', 'seed000'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  cleanup.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited(child);
  });
  const url = await new Promise<string>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`serve exited (${code}): ${err}`)));
  });
  return { child, url };
}

/**
 * Runs `serve` on `store`, kills it with SIGKILL while four clients add (single adds and batches
 * of 5), restarts it and checks that every acknowledged document is there, then that `index check`
 * says the store is consistent. Returns the number of acknowledged documents.
 */
async function killMidIngest(store: string): Promise<number> {
  const s1 = await startServe(store);
  const acked: string[] = [];
  let next = 0;
  let stop = false;
  // Four concurrent clients, single adds and batches of 5.
  const client = async () => {
    while (!stop) {
      const i = next;
      const batch = i % 3 === 0;
      next += batch ? 5 : 1;
      const docs = Array.from({ length: batch ? 5 : 1 }, (_, j) => ({ id: `s${i + j}`, text: texts[(i + j) % texts.length]!, meta: { i: i + j } }));
      try {
        const r = await fetch(batch ? `${s1.url}/v1/documents:batch` : `${s1.url}/v1/documents`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(batch ? { documents: docs } : docs[0]),
        });
        if (r.status === 200) {
          await r.json();
          acked.push(...docs.map((d) => d.id));
        }
      } catch {
        return; // the server is gone
      }
    }
  };
  const clients = [client(), client(), client(), client()];
  while (acked.length < 600) await new Promise((s) => setTimeout(s, 20));
  s1.child.kill('SIGKILL');
  await exited(s1.child);
  stop = true;
  await Promise.all(clients);

  const s2 = await startServe(store);
  for (const id of acked) {
    const r = await fetch(`${s2.url}/v1/documents/${id}?fields=meta,text`);
    assert.equal(r.status, 200, `acknowledged ${id} lost`);
    // The server keeps each text (in meta.text, its default); asked for, it comes as a field of its own.
    const k = Number(id.slice(1));
    assert.deepEqual(await r.json(), { meta: { i: k }, text: texts[k % texts.length] });
  }
  s2.child.kill('SIGTERM');
  await exited(s2.child);
  console.log(`# serve kill -9 (${store.split(':')[0]}): ${acked.length} acknowledged documents, all present after restart`);

  const r = spawnSync(process.execPath, [mainJs, 'index', 'check', '--store', store], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /index is consistent/);
  const n = Number(/documents (\d+)/.exec(r.stdout)![1]);
  assert.ok(n >= acked.length, `${n} documents for ${acked.length} acknowledged`);
  return acked.length;
}

test(
  'serve on SQLite: kill -9 mid-ingest, restart: every acknowledged document is there; index check passes, and catches damage',
  { timeout: 60000 },
  async () => {
    const dir = tmp();
    const db = path.join(dir, 'idx.db');
    await killMidIngest(`sqlite:${db}`);

    // Damage: a document loses one posting, another posting points nowhere.
    const d = openDatabase(db);
    d.prepare('DELETE FROM postings WHERE (key, doc) IN (SELECT key, doc FROM postings LIMIT 1)').run();
    d.prepare('INSERT INTO postings (key, doc) VALUES (12345, 99999999)').run();
    d.close();
    let r = spawnSync(process.execPath, [mainJs, 'index', 'check', '--store', `sqlite:${db}`], { encoding: 'utf8' });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /keys do not lead back to it/);
    assert.match(r.stdout, /1 postings point to no document/);
    assert.match(r.stdout, /INCONSISTENT/);
    r = spawnSync(process.execPath, [mainJs, 'index', 'check', '--store', `sqlite:${path.join(dir, 'nope.db')}`], { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /no SQLite index at/);
  },
);

test("serve on the file store: kill -9 mid-ingest, restart (the dead process's lock taken over): every acknowledged document is there; index check passes", {
  timeout: 60000,
}, async () => {
  await killMidIngest(`file:${path.join(tmp(), 'idx')}`);
});

test('serve on PostgreSQL: kill -9 mid-ingest, restart: every acknowledged document is there; index check passes, and catches a row that lost a key', {
  ...needsPostgres(),
  timeout: 60000,
}, async () => {
  const server = await startPostgres();
  cleanup.push(() => server.stop());
  const store = `${server.url}?schema=crash`;
  await killMidIngest(store);
  // Damage: one document's row loses its first key (the GIN index no longer leads to it by it).
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: server.url });
  await c.connect();
  await c.query('UPDATE crash.docs SET keys = keys[2:] WHERE id = (SELECT min(id) FROM crash.docs)');
  await c.end();
  const r = spawnSync(process.execPath, [mainJs, 'index', 'check', '--store', store], { encoding: 'utf8' });
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stdout, /has \d+ keys, the manifest says|keys do not lead back to it/);
  assert.match(r.stdout, /INCONSISTENT/);
  const none = spawnSync(process.execPath, [mainJs, 'index', 'check', '--store', `${server.url}?schema=nope`], { encoding: 'utf8' });
  assert.equal(none.status, 2, none.stdout + none.stderr);
  assert.match(none.stderr, /no index at postgres:\/\/.*schema=nope/);
});

// Issue #48 item 2: a connection that broke while checked out of the pool (the write lock's) had no
// 'error' listener, so a PostgreSQL restart under writes ended `serve` with an unhandled 'error'
// event (a stack trace), and kill -9 of the postmaster took down both serve processes sharing its
// schema. Both ways of taking the server down, two serve processes writing at once.
test(
  'serve on PostgreSQL: the server restarts (immediate shutdown, kill -9 of the postmaster) under writes: both serve processes live on, answer 503 while it is down and recover',
  { ...needsPostgres(), timeout: 180000 },
  async () => {
    const server = await startPostgres();
    cleanup.push(() => server.stop());
    const store = `${server.url}?schema=restart&timeout=500`;
    const serves = [await serveChild(['--store', store, '--purge-interval', '0'])];
    serves.push(await serveChild(['--store', store, '--purge-interval', '0']));
    cleanup.push(async () => void (await Promise.all(serves.map((s) => s.stop()))));
    await restartUnderWrites({
      serves,
      texts,
      signals: ['SIGQUIT', 'SIGKILL'],
      down: (signal) => server.kill(signal as 'SIGQUIT' | 'SIGKILL'),
      up: () => server.restart(),
    });
    for (const [i, s] of serves.entries()) {
      assert.equal(await s.stop(), 0, `serve ${i} stops cleanly: ${s.stderr()}`);
    }
  },
);
