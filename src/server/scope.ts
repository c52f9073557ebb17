/**
 * Where a group of index routes is mounted and which index a request addresses: the server's own
 * index under `/v1`, or a named index under `/v1/indexes/:name` (src/server/indexRoutes.ts). The
 * route groups (documents, queries, clusters) are written once against this and mounted for both.
 * @module
 */
import type { FastifyRequest } from 'fastify';
import type { NearDupIndex } from '../online/nearDupIndex.js';

/** A mount point of the index routes. */
export interface IndexScope {
  /** The path the group's routes start with: `/v1`, or `/v1/indexes/:name`. */
  base: string;
  /** The index request `req` addresses (resolved before its handler runs). */
  of(req: FastifyRequest): NearDupIndex;
}

/** The scope of the server's own index, under `/v1`. */
export function fixedScope(index: NearDupIndex): IndexScope {
  return { base: '/v1', of: () => index };
}
