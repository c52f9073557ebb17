/**
 * Named indexes kept in one directory (`neardup serve --indexes DIR`, `neardup index create|drop|list`):
 * each has its own store, parameters and optional bearer token. `DIR/indexes.json` lists them (the
 * token as its SHA-256 only); an index's store is `DIR/NAME.db` (SQLite), `DIR/NAME/` (the file
 * store) or `memory`. The list is
 * replaced atomically (a temp file renamed over it), so a crash leaves the old list or the new one.
 * An index is opened on first use and closed when dropped or when the registry closes; a drop waits
 * for the requests using the index (at most `drainMs`) before closing it and deleting its files.
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { NearDupIndex } from '../nearDupIndex.js';
import { withTextSets } from '../manifest.js';
import type { NearDupIndexOptions } from '../types.js';
import { ENGINE_DEFAULTS } from '../../engine/options.js';
import { bearerTokenProblem } from '../../common/bearer.js';

/** The format of `indexes.json`. */
export const REGISTRY_FORMAT = 'neardup-indexes';
/** The version of `indexes.json` written; other versions are refused. */
export const REGISTRY_VERSION = 1;
/** File name of the list inside the registry directory. */
export const REGISTRY_FILE = 'indexes.json';
/** What a name may be: lower case (two names never share a file on a case-insensitive disk), 1–64 characters. */
export const INDEX_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * Where a named index keeps its documents: a SQLite file `DIR/NAME.db` (`sqlite`), a file store
 * `DIR/NAME/` (`file`, src/store/file/), or memory (lost on restart).
 */
export type NamedStore = 'sqlite' | 'file' | 'memory';

/** The parameters a named index is created with (those of {@link NearDupIndexOptions} that describe the index). */
export type NamedIndexOptions = Pick<
  NearDupIndexOptions,
  'threshold' | 'shingle' | 'k' | 'numPerm' | 'bands' | 'rows' | 'minRecall' | 'verify' | 'signatureBits' | 'forest' | 'ensemble' | 'ttl' | 'setSource'
>;

/** One entry of the list. */
export interface NamedIndexEntry {
  /** Where its documents are. */
  store: NamedStore;
  /** What it was created with. */
  options: NamedIndexOptions;
  /** SHA-256 (hex) of its bearer token; absent: the server's token, or none, guards it. */
  tokenSha256?: string;
  /** When it was created (ISO 8601). */
  created: string;
}

/** What {@link IndexRegistry.list} says of one index. */
export interface NamedIndexInfo {
  name: string;
  store: NamedStore;
  /** Its Jaccard threshold. */
  threshold: number;
  /** Whether it has a token of its own. */
  token: boolean;
  created: string;
}

/** What {@link IndexRegistry.create} takes besides the name. */
export interface CreateIndexOptions {
  /** Default `file` (the store a local path gets). */
  store?: NamedStore;
  /** Default: the index defaults ({@link NearDupIndexOptions}). */
  options?: NamedIndexOptions;
  /** Its own bearer token; blank is refused (it would guard nothing), and one no client can send (`bearerTokenProblem`). Default: none. */
  token?: string;
}

/** A name already taken: HTTP 409, exit 2. */
export class IndexExistsError extends Error {}

interface RegistryFile {
  format: string;
  version: number;
  indexes: Record<string, NamedIndexEntry>;
}

interface Open {
  index: Promise<NearDupIndex>;
  users: number;
  idle?: () => void;
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/** A RangeError unless `name` is a valid index name. */
export function checkIndexName(name: string): void {
  if (!INDEX_NAME.test(name))
    throw new RangeError(`index name "${name}" is not valid: 1 to 64 characters, lower-case letters, digits, "-" and "_", starting with a letter or digit`);
}

/**
 * A new registry is made only in an empty directory (hidden names, such as its lock, aside): its
 * indexes are named files and directories, which would take the names of the files there (an index
 * named `lock` or `table` in a file store's directory made that store fail to open).
 */
async function refuseOccupiedDirectory(dir: string): Promise<void> {
  const names = (await fsp.readdir(dir).catch(() => [] as string[])).filter((n) => !n.startsWith('.')).sort();
  if (names.length === 0) return;
  throw new RangeError(
    `${dir} holds other files (${names.slice(0, 3).join(', ')}${
      names.length > 3 ? ', …' : ''
    }) and no ${REGISTRY_FILE}: a new index registry is made in an empty or new directory`,
  );
}

/** The named indexes of one directory. Open with {@link IndexRegistry.open}. */
export class IndexRegistry {
  private readonly open = new Map<string, Open>();
  private readonly creating = new Set<string>();
  private writes: Promise<void> = Promise.resolve();

