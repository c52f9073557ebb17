/**
 * What a bearer token may be: what a client can present as is in `Authorization: Bearer <token>`.
 * A server reads header values as Latin-1 bytes and drops the spaces around them, and clients send
 * UTF-8 (curl) or Latin-1 (fetch): a token with a character outside printable ASCII, or with a space
 * at either end, could be set but would open nothing, for every client or for some. Checked where a
 * token is set (`neardup serve --token`, `buildApp`, a named index's own token), so such a token is
 * refused there instead of locking the service silently.
 * @module
 */

/** Why `token` cannot be a bearer token (a phrase after "the token …"), or undefined when it can. */
export function bearerTokenProblem(token: string): string | undefined {
  if (token.trim() === '') return 'is empty';
  if (!/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(token))
    return 'is not one a client can send in an Authorization header: give printable ASCII, with no space at either end';
  return undefined;
}
