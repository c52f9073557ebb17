/**
 * Refusing an output path that is the same file as an input (or as another output): writing it
 * would replace the data being read. Files are compared by device and inode, so symbolic links,
 * hard links and other spellings of one path (`./a.tsv`, `dir/../a.tsv`) are all caught.
 * @module
 */
import { promises as fsp } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from './errors.js';

/** A file the command reads or writes, with the option that names it (for the message). */
export interface NamedPath {
  /** `input`, `--out`, `--data`, `--store`… */
  what: string;
  /** The path as given; undefined or `-` (standard input/output) is never an alias. */
  path: string | undefined;
}

async function identity(path: string | undefined): Promise<string | undefined> {
  if (path === undefined || path === '-' || path === '') return undefined;
  try {
    const st = await fsp.stat(path);
    // Devices and FIFOs (/dev/stdout) may legitimately be both read and written.
    if (!st.isFile()) return undefined;
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined; // does not exist yet: cannot alias anything
  }
}

/**
 * Throws a {@link UsageError} (exit 2) when an output is the same file as an input or as another
 * output. Call it before anything is written.
 */
export async function refuseAliasedOutputs(outputs: NamedPath[], inputs: NamedPath[]): Promise<void> {
  // A file that does not exist yet (a SQLite store about to be created) is compared by its path.
  const byPath = (p: string | undefined) => (p && p !== '-' ? `path:${resolve(p)}` : undefined);
  const ins = await Promise.all(inputs.map(async (p) => ({ p, id: (await identity(p.path)) ?? byPath(p.path) })));
  const seen: { p: NamedPath; id: string }[] = [];
  for (const o of outputs) {
    // Two outputs on one path that does not exist yet: the second would replace the first.
    const twin = o.path && o.path !== '-' ? outputs.find((x) => x !== o && x.path && x.path !== '-' && resolve(x.path) === resolve(o.path!)) : undefined;
    if (twin) throw new UsageError(`${twin.what} and ${o.what} are the same file (${o.path}): give two different files`);
    const id = (await identity(o.path)) ?? byPath(o.path);
    if (id === undefined) continue;
    const clash = ins.find((i) => i.id === id) ?? seen.find((s) => s.id === id);
    if (clash) {
      const how = clash.p.path === o.path ? '' : ` (${o.path} and ${clash.p.path} are links to one file)`;
      throw new UsageError(`${o.what} ${o.path} is the same file as ${clash.p.what} ${clash.p.path}${how}: refusing to overwrite it; write to another file`);
    }
    seen.push({ p: o, id });
  }
}

/** The file behind a `sqlite:PATH` store spec, as a path the alias check can compare. */
export function storeFile(spec: string | undefined): string | undefined {
  return spec?.startsWith('sqlite:') ? spec.slice('sqlite:'.length) : undefined;
}