  private constructor(
    /** The registry directory. */
    readonly dir: string,
    private entries: Record<string, NamedIndexEntry>,
    private readonly drainMs: number,
  ) {}

  /**
   * Opens the registry in `dir`, creating the directory and an empty list when `create` (default
   * true). A list of another format or version, or one that does not parse, is a RangeError naming the file.
   */
  static async open(dir: string, o: { create?: boolean; drainMs?: number } = {}): Promise<IndexRegistry> {
    const file = path.join(dir, REGISTRY_FILE);
    let text: string | undefined;
    try {
      text = await fsp.readFile(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      if (o.create === false)
        throw new RangeError(`no index registry at ${dir} (${REGISTRY_FILE} is missing; \`neardup index create NAME --indexes ${dir}\` makes one)`);
    }
    if (text === undefined) await refuseOccupiedDirectory(dir);
    const reg = new IndexRegistry(dir, text === undefined ? {} : parseRegistry(text, file), o.drainMs ?? 10_000);
    if (text === undefined) {
      await fsp.mkdir(dir, { recursive: true });
      await reg.save();
    }
    return reg;
  }

  /** The indexes, by name. */
  list(): NamedIndexInfo[] {
    return Object.keys(this.entries)
      .sort()
      .map((name) => infoOf(name, this.entry(name)!));
  }

  /** One index's description, or undefined. */
  info(name: string): NamedIndexInfo | undefined {
    const e = this.entry(name);
    return e && infoOf(name, e);
  }

  /**
   * Creates an index: a RangeError for a bad name, token or parameters (nothing is left behind), an
   * {@link IndexExistsError} when the name is taken.
   */
  async create(name: string, o: CreateIndexOptions = {}): Promise<NamedIndexInfo> {
    checkIndexName(name);
    const problem = o.token === undefined ? undefined : bearerTokenProblem(o.token);
    if (problem === 'is empty') throw new RangeError(`the token of index "${name}" is empty: give the bearer token its clients must send, or none`);
    if (problem) throw new RangeError(`the token of index "${name}" ${problem}`);
    if (this.entry(name) || this.creating.has(name)) throw new IndexExistsError(`index "${name}" exists`);
    this.creating.add(name);
    try {
      const store = o.store ?? 'file';
      // The service keeps each added text in `meta.text`: an index that verifies exactly need not keep the sets too.
      const options = withTextSets(o.options ?? {});
      const file = this.pathOf(name, store);
      // Files left by an index dropped while they could not be deleted are not adopted.
      if (file && (await exists(file)))
        throw new IndexExistsError(`index "${name}": ${file} exists but is not in ${REGISTRY_FILE}; remove it or choose another name`);
      let index: NearDupIndex;
      try {
        index = await NearDupIndex.open({ ...options, store: this.specOf(name, store) });
      } catch (e) {
        await this.removeStore(name, store);
        throw e;
      }
      const entry: NamedIndexEntry = {
        store,
        options,
        ...(o.token !== undefined ? { tokenSha256: sha256(o.token).toString('hex') } : {}),
        created: new Date().toISOString(),
      };
      this.entries = { ...this.entries, [name]: entry };
      this.open.set(name, { index: Promise.resolve(index), users: 0 });
      await this.save();
      return infoOf(name, entry);
    } finally {
      this.creating.delete(name);
    }
  }

  /**
   * The index `name` for one use, opened on first use, or undefined when there is none. Call
   * `release` when done: a drop waits for the uses in progress.
   */
  async acquire(name: string): Promise<{ index: NearDupIndex; release: () => void } | undefined> {
    const e = this.entry(name);
    if (!e) return undefined;
    let o = this.open.get(name);
    if (!o) {
      o = { index: this.openEntry(name, e), users: 0 };
      this.open.set(name, o);
      o.index.catch(() => this.open.delete(name));
    }
    const held = o;
    held.users++;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      if (--held.users === 0) held.idle?.();
    };
    try {
      return { index: await held.index, release };
    } catch (err) {
      release();
      throw err;
    }
  }

  /** Opens a listed index; a file store whose file is gone is an error, never a new empty index. */
  private async openEntry(name: string, e: NamedIndexEntry): Promise<NearDupIndex> {
    const file = this.pathOf(name, e.store);
    if (file && !(await exists(file)))
      throw new Error(`index "${name}": its store ${file} is missing (deleted outside neardup?): restore it, or drop the index`);
    return NearDupIndex.open({ ...e.options, store: this.specOf(name, e.store) });
  }

  /**
   * Whether `given` opens index `name`: true when it is the index's own token, false when it is not
   * or the index has none, undefined for an unknown name.
   */
  tokenMatches(name: string, given: string): boolean | undefined {
    const e = this.entry(name);
    if (!e) return undefined;
    if (!e.tokenSha256 || !given) return false;
    return timingSafeEqual(sha256(given), Buffer.from(e.tokenSha256, 'hex'));
  }

