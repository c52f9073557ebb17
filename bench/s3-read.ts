/**
 * Read rate from a local S3-compatible server (s3rver, a devDependency, started here on a loopback
 * port) against a local file: the same bytes, read by neardup's S3 reader (8 MiB ranged GETs, 4 in
 * flight, written to a spool file) and by a plain file read; requests per object counted.
 *
 *   npm run build && node dist/bench/s3-read.js [--mb 256] [--shard-mb 64]
 */
import { spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { S3Client, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3Download, s3Requests, s3Size, setS3Endpoint } from '../src/io/s3/client.js';
import { freePort } from './util.js';

const { values } = parseArgs({ options: { mb: { type: 'string', default: '256' }, 'shard-mb': { type: 'string', default: '64' } } });
const total = Number(values.mb) * 2 ** 20;
const shard = Number(values['shard-mb']) * 2 ** 20;

const dir = mkdtempSync(path.join(os.tmpdir(), 'neardup-s3bench-'));
const port = await freePort();
const bin = path.join(path.dirname(createRequire(import.meta.url).resolve('s3rver/package.json')), 'bin/s3rver.js');
const server = spawn(process.execPath, [bin, '-d', path.join(dir, 'data'), '-a', '127.0.0.1', '-p', String(port), '--silent', '--configure-bucket', 'bench'], {
  stdio: 'ignore',
});
process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const endpoint = `http://127.0.0.1:${port}`;
for (let up = false; !up;) {
  up = await new Promise<boolean>((r) => {
    const c = net.connect(port, '127.0.0.1', () => (c.end(), r(true)));
    c.on('error', () => r(false));
  });
  if (!up) await new Promise((r) => setTimeout(r, 50));
}
setS3Endpoint(endpoint);
const client = new S3Client({ endpoint, forcePathStyle: true, region: 'us-east-1' });

// Shards of JSON lines (text compresses; the server stores bytes as they are).
const line = Buffer.from(JSON.stringify({ id: 'x', text: 'lorem ipsum dolor sit amet '.repeat(20) }) + '\n');
const body = Buffer.alloc(shard);
for (let o = 0; o < shard; o += line.length) line.copy(body, o);
const shards = Math.ceil(total / shard);
const local = path.join(dir, 'shard.jsonl');
writeFileSync(local, body);
for (let s = 0; s < shards; s++) await client.send(new PutObjectCommand({ Bucket: 'bench', Key: `in/part-${s}.jsonl`, Body: body }));

async function timed(what: string, run: () => Promise<void>): Promise<void> {
  const before = s3Requests.count;
  const t0 = performance.now();
  await run();
  const s = (performance.now() - t0) / 1000;
  const req = s3Requests.count - before;
  console.log(
    `${what.padEnd(42)} ${((shards * shard) / 1e6 / s).toFixed(0).padStart(5)} MB/s  ${s.toFixed(2)} s${
      req ? `  ${req} requests (${(req / shards).toFixed(0)} per ${values['shard-mb']} MiB shard)` : ''
    }`,
  );
}

console.log(`${shards} shards of ${values['shard-mb']} MiB, Node ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(1)}`);
for (let round = 0; round < 2; round++) {
  await timed('local file (createReadStream, 1 MiB buffers)', async () => {
    for (let s = 0; s < shards; s++) for await (const _ of createReadStream(local, { highWaterMark: 1 << 20 })) void _;
  });
  await timed('s3rver: HEAD + 8 MiB ranged GETs to spool', async () => {
    for (let s = 0; s < shards; s++) {
      const url = `s3://bench/in/part-${s}.jsonl`;
      await s3Download(url, (await s3Size(url))!, path.join(dir, 'spool'));
    }
  });
}
client.destroy();
server.kill();
rmSync(dir, { recursive: true, force: true });
