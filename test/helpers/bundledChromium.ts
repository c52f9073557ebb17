/**
 * Test helper: the Chromium that ships inside the @sparticuz/chromium npm package (a devDependency),
 * so the browser tests run on a machine with only Node. The package's own `executablePath()`
 * unpacks to a fixed /tmp path and answers "done" as soon as that path exists, which races when two
 * test files start at once; here each file is unpacked under a temporary name and renamed into
 * place, so concurrent test processes never see a half-written binary.
 */
import { createRequire } from 'node:module';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';

/** Where the bundled browser is, and the environment it needs (its own NSS libraries). */
export interface BundledChromium {
  executablePath: string;
  env: Record<string, string>;
}

/**
 * Unpacks the bundled Chromium (once per machine and package version) and returns its path, or
 * undefined with the reason when the package is not installed.
 */
export function bundledChromium(): BundledChromium | { missing: string } {
  const require = createRequire(import.meta.url);
  let entry: string;
  try {
    entry = require.resolve('@sparticuz/chromium');
  } catch {
    return { missing: 'the @sparticuz/chromium package is not installed (npm ci installs it as a devDependency)' };
  }
  // Its exports map hides package.json: walk up from the entry point to the package directory.
  let pkgDir = path.dirname(entry);
  while (!existsSync(path.join(pkgDir, 'bin/chromium.br')) && path.dirname(pkgDir) !== pkgDir) pkgDir = path.dirname(pkgDir);
  const pkgJson = path.join(pkgDir, 'package.json');
  const version = (JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string }).version;
  const dir = path.join(os.tmpdir(), `neardup-chromium-${version}`);
  const exe = path.join(dir, 'chromium');
  const lib = path.join(dir, 'lib');
  mkdirSync(dir, { recursive: true });
  if (!existsSync(exe)) {
    const tmp = `${exe}.${process.pid}.partial`;
    writeFileSync(tmp, brotliDecompressSync(readFileSync(path.join(pkgDir, 'bin/chromium.br'))));
    chmodSync(tmp, 0o755);
    renameSync(tmp, exe);
  }
  // NSS, NSPR and expat built for the bundled binary: a bare Linux (only Node) lacks them.
  if (!existsSync(path.join(lib, '.complete'))) {
    const tmpLib = `${lib}.${process.pid}.partial`;
    untar(brotliDecompressSync(readFileSync(path.join(pkgDir, 'bin/al2023.tar.br'))), tmpLib);
    writeFileSync(path.join(tmpLib, 'lib', '.complete'), '');
    try {
      renameSync(path.join(tmpLib, 'lib'), lib);
    } catch {
      // Another test process renamed its copy first; theirs is complete, ours is dropped.
    }
    rmSync(tmpLib, { recursive: true, force: true });
  }
  const ld = process.env.LD_LIBRARY_PATH ? `${lib}:${process.env.LD_LIBRARY_PATH}` : lib;
  return { executablePath: exe, env: { LD_LIBRARY_PATH: ld } };
}

/** Extracts the regular files and directories of a ustar archive into `dest`. */
function untar(tar: Buffer, dest: string): void {
  let off = 0;
  while (off + 512 <= tar.length) {
    const header = tar.subarray(off, off + 512);
    if (header.every((b) => b === 0)) break;
    const field = (start: number, len: number) => header.subarray(start, start + len).toString('utf8').replace(/\0.*$/s, '');
    const name = [field(345, 155), field(0, 100)].filter((s) => s).join('/');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1) || '0';
    const body = tar.subarray(off + 512, off + 512 + size);
    const target = path.join(dest, name);
    if (!target.startsWith(dest + path.sep)) throw new Error(`tar entry outside the destination: ${name}`);
    if (type === '5') mkdirSync(target, { recursive: true });
    else if (type === '0') {
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, body, { mode: 0o755 });
    }
    off += 512 + Math.ceil(size / 512) * 512;
  }
}
