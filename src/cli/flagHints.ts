/**
 * The CLI's words for the options library errors point to: the io layer says what is wrong and
 * where (file, line, field) in its own terms and names the option that would fix it
 * ({@link InputFix}); the CLI adds the flag that sets it.
 * @module
 */
import type { InputFix } from '../common/errors.js';

/** ` (use --text)`, ` (use --format dir)`…: the flag of a library error's fix, or '' without one. */
export function flagHint(fix: InputFix | undefined): string {
  if (!fix) return '';
  if (fix.option === 'text') return fix.value === 'field' ? ' (use --text-field)' : ' (use --text)';
  if (fix.option === 'out') return ' (choose another --out)';
  if (fix.option === 'tagPrefix') return ' (use --tag-prefix)';
  return fix.value !== undefined ? ` (use --format ${fix.value})` : ' (use --format)';
}
