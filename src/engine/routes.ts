/**
 * What each route of the engine does with each option: one capability table per route. The CLI
 * derives its refusals (exit 2, naming the option) and the `--help` marks of routes from these
 * tables; an option a table does not list gets the table's `otherwise`, so an option added to
 * ./options.ts is accepted or refused by every route without another edit.
 * @module
 */

/**
 * The routes: `memory` (texts in memory), `stream` (texts on disk, read again per pass), `exact`
 * (`dedup --exact`), `against` (`dedup --against` in one process), `job` (sharded jobs), `online`
 * (`NearDupIndex`, `neardup index`, `neardup serve`).
 */
export type Route = 'memory' | 'stream' | 'exact' | 'against' | 'job' | 'online';

/** Every route, in the order above. */
export const ROUTE_NAMES: readonly Route[] = ['memory', 'stream', 'exact', 'against', 'job', 'online'];

/**
 * What a route does with an option. `yes`: honoured. `ignored`: accepted and without effect (the
 * route has nothing it would change). `only`: honoured at these values, refused at others. `no`:
 * refused whenever given. A refusal's message is the route's wording (`{flag} {value} is not
 * supported by sharded jobs: {why}`), or the entry's own `message` with the same placeholders.
 */
export type Support = 'yes' | 'ignored' | { only: readonly string[]; why: string; message?: string } | { no: string; message?: string };

/** One route's capability table. */
export interface RouteCapabilities {
  /** How `--help` marks name the route: `sharded jobs`, `with --exact`. */
  label: string;
  /** How refusals name the route, after the option: `is not supported by sharded jobs`. */
  refusal: string;
  /** What the route does with an option the table does not list. */
  otherwise: Support;
  /** By option name (the commander attribute: `clusterMode` for `--cluster-mode`). */
  options: Record<string, Support>;
}

/** Why --against runs as it does: the reason of most of its refusals. */
const AGAINST_WHY = 'with --against, pairs across the two inputs are MinHash-LSH candidates verified by Jaccard similarity';
/** What --against keeps: the reason of its refusals of the keep options. */
const AGAINST_KEEPS = 'it keeps every document of the input that matches no reference document';
/** The one message of --exact for the options that choose another kind of duplicate. */
const EXACT_KINDS = '--exact finds identical documents: it takes no --measure, --candidates, --buckets, --cluster-mode or --representative';
/** The one message of a streamed run for the options that need the texts in memory. */
const STREAM_KINDS =
  '--measure containment, --candidates exact/sketch, --cluster-mode centre and --representative central need the texts in memory: add --no-stream';
/** Why jobs run LSH candidates. */
const JOB_LSH = 'sharded jobs find candidates with MinHash-LSH bands';

/** Input options every route that reads files honours. */
const INPUT_OPTIONS = ['format', 'text', 'id', 'textField', 'idField', 'delimiter', 'tsvQuotes', 'skipInvalid'];

/** `names` all with the same support. */
function all(names: readonly string[], support: Support): Record<string, Support> {
  return Object.fromEntries(names.map((n) => [n, support]));
}

/**
 * The capability table of every route. Order matters where a route checks several options: the
 * first refused one in its table's order is named.
 */
