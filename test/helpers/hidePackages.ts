/**
 * `node --import dist/test/helpers/hidePackages.js …`: makes the packages named in
 * NEARDUP_HIDE_PACKAGES (comma-separated) unresolvable, as on a machine where they were never
 * installed (the optional peer dependencies better-sqlite3 and ioredis).
 */
import { register } from 'node:module';

register('./hidePackagesHooks.js', import.meta.url);
