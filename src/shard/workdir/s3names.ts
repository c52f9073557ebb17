/**
 * What messages of a task on a work dir in object storage say instead of its local spool's paths:
 * the objects' names (`s3://…`), in errors and in the markers they commit.
 * @module
 */
import { InputError } from '../../common/errors.js';

/** Local path → storage name pairs, longest local path first: what messages say instead of the spool's paths. */
export type Names = [string, string][];

export function display(text: string, names: Names): string {
  for (const [local, name] of names) if (text.includes(local)) text = text.split(local).join(name);
  return text;
}

/** The error with the spool's paths replaced by the storage names (its class, and so its exit code, kept). */
export function translated(e: unknown, names: Names): unknown {
  if (!(e instanceof Error)) return e;
  e.message = display(e.message, names);
  if (e instanceof InputError) Object.assign(e, { file: display(e.file, names), reason: display(e.reason, names) });
  return e;
}

/** `v` with every string in it translated: markers keep messages (a skipped shard's error) that must name the objects. */
export function mapStrings<T>(v: T, names: Names): T {
  if (typeof v === 'string') return display(v, names) as T;
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, names)) as T;
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mapStrings(x, names)])) as T;
  return v;
}