  /** Whether index `name` has a token of its own. */
  hasToken(name: string): boolean {
    return this.entry(name)?.tokenSha256 !== undefined;
  }

  /** The indexes open in this process, each acquired (release each): what the expiry sweep purges. */
  async acquireOpen(): Promise<{ name: string; index: NearDupIndex; release: () => void }[]> {
    const held = await Promise.all([...this.open.keys()].map(async (name) => ({ name, h: await this.acquire(name).catch(() => undefined) })));
    return held.flatMap(({ name, h }) => (h ? [{ name, ...h }] : []));
  }

  /**
   * Drops index `name`: off the list at once (new requests no longer find it), then, once its uses
   * in progress end (at most `drainMs`), closed and its files deleted. False when there is none.
   */
  async drop(name: string): Promise<boolean> {
    const e = this.entry(name);
    if (!e) return false;
    const rest = { ...this.entries };
    delete rest[name];
    this.entries = rest;
    await this.save();
    const o = this.open.get(name);
    this.open.delete(name);
    if (o) {
      if (o.users > 0) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => ((o.idle = resolve), (timer = setTimeout(resolve, this.drainMs))));
        clearTimeout(timer);
      }
      await (await o.index.catch(() => undefined))?.close();
    }
    await this.removeStore(name, e.store);
    return true;
  }

  /** Closes every open index. */
  async close(): Promise<void> {
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.all(all.map(async (o) => (await o.index.catch(() => undefined))?.close()));
    await this.writes;
  }

  /** Index `name`'s entry: only a valid name the list holds as its own (never `__proto__`, `constructor`…, whatever a URL says). */
  private entry(name: string): NamedIndexEntry | undefined {
    return INDEX_NAME.test(name) && Object.hasOwn(this.entries, name) ? this.entries[name] : undefined;
  }

  /** Where index `name`'s documents are on disk (undefined in memory). */
  private pathOf(name: string, store: NamedStore): string | undefined {
    return store === 'memory' ? undefined : path.join(this.dir, store === 'sqlite' ? `${name}.db` : name);
  }

  private specOf(name: string, store: NamedStore): string {
    return store === 'memory' ? 'memory' : `${store}:${this.pathOf(name, store)!}`;
  }

  /** Deletes index `name`'s files: a SQLite file with its journals, or a file store's directory. */
  private async removeStore(name: string, store: NamedStore): Promise<void> {
    const p = this.pathOf(name, store);
    if (store === 'sqlite') await Promise.all(['', '-wal', '-shm', '-journal'].map((s) => fsp.rm(`${p!}${s}`, { force: true })));
    else if (store === 'file') await fsp.rm(p!, { recursive: true, force: true });
  }

  /** Writes the list: a temp file, flushed, renamed over the old one; one write at a time. */
  private save(): Promise<void> {
    const body: RegistryFile = { format: REGISTRY_FORMAT, version: REGISTRY_VERSION, indexes: this.entries };
    const run = async (): Promise<void> => {
      const file = path.join(this.dir, REGISTRY_FILE);
      const tmp = `${file}.${process.pid}.tmp`;
      const h = await fsp.open(tmp, 'w');
      try {
        await h.writeFile(`${JSON.stringify(body, null, 2)}\n`);
        await h.sync();
      } finally {
        await h.close();
      }
      await fsp.rename(tmp, file);
    };
    this.writes = this.writes.then(run, run);
    return this.writes;
  }
}

function infoOf(name: string, e: NamedIndexEntry): NamedIndexInfo {
  return { name, store: e.store, threshold: e.options.threshold ?? ENGINE_DEFAULTS.threshold, token: e.tokenSha256 !== undefined, created: e.created };
}

function parseRegistry(text: string, file: string): Record<string, NamedIndexEntry> {
  let j: RegistryFile;
  try {
    j = JSON.parse(text) as RegistryFile;
  } catch {
    throw new RangeError(`${file} is not an index registry (not JSON)`);
  }
  if (j?.format !== REGISTRY_FORMAT || typeof j.indexes !== 'object' || j.indexes === null)
    throw new RangeError(`${file} is not an index registry (format "${String(j?.format)}")`);
  if (j.version !== REGISTRY_VERSION) throw new RangeError(`${file} is registry version ${String(j.version)}; this neardup reads version ${REGISTRY_VERSION}`);
  for (const name of Object.keys(j.indexes)) checkIndexName(name);
  return j.indexes;
}

async function exists(file: string): Promise<boolean> {
  return fsp.stat(file).then(
    () => true,
    () => false,
  );
}
