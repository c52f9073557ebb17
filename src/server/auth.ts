/**
 * Bearer-token authorization as a property of the route, decided after routing: a route is public
 * only when it says so in its config (`{ config: { public: true } }`); every other route, the 404
 * handler included, needs the token. The decision never looks at the URL's spelling, so
 * percent-encoded paths (`/ui/%63lusters`), query strings (`/healthz?x=1`) and any route added
 * later, by any plugin, are covered the same way.
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Served without the bearer token (the health checks, the web page and its static files). */
    public?: boolean;
  }
}

/** One registered route, as {@link listRoutes} returns it. */
export interface RouteInfo {
  /** HTTP method (HEAD routes Fastify adds for GET routes included). */
  method: string;
  /** The route pattern, e.g. `/v1/documents/:id`. */
  url: string;
  /** True when the route is served without the token. */
  public: boolean;
}

const routeLists = new WeakMap<FastifyInstance, RouteInfo[]>();

/** Every route registered on `app` so far (after `app.ready()`: all of them). */
export function listRoutes(app: FastifyInstance): RouteInfo[] {
  return [...(routeLists.get(app) ?? [])];
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/**
 * The credentials of an Authorization header with the Bearer scheme, or '' when there are none.
 * The scheme name is case-insensitive (RFC 9110 §11.1); one or more spaces follow it.
 */
export function bearerToken(header: string | undefined): string {
  const m = /^bearer +(\S.*)$/i.exec(header ?? '');
  return m ? m[1]! : '';
}

/**
 * A constant-time check of a given token against `token`, or undefined when there is none. An
 * empty given token never matches.
 */
export function tokenChecker(token: string | undefined): ((given: string) => boolean) | undefined {
  if (!token) return undefined;
  const tokenDigest = digest(token);
  // Digests have equal length, so timingSafeEqual never leaks the token length either.
  return (given) => given !== '' && timingSafeEqual(digest(given), tokenDigest);
}

/**
 * Records every route of `app` (for {@link listRoutes}) and, with a token, answers 401 to every
 * request whose matched route is not marked public. Call before any route is added.
 */
export function installAuth(app: FastifyInstance, token: string | undefined): void {
  const routes: RouteInfo[] = [];
  routeLists.set(app, routes);
  app.addHook('onRoute', (r) => {
    const methods = Array.isArray(r.method) ? r.method : [r.method];
    for (const method of methods) routes.push({ method, url: r.url, public: r.config?.public === true });
  });
  const matches = tokenChecker(token);
  if (!matches) return;
  app.addHook('onRequest', async (req, reply) => {
    // routeOptions is the route the router matched (after percent-decoding); unmatched requests
    // get the 404 route, which is not public. A named index's routes have their own hook
    // (src/server/indexRoutes.ts), which takes this token or the index's.
    const config = req.routeOptions.config;
    if (config?.public === true || config?.namedIndex === true) return;
    if (!matches(bearerToken(req.headers.authorization))) {
      reply.header('www-authenticate', 'Bearer');
      return reply.code(401).send({ statusCode: 401, error: 'Unauthorized', message: 'missing or invalid bearer token' });
    }
  });
}
