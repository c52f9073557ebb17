/**
 * The one loader of optional packages: the store clients (better-sqlite3, ioredis), the format
 * packages (hyparquet, hyparquet-compressors, hyparquet-writer, fzstd, @bokuweb/zstd-wasm,
 * tinyglobby) and bullmq are loaded on first use, so a run that never needs one never loads it,
 * and a missing one fails with a {@link MissingDependencyError} that names the package and the
 * command that installs it, not a module-resolution stack trace. The CLI exits 1 on it (an
 * environment problem, not a mistake in the command line; docs/cli.md, "Exit codes").
 * @module
 */

/**
 * A feature needs an optional package that is not installed. neardup declares them optional so
 * that installing the library never compiles native code or pulls in what a user does not use;
 * the message names the package and the command that fixes it.
 */
export class MissingDependencyError extends Error {
  override readonly name = 'MissingDependencyError';
  /** The npm package to install. */
  readonly packageName: string;

  /**
   * @param packageName the npm package, e.g. `hyparquet`
   * @param what what needs it, as the subject of "… needs the package", e.g. `reading Parquet`
   */
  constructor(packageName: string, what: string, options?: { cause?: unknown }) {
    super(`${what} needs the package ${packageName}, which is not installed: npm install ${packageName}`, options);
    this.packageName = packageName;
  }
}

/** True when `e` says that the package `name` itself (not something inside it) cannot be found. */
export function isMissingPackage(e: unknown, name: string): boolean {
  const err = e as { code?: string; message?: string };
  return (err?.code === 'ERR_MODULE_NOT_FOUND' || err?.code === 'MODULE_NOT_FOUND') && typeof err.message === 'string' && err.message.includes(`'${name}'`);
}

/**
 * Runs `load` (an `import()` of the package, or of a module of ours that imports it) and turns the
 * package's absence into a {@link MissingDependencyError}. Other failures pass through.
 */
export async function loadOptional<T>(load: () => Promise<T>, packageName: string, what: string): Promise<T> {
  try {
    return await load();
  } catch (e) {
    if (isMissingPackage(e, packageName)) throw new MissingDependencyError(packageName, what, { cause: e });
    throw e;
  }
}

const cache = new Map<string, Promise<unknown>>();

/**
 * Imports the package `name` once (later calls share the promise; a failure is not cached). When it
 * is not installed, throws a {@link MissingDependencyError}, e.g. `reading Parquet needs the package
 * hyparquet, which is not installed: npm install hyparquet`.
 */
export function loadPackage<T>(name: string, purpose: string): Promise<T> {
  let p = cache.get(name);
  if (!p) {
    p = loadOptional(() => import(name) as Promise<unknown>, name, purpose).catch((e: unknown) => {
      cache.delete(name);
      throw e;
    });
    cache.set(name, p);
  }
  return p as Promise<T>;
}
