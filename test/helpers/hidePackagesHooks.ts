/**
 * Module resolution hook for hidePackages.ts: a bare import of a hidden package fails exactly as
 * Node fails for a package that is not installed (ERR_MODULE_NOT_FOUND, "Cannot find package").
 */
const hidden = new Set((process.env.NEARDUP_HIDE_PACKAGES ?? '').split(',').filter((s) => s));

type Next = (specifier: string, context: { parentURL?: string }) => Promise<unknown>;

/** Node's resolve hook. */
export async function resolve(specifier: string, context: { parentURL?: string }, next: Next): Promise<unknown> {
  const pkg = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
  if (hidden.has(pkg)) {
    const e = new Error(`Cannot find package '${pkg}' imported from ${context.parentURL ?? '?'}`) as Error & { code: string };
    e.code = 'ERR_MODULE_NOT_FOUND';
    throw e;
  }
  return next(specifier, context);
}
