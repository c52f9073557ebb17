/**
 * Loading the packages behind optional formats (Parquet, zstd) on first use, so a run that never
 * touches those formats never loads them, and a missing package is named in the error.
 * @module
 */
import { UsageError } from './errors.js';

const cache = new Map<string, Promise<unknown>>();

/**
 * Imports `name` once. When it is not installed, throws a {@link UsageError} that names the package
 * and what needs it, e.g. `reading Parquet needs the npm package "hyparquet" (npm install hyparquet)`.
 */
export function loadPackage<T>(name: string, purpose: string): Promise<T> {
  let p = cache.get(name);
  if (!p) {
    p = import(name).catch((e: NodeJS.ErrnoException) => {
      cache.delete(name);
      if (e?.code === 'ERR_MODULE_NOT_FOUND' || e?.code === 'MODULE_NOT_FOUND') {
        throw new UsageError(`${purpose} needs the npm package "${name}", which is not installed (npm install ${name})`);
      }
      throw e;
    });
    cache.set(name, p);
  }
  return p as Promise<T>;
}
