/**
 * ISO 8601 dates and date-times read strictly, the same on every machine: `--keep max:FIELD` values
 * and the HTTP API's `expiresAt`.
 * @module
 */

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * An ISO date or date-time as milliseconds since 1970: without an offset it is UTC (the same on
 * every machine, whatever its time zone); NaN for an impossible date or time (2024-02-30, 25:00).
 */
export function isoDateMs(s: string): number {
  const m = ISO_DATE.exec(s);
  if (!m) return NaN;
  const [, y, mo, d, h = '00', mi = '00', sec = '00', frac = '', zone] = m;
  const iso = `${y}-${mo}-${d}T${h}:${mi}:${sec}${frac}${zone ?? 'Z'}`;
  const ms = Date.parse(iso);
  // Date.parse rolls 2024-02-30 over to 1 March: the fields read back must be the ones written.
  const check = new Date(Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${sec}Z`));
  if (
    Number.isNaN(check.getTime()) || check.getUTCFullYear() !== Number(y) || check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d)
    || check.getUTCHours() !== Number(h) || check.getUTCMinutes() !== Number(mi) || check.getUTCSeconds() !== Number(sec)
  ) return NaN;
  return ms;
}
