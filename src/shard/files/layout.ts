/**
 * How a job's shards are laid out before it runs: consecutive shards grouped into tasks of about
 * {@link TASK_BYTES} (`JobSpec.groups`), and their output names relative to the deepest directory
 * holding them all (which `neardup dedup` over several inputs uses too).
 * @module
 */
import path from 'node:path';

/** Bytes of input that one task of a per-shard stage reads at most, unless one shard alone is larger. */
export const TASK_BYTES = 64 * 2 ** 20;

/** Groups of consecutive shards of at most {@link TASK_BYTES} together (a larger shard alone). */
export function groupShards(sizes: readonly number[], limit = TASK_BYTES): number[] {
  const groups = [0];
  let bytes = 0;
  for (let s = 0; s < sizes.length; s++) {
    if (s > groups.at(-1)! && bytes + sizes[s]! > limit) {
      groups.push(s);
      bytes = 0;
    }
    bytes += sizes[s]!;
  }
  groups.push(sizes.length);
  return groups;
}

/** Output names for shards: their paths relative to the deepest directory holding them all. */
export function outputNames(paths: readonly string[]): string[] {
  if (paths.length === 0) return [];
  const dirs = paths.map((p) => path.dirname(p).split(path.sep));
  let common = dirs[0]!;
  for (const d of dirs) {
    let i = 0;
    while (i < common.length && i < d.length && common[i] === d[i]) i++;
    common = common.slice(0, i);
  }
  const base = common.join(path.sep) || path.sep;
  return paths.map((p) => path.relative(base, p));
}
