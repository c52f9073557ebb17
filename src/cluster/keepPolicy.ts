/**
 * Keep policies (`--keep`): which member of a cluster a deduplicated copy keeps and the others
 * point to. The policy never changes the clusters, only the kept member. The same choice runs in
 * one process (over a pass of the input's records) and in the components stage of a sharded job
 * (over the values the sign stage recorded), so both keep the same documents.
 * @module
 */
import { InputError } from '../common/errors.js';
import { KEEP_POLICY_VALUES } from '../engine/options.js';
import { isoDateMs } from '../io/read/isoDate.js';
import type { ReadOptions } from '../io/read/read.js';
export type { KeepPolicy } from '../engine/config.js';

/** A parsed keep policy: how to rank members, and the field it reads. */
export interface KeepRule {
  kind: 'first' | 'longest' | 'shortest' | 'none' | 'source' | 'max' | 'min';
  /** The field or column of `max`/`min`. */
  field?: string;
}

/** The keep policies, as the option's help lists them. */
export const KEEP_POLICIES = KEEP_POLICY_VALUES;

/** Parses a keep policy; throws a RangeError naming the bad value. */
export function parseKeepPolicy(value: string): KeepRule {
  if (value === 'first' || value === 'longest' || value === 'shortest' || value === 'none' || value === 'source') return { kind: value };
  const m = /^(max|min):(.+)$/.exec(value);
  if (m) return { kind: m[1] as 'max' | 'min', field: m[2]! };
  throw new RangeError(`unknown keep policy "${value}" (expected ${KEEP_POLICIES.join(', ')})`);
}

/** True when the policy ranks members by a value read from each record (length or field). */
export function keepNeedsValues(rule: KeepRule): boolean {
  return rule.kind !== 'first' && rule.kind !== 'none' && rule.kind !== 'source';
}

/** The reader options that also read the policy's field (as the record's title). */
export function keepReadOptions(read: ReadOptions, rule: KeepRule): ReadOptions {
  if (rule.field === undefined) return read;
  return { ...read, columns: { ...read.columns, title: rule.field }, fields: { ...read.fields, title: rule.field } };
}

/** Status of a record's value: present, or why not. */
export const ValueStatus = { Ok: 0, Missing: 1, NotNumeric: 2 } as const;
/** One of {@link ValueStatus}'s values. */
export type ValueStatus = (typeof ValueStatus)[keyof typeof ValueStatus];

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;

/**
 * A record's ranking value: `value`, and `lo`, what an integer literal beyond 2^53 has past the
 * double nearest it (`value` + `lo` is the integer exactly; 0 otherwise). Values compare by
 * `value`, then `lo`, so distinct 64-bit integers never tie.
 */
export interface KeepValue {
  value: number;
  lo: number;
  status: ValueStatus;
}

/**
 * The value a policy ranks a record by: its text's length, or its field as a number (an integer
 * literal exactly, see {@link KeepValue}; an ISO date as milliseconds since 1970, UTC when it has no
 * offset). NaN with a status when the field is missing, not a number, or an impossible date.
 */
export function keepValue(rule: KeepRule, text: string, field: string | undefined): KeepValue {
  if (rule.field === undefined) return { value: text.length, lo: 0, status: ValueStatus.Ok };
  if (field === undefined || field.trim() === '') return { value: NaN, lo: 0, status: ValueStatus.Missing };
  const s = field.trim();
  let v = NaN;
  let lo = 0;
  if (NUMBER.test(s)) {
    v = Number(s);
    if (INTEGER.test(s) && Number.isFinite(v) && !Number.isSafeInteger(v)) lo = Number(BigInt(s) - BigInt(v));
  } else v = isoDateMs(s);
  return Number.isFinite(v) ? { value: v, lo, status: ValueStatus.Ok } : { value: NaN, lo: 0, status: ValueStatus.NotNumeric };
}

/**
 * The input error for a clustered document whose field the policy cannot rank by, at `line`, or at
 * `position` when one is given (a Parquet row group and row: its "lines" are rows).
 */
export function keepValueError(at: { file: string; line: number | undefined; position?: string }, rule: KeepRule, status: ValueStatus): InputError {
  const { file, line, position } = at;
  const what = status === ValueStatus.Missing ? 'has no value' : 'is not a number or an ISO date';
  return new InputError(
    file,
    position === undefined ? line : undefined,
    `field "${rule.field}" ${what}: --keep ${rule.kind}:${rule.field} ranks the members of its cluster by it`,
    position,
  );
}

/**
 * A reader's error about the policy's field, read as the record's title (an unknown TSV/CSV column,
 * a Parquet column that is not there), reworded to name --keep; other errors unchanged.
 */
export function keepReadError(e: unknown, rule: KeepRule): unknown {
  if (!(e instanceof InputError) || rule.field === undefined || !e.reason.startsWith('unknown title column')) return e;
  return new InputError(e.file, e.line, `--keep ${rule.kind}:${rule.field} names an ${e.reason.replace('title column', 'column')}`, e.position, e.fix);
}

/**
 * The kept member of a cluster: `members` in input order, `valueOf(j)` the value of the j-th (and
 * `loOf(j)` its exact remainder, see {@link KeepValue}). Returns the index into `members`, or -1
 * for `none`. Ties: the earliest member.
 */
export function chooseKept(rule: KeepRule, count: number, valueOf: (j: number) => number, loOf: (j: number) => number = () => 0): number {
  if (rule.kind === 'none') return -1;
  // Several inputs are read (and numbered) one after the other in the order given, in one process
  // and in a job, and members come in that order: the earliest input's first member is the first.
  if (rule.kind === 'first' || rule.kind === 'source' || count === 0) return 0;
  const sign = rule.kind === 'longest' || rule.kind === 'max' ? 1 : -1;
  let best = 0;
  let bestV = sign * valueOf(0);
  let bestLo = sign * loOf(0);
  for (let j = 1; j < count; j++) {
    const v = sign * valueOf(j);
    const lo = sign * loOf(j);
    if (v > bestV || (v === bestV && lo > bestLo)) {
      best = j;
      bestV = v;
      bestLo = lo;
    }
  }
  return best;
}
