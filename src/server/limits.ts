/**
 * Request checks that JSON schema cannot express: the size and nesting depth of `meta`.
 * @module
 */
import { MAX_META_CHARS, MAX_META_DEPTH } from './schemas.js';

/**
 * Why `meta` is refused, or undefined when it is acceptable. The walk is iterative: a deeply nested
 * value must not overflow the stack here (it did in JSON.stringify when the record was encoded).
 */
export function metaProblem(meta: unknown, maxChars = MAX_META_CHARS, maxDepth = MAX_META_DEPTH): string | undefined {
  if (meta === undefined || meta === null || typeof meta !== 'object') {
    return typeof meta === 'string' && meta.length > maxChars ? `is longer than ${maxChars} characters` : undefined;
  }
  const stack: [unknown, number][] = [[meta, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (depth > maxDepth) return `is nested more than ${maxDepth} deep`;
    const children = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
    for (const c of children) if (c !== null && typeof c === 'object') stack.push([c, depth + 1]);
  }
  if (JSON.stringify(meta).length > maxChars) return `is larger than ${maxChars} characters as JSON`;
  return undefined;
}