export const ROUTES: Record<Route, RouteCapabilities> = {
  memory: { label: 'in memory', refusal: 'is not supported', otherwise: 'yes', options: {} },
  stream: {
    label: 'streamed',
    refusal: 'is not supported streamed',
    otherwise: 'yes',
    options: {
      measure: { only: ['jaccard'], why: '', message: STREAM_KINDS },
      candidates: { only: ['lsh', 'auto'], why: '', message: STREAM_KINDS },
      clusterMode: { only: ['components'], why: '', message: STREAM_KINDS },
      // first and longest become --keep policies before the check: only central needs the texts in memory.
      representative: { only: ['first', 'longest'], why: '', message: STREAM_KINDS },
      fingerprintBits: { only: ['32'], why: '', message: STREAM_KINDS },
    },
  },
  exact: {
    label: 'with --exact',
    refusal: 'is not supported with --exact',
    // Exact copies have no shingles, signatures or bands: those options change nothing.
    otherwise: 'ignored',
    options: {
      measure: { only: ['jaccard'], why: '', message: EXACT_KINDS },
      candidates: { no: '', message: EXACT_KINDS },
      buckets: { no: '', message: EXACT_KINDS },
      clusterMode: { only: ['components'], why: '', message: EXACT_KINDS },
      representative: { only: ['first'], why: '', message: EXACT_KINDS },
      // source keeps the first too: inputs are read in the order given.
      keep: { only: ['first', 'source'], why: 'it keeps the first of each group of copies (drop --exact to choose the kept member)' },
      verify: {
        only: ['exact'],
        why: '',
        message:
          '--exact finds identical documents, compared whole: there are no candidates to --verify {value} (drop --verify, or drop --exact for near duplicates)',
      },
      normalize: 'yes',
      maxPairs: 'yes',
    },
  },
  against: {
    label: 'with --against',
    refusal: 'is not supported with --against',
    otherwise: 'yes',
    options: {
      exact: { no: `${AGAINST_WHY} (for exact copies of the reference, use --threshold 1)`, message: '{flag} does not apply with --against: {why}' },
      measure: { only: ['jaccard'], why: AGAINST_WHY },
      candidates: { only: ['lsh'], why: AGAINST_WHY },
      fingerprintBits: { only: ['32'], why: AGAINST_WHY },
      clusterMode: { only: ['components'], why: 'it writes no clusters', message: '{flag} {value} does not apply with --against: {why}' },
      representative: { only: ['first'], why: AGAINST_KEEPS, message: '{flag} {value} does not apply with --against: {why}' },
      keep: { only: ['first'], why: AGAINST_KEEPS, message: '{flag} {value} does not apply with --against: {why}' },
      removal: { only: ['verified'], why: AGAINST_KEEPS, message: '{flag} {value} does not apply with --against: {why}' },
    },
  },
  job: {
    label: 'sharded jobs',
    refusal: 'is not supported by sharded jobs',
    // A job takes dedup's option definitions: an option it does not list, one added later included, is refused by name.
    otherwise: { no: 'sharded jobs do not implement it' },
    options: {
      ...all(INPUT_OPTIONS, 'yes'),
      ...all(['shingle', 'k', 'normalize', 'multiset', 'stopwords', 'numPerm', 'method', 'seed'], 'yes'),
      ...all(['threshold', 'minRecall', 'weights', 'bands', 'rows', 'maxPairs', 'outputFormat', 'keep', 'removal', 'tagPrefix', 'removed', 'dryRun'], 'yes'),
      measure: {
        only: ['jaccard'],
        why: 'sharded jobs measure Jaccard similarity; containment needs the exact join of one process (neardup dedup --measure containment)',
      },
      candidates: { only: ['lsh'], why: JOB_LSH },
      clusterMode: { only: ['components'], why: 'sharded jobs cluster by connected components' },
      representative: {
        only: ['first', 'longest'],
        why:
          'the most central member needs every pair of a cluster in one process (neardup dedup --representative central); jobs take --keep first|longest|shortest|max:FIELD|min:FIELD|none',
      },
      fingerprintBits: { only: ['32'], why: 'sharded jobs verify 32-bit fingerprint sets' },
      verify: { only: ['exact'], why: 'sharded jobs verify exactly' },
      limit: { no: 'a job reads every record of its shards (give it fewer shards instead)' },
      exact: { no: 'exact duplicates are found in one streaming pass: run neardup dedup --exact on the shards' },
      stream: { no: 'a sharded job always keeps the texts on disk' },
      workers: { no: 'a job runs one task per process: start more workers (or array members) instead' },
      memoryBudget: { no: "a job holds only the fingerprint sets of one task's pairs" },
      batchSize: { no: 'a job has no worker batches' },
      buckets: { no: JOB_LSH },
    },
  },
  online: {
    label: 'online index',
    refusal: 'is not supported by the online index',
    otherwise: { no: 'the online index does not implement it' },
    options: {
      ...all(['threshold', 'shingle', 'k', 'normalize', 'multiset', 'stopwords', 'numPerm', 'method', 'seed', 'bands', 'rows', 'minRecall'], 'yes'),
      verify: { only: ['exact', 'estimate'], why: 'the index keeps only verified or estimated matches' },
    },
  },
};

/** What `route` does with the option `name`. */
export function supportOf(route: Route, name: string): Support {
  const table = ROUTES[route];
  return Object.hasOwn(table.options, name) ? table.options[name]! : table.otherwise;
}

/** The values `route` honours of option `name`: undefined for every value, [] for none. */
export function honouredValues(route: Route, name: string): readonly string[] | undefined {
  const s = supportOf(route, name);
  if (s === 'yes' || s === 'ignored') return undefined;
  return 'only' in s ? s.only : [];
}

/** An option as given: its name, the flag typed, and its value. */
export interface GivenOption {
  /** The option's name (commander attribute). */
  name: string;
  /** The flag as typed (`--cluster-mode`; `--no-stream` for a negated one). */
  flag: string;
  /** Its value. */
  value: unknown;
}

/**
 * Why `route` refuses the option as given, as the CLI prints it; undefined when the route takes it.
 * The caller decides what counts as given (a job: typed on the command line; in one process: a
 * value other than undefined and false).
 */
export function refusalOf(route: Route, given: GivenOption): string | undefined {
  const s = supportOf(route, given.name);
  if (s === 'yes' || s === 'ignored') return undefined;
  const value = String(given.value);
  if ('only' in s && s.only.includes(value)) return undefined;
  const why = 'only' in s ? s.why : s.no;
  const template = s.message ?? ('only' in s ? `{flag} {value} ${ROUTES[route].refusal}: {why}` : `{flag} ${ROUTES[route].refusal}: {why}`);
  return template.replaceAll('{flag}', given.flag).replaceAll('{value}', value).replaceAll('{why}', why);
}

/**
 * The first option of `route`'s table (in its order) that `values` gives and the route refuses, as
 * its message; undefined when none. `values` holds the options as given in one process, by name
 * (undefined and false: not given); `flagOf` names an option's flag.
 */
export function firstRefusal(route: Route, values: Record<string, unknown>, flagOf: (name: string) => string): string | undefined {
  for (const name of Object.keys(ROUTES[route].options)) {
    const value = values[name];
    if (value === undefined || value === false) continue;
    const why = refusalOf(route, { name, flag: flagOf(name), value });
    if (why !== undefined) return why;
  }
  return undefined;
}

/**
 * The `--help` mark of what `route` does not support of option `name` (`sharded jobs: lsh only`,
 * `with --exact: not taken`); undefined when it honours every value.
 */
export function routeMark(route: Route, name: string): string | undefined {
  const only = honouredValues(route, name);
  if (only === undefined) return undefined;
  return `${ROUTES[route].label}: ${only.length ? `${only.join(' or ')} only` : 'not taken'}`;
}

/** The `--help` marks of option `name` for `routes`, as one bracket (`[streamed: lsh or auto only; with --exact: not taken]`); '' when none. */
export function routeMarks(name: string, routes: readonly Route[]): string {
  const marks = routes.map((r) => routeMark(r, name)).filter((m) => m !== undefined);
  return marks.length ? ` [${marks.join('; ')}]` : '';
}
