/**
 * The library's one way from a text to its MinHash signature (and its fingerprint set): every
 * caller (batch dedup, streaming, shards, the online index, the workers) signs through a
 * {@link TextSigner}. Each method gives the same bits as the reference pipeline
 * `createMinHasher(m).signInto(createShingler(s).set(text), out)`, which stays the definition and
 * the tests' oracle (test/sketch/reference-equivalence.test.ts), not a second route.
 *
 * For character shingles (without multiset) nothing is materialized between the raw text and the
 * signature: normalization is fused with symbol lookup, OPH bins are updated straight from the
 * rolling hash (no sort: a bin minimum does not care about order or repeats), and classic MinHash
 * premixes each distinct shingle once, then sweeps the slots four at a time.
 * Other shingle kinds use the reference pipeline.
 * @module
 */
import { createShingler, type ShingleOptions, type Shingler } from '../text/shingler.js';
import { createSymbolizer, fusedSymbolTable, type Symbolizer } from '../text/symbolizer.js';
import { rollPower } from '../text/symbols.js';
import { WasmKernels, kernelsModule } from '../wasm/wasmKernels.js';
import { toSortedSet } from '../text/fingerprintSet.js';
import { createMinHasher, classicParams, ophParams, type MinHasher, type MinHashMethod, type MinHashOptions } from './minhash.js';
import { createFusedSketch, type DocSketch } from './fusedSketch.js';
import { classicJs, fingerprintsFromSymbols, ophBinsFromSymbols } from './kernels.js';
import { ProbeTable } from '../similarity/probeSet.js';
import type { SetKernels } from '../wasm/setKernels.js';
import { arenaSetWriter, type ArenaSetWriter } from './arenaSetWriter.js';
import { wasmPath, type BlockSigner } from './wasmPath.js';

export type { DocSketch } from './fusedSketch.js';
export type { BlockSigner, LoadedBlock } from './wasmPath.js';

/** Options of {@link createTextSigner}: the same shingling and MinHash options as `dedup`. */
export interface TextSignerOptions {
  /** Shingling (default: char 5-shingles, default normalization, seed 0). */
  shingle?: ShingleOptions;
  /** MinHash (default: oph, 128 slots, seed 1). */
  minhash?: MinHashOptions;
  /**
   * Use the WebAssembly kernels when the runtime has them. Default true; false forces the
   * JavaScript fast path (same output; used by the equivalence tests).
   */
  wasm?: boolean;
}

/** Signs raw texts. One instance is not re-entrant (it reuses scratch buffers); make one per thread. */
export interface TextSigner {
  /** Signature length. */
  readonly numPerm: number;
  /** MinHash method. */
  readonly method: MinHashMethod;
  /** The shingler whose sets the signatures are defined on. */
  readonly shingler: Shingler;
  /** The MinHash signer whose signatures these are (for sets already in hand, such as stored records). */
  readonly hasher: MinHasher;
  /** True when the fused fast path is used (char shingles without multiset). */
  readonly fast: boolean;
  /** True when {@link TextSigner.arenaWriter} gives a writer (on shared kernels). */
  readonly arenaText: boolean;
  /** Writes the signature of `text` into `out` (length numPerm); false for a text without shingles. */
  signInto(text: string, out: Uint32Array): boolean;
  /** The signature of `text`, or null for a text without shingles. */
  sign(text: string): Uint32Array | null;
  /** The sorted unique fingerprint set of `text` (equal to `shingler.set(text)`), a fresh array. */
  set(text: string): Uint32Array;
  /**
   * The same set as {@link TextSigner.set}, unsorted (an unspecified but deterministic order): a fresh
   * array. Cheaper than sorting; for `probeJaccardAtLeast` and other order-free uses. With `table`,
   * the table is left holding the set, ready to probe (no second pass over it to load it).
   */
  distinct(text: string, table?: ProbeTable): Uint32Array;
  /**
   * The same set as {@link TextSigner.distinct}, left in `table` and returned as a view valid until
   * the next use of `table` or of this signer: no fresh array, for callers that copy it once.
   */
  distinctView(text: string, table: ProbeTable): Uint32Array;
  /**
   * Writes the signature of `text` into `out` (length numPerm) and leaves its distinct set in
   * `table`, returned as {@link TextSigner.distinctView} returns it; null for a text without
   * shingles. The same values as `signInto` and `distinctView`, with the text normalized once.
   */
  signDistinct(text: string, out: Uint32Array, table: ProbeTable): Uint32Array | null;
  /**
   * Writes the distinct set of `text` at byte address `out` of the memory of `table`'s kernels (a
   * region of shared memory, see `ProbeTable.distinctTo`), which has room for `room` values, and
   * leaves it loaded in `table`; returns its size, or −1 (nothing written) when the text has more
   * fingerprints than `room` or than the table's region holds.
   */
  distinctTo(text: string, table: ProbeTable, out: number, room: number): number;
  /**
   * A writer of the sets {@link TextSigner.distinctTo} makes, running wholly in the shared memory
   * of `kernels` (src/sketch/arenaSetWriter.ts), or null when this signer's sets do not come from
   * the WebAssembly symbolize path (other shingle kinds, no WebAssembly, a preset it leaves to
   * JavaScript).
   */
  arenaWriter(kernels: SetKernels): ArenaSetWriter | null;
  /**
   * The sorted unique fingerprint set and the signature of `text` in one pass (fresh arrays; the
   * signature is null for a text without shingles): what the online index keeps per document.
   */
  sketch(text: string): DocSketch;
  /**
   * Signing of texts given as UTF-8 bytes inside a block of lines (pass 1 reads line files so), or
   * null when this signer has no such route (other shingle kinds, no WebAssembly, a preset left to
   * JavaScript). It shares this signer's kernels: same thread, one block at a time.
   */
  readonly blockSigner: BlockSigner | null;
}

/** The functions of one signing route; a {@link TextSigner} is them over what every route shares. */
interface SignRoutes {
  /** The signature route. */
  signInto: TextSigner['signInto'];
  /** The sorted set. */
  set: TextSigner['set'];
  /** The unsorted set (default: `set`). */
  distinct?: TextSigner['distinct'];
  /** The unsorted set as a view of the table (default: `distinct`). */
  distinctView?: TextSigner['distinctView'];
  /** The values `distinctTo` writes, before they are made distinct (default: `set`). */
  values?: (text: string) => Uint32Array;
  /** The block signer of UTF-8 lines (default: none). */
  blockSigner?: BlockSigner | null;
  /** Signature and distinct set in one normalization (undefined: this route declines the text; default: none). */
  signDistinct?: (text: string, out: Uint32Array, table: ProbeTable) => Uint32Array | null | undefined;
}

/** Builds a {@link TextSigner}. Throws a RangeError for invalid options, as the pieces do. */
export function createTextSigner(options: TextSignerOptions = {}): TextSigner {
  const shingler = createShingler(options.shingle);
  const hasher = createMinHasher(options.minhash);
  const { kind, k, seed: shingleSeed, multiset } = shingler.options;
  const normOptions = normalizeOptionsOf(options.shingle);
  const symbolizer = kind === 'char' && !multiset ? createSymbolizer(normOptions, shingleSeed) : null;
  const base = new SignerBase(shingler, hasher, symbolizer);
  if (!symbolizer) return base.build(referenceRoutes(shingler, hasher));
  const table = fusedSymbolTable(normOptions, shingleSeed);
  const mod = table && options.wasm !== false ? kernelsModule() : null;
  const wasm = mod && table ? wasmPath(new WasmKernels(mod, hasher.numPerm), table, k) : null;
  if (wasm && table) base.writerOn = (kernels) => arenaSetWriter(kernels, table, k);
  const path: FastPath = { scratch: new FingerprintScratch(symbolizer, k, wasm), symbolizer, hasher, k, wasm };
  const signing = hasher.method === 'oph' ? ophRoutes(path) : classicRoutes(path);
  return base.build({ ...path.scratch.setRoutes(), ...signing });
}

/** What every route of one signer shares: its pieces, the fused sketch and the arena writer. */
class SignerBase {
  /** The arena set writer's maker, set when the WebAssembly symbolize path is known. */
  writerOn: TextSigner['arenaWriter'] | null = null;
  // The fused set + signature pass keeps about 1 MB of sort buckets: built on first use only.
  private fused: ((text: string) => DocSketch) | null = null;

  constructor(readonly shingler: Shingler, readonly hasher: MinHasher, readonly symbolizer: Symbolizer | null) {}

  /** The signature of `text` and its sorted set (see {@link TextSigner.sketch}). */
  sketch(text: string): DocSketch {
    if (!this.symbolizer) {
      const set = this.shingler.set(text);
      return { set, sig: this.hasher.sign(set) };
    }
    this.fused ??= createFusedSketch(this.symbolizer, this.shingler.options.k, this.hasher);
    return this.fused(text);
  }

  /** The signer of `routes` over what this base holds. */
  build(routes: SignRoutes): TextSigner {
    const { signInto, set, distinct = set, distinctView = distinct, values = set, blockSigner = null, signDistinct } = routes;
    const { shingler, hasher } = this;
    const numPerm = hasher.numPerm;
    const writerOn = this.writerOn;
    return {
      numPerm,
      method: hasher.method,
      shingler,
      hasher,
      fast: this.symbolizer !== null,
      arenaText: writerOn !== null,
      sketch: (text) => this.sketch(text),
      blockSigner,
      signInto,
      set,
      distinct,
      distinctView,
      arenaWriter: (kernels: SetKernels) => writerOn?.(kernels) ?? null,
      distinctTo(text, table, out, room) {
        const v = values(text);
        return v.length > room || !table.fits(v.length) ? -1 : table.distinctTo(v, out);
      },
      sign(text: string): Uint32Array | null {
        const out = new Uint32Array(numPerm);
        return signInto(text, out) ? out : null;
      },
      signDistinct(text, out, table) {
        const fused = signDistinct?.(text, out, table);
        if (fused !== undefined) return fused;
        return signInto(text, out) ? distinctView(text, table) : null;
      },
    };
  }
}

/** The reference pipeline's routes: shingle kinds the fused path does not cover. */
function referenceRoutes(shingler: Shingler, hasher: MinHasher): SignRoutes {
  return {
    signInto: (text, out) => hasher.signInto(shingler.set(text), out),
    set: (text) => shingler.set(text),
    distinct: (text, table) => {
      const s = shingler.set(text);
      table?.load(s);
      return s;
    },
  };
}

/** The WebAssembly front half of a fast signer (null without it). */
type Wasm = ReturnType<typeof wasmPath> | null;

/** What the fused signing routes work from. */
interface FastPath {
  scratch: FingerprintScratch;
  symbolizer: Symbolizer;
  hasher: MinHasher;
  k: number;
  wasm: Wasm;
}

/** The fingerprints of a text (with repeats) in a reused buffer, and the set routes made from them. */
class FingerprintScratch {
  /** The buffer `count` fills (it may be replaced by a larger one: read it after the call). */
  fps = new Uint32Array(4096);
  private readonly probe = new ProbeTable();

  constructor(private readonly symbolizer: Symbolizer, private readonly k: number, private readonly wasm: Wasm) {}

  /** The fingerprints of `text` by the JavaScript path, in `fps`; returns how many. */
  js(text: string): number {
    const { syms, count } = this.symbolizer.symbols(text);
    if (this.fps.length < count + 1) this.fps = new Uint32Array(Math.max(count + 1, this.fps.length * 2));
    return fingerprintsFromSymbols(syms, count, this.k, this.fps);
  }

  /** The fingerprints of `text`, valid until the next call (a view of kernel memory or of `fps`). */
  view(text: string): Uint32Array {
    const wasm = this.wasm;
    if (wasm) {
      const m = wasm.fingerprints(text);
      if (m >= 0) return wasm.k.u32.subarray(wasm.k.FPS >>> 2, (wasm.k.FPS >>> 2) + m);
    }
    const n = this.js(text); // may reallocate fps: read it after
    return this.fps.subarray(0, n);
  }

  /** The fingerprints of `text` in `fps`; returns how many. */
  count(text: string): number {
    if (!this.wasm) return this.js(text);
    const view = this.view(text);
    const m = view.length;
    if (view.buffer === this.fps.buffer) return m;
    if (this.fps.length < m) this.fps = new Uint32Array(Math.max(m, this.fps.length * 2));
    this.fps.set(view);
    return m;
  }

  /** The set routes every fast signer shares (the signature route and block signer differ). */
  setRoutes(): Omit<SignRoutes, 'signInto'> {
    return {
      set: (text) => {
        const m = this.count(text); // may reallocate fps: read it after
        return toSortedSet(this.fps.subarray(0, m)).slice();
      },
      distinct: (text, table = this.probe) => table.distinctOf(this.view(text)),
      distinctView: (text, table) => table.distinctView(this.view(text)),
      values: (text) => this.view(text),
    };
  }
}

/** The signature routes of one-permutation hashing (OPH). */
function ophRoutes(path: FastPath): Pick<SignRoutes, 'signInto' | 'blockSigner' | 'signDistinct'> {
  const { scratch, symbolizer, hasher, k, wasm } = path;
  const { pre } = ophParams(hasher.seed);
  const numPerm = hasher.numPerm;
  /**
   * Bins left empty by round 0 are filled from the document's fingerprints by the definition's
   * own fill rounds (minhash.ts). Rare on real documents (a 1.5 KB text leaves a bin of 128 empty
   * about once in a thousand), so that case simply recomputes the fingerprints and runs the
   * reference signer, which gives the same round-0 bins.
   */
  const finish = (text: string, out: Uint32Array): boolean => {
    for (let i = 0; i < numPerm; i++) {
      if (out[i] === 0xffffffff) {
        const m = scratch.count(text); // may reallocate fps: read it after
        return hasher.signInto(scratch.fps.subarray(0, m), out);
      }
    }
    return true;
  };
  const jsSign = (text: string, out: Uint32Array): boolean => {
    const { syms, count } = symbolizer.symbols(text);
    out.fill(0xffffffff);
    if (!ophBinsFromSymbols(syms, count, k, pre, out)) return false;
    return finish(text, out);
  };
  if (!wasm) return { signInto: jsSign };
  const ophOf = wasmOph(wasm.k, { k, pre, numPerm });
  return {
    signInto: (text, out) => {
      const n = wasm.symbolize(text);
      return n < 0 || n <= k ? jsSign(text, out) : ophOf(n, out);
    },
    // The symbols signing leaves in the kernels make the fingerprints: no second normalization.
    signDistinct: (text, out, table) => {
      const n = wasm.symbolize(text);
      if (n < 0 || n <= k) return undefined;
      ophOf(n, out);
      return table.distinctView(wasm.fingerprintsOfSymbols(n));
    },
    blockSigner: wasm.blockSigner(ophOf),
  };
}

/** The OPH signature of the n > k symbols at the kernels' SYMS, in the kernels. */
function wasmOph(w: WasmKernels, params: { k: number; pre: number; numPerm: number }): (n: number, out: Uint32Array) => boolean {
  const { k, pre, numPerm } = params;
  const shift = numPerm > 1 && (numPerm & (numPerm - 1)) === 0 ? 32 - Math.log2(numPerm) : 0;
  const bk = rollPower(k);
  /**
   * Short documents (a few hundred shingles) leave some of the 128 bins empty most of the time:
   * the symbols are still in kernel memory, so their fingerprints come from there (no second
   * symbolize), are premixed once, and only the fill rounds run on the round-0 bins already made.
   */
  const fillFromSymbols = (n: number, out: Uint32Array): boolean => {
    if (!out.includes(0xffffffff)) return true;
    w.fn.fingerprints(w.SYMS, n, k, bk, w.FPS);
    // In the kernels (the bins still hold round 0; the classic parameters' region A is free
    // scratch for OPH): ophFillRounds, without waiting for the JavaScript JIT.
    w.fn.ophFill(w.FPS, n - k + 1, pre, w.BINS, numPerm, w.A);
    out.set(w.bins);
    return true;
  };
  return (n, out) => {
    const bins = w.bins;
    bins.fill(0xffffffff);
    w.fn.oph(w.SYMS, n, k, bk, pre, w.BINS, numPerm, shift);
    out.set(bins);
    return fillFromSymbols(n, out);
  };
}

/** The signature routes of classic k-permutation MinHash. */
function classicRoutes(path: FastPath): Pick<SignRoutes, 'signInto' | 'blockSigner'> {
  const { scratch, hasher, k, wasm } = path;
  const { a, b, pre } = classicParams(hasher.numPerm, hasher.seed);
  const jsClassic = classicJs(a, b, pre, () => scratch.fps);
  if (!wasm || hasher.numPerm % 4 !== 0) {
    return {
      signInto: (text, out) => {
        const m = scratch.count(text);
        return m === 0 ? false : jsClassic(m, out);
      },
    };
  }
  const w = wasm.k;
  w.i32.set(a, w.A >>> 2);
  w.i32.set(b, w.B >>> 2);
  const bk = rollPower(k);
  /** The signature of the n > k symbols at SYMS. */
  const classicOf = (n: number, out: Uint32Array): boolean => {
    w.fn.fingerprints(w.SYMS, n, k, bk, w.FPS);
    w.fn.classic(w.FPS, n - k + 1, pre, w.A, w.B, w.BINS, hasher.numPerm);
    out.set(w.bins);
    return true;
  };
  return {
    signInto: (text, out) => {
      const n = wasm.symbolize(text);
      if (n >= 0 && n > k) return classicOf(n, out);
      const m = scratch.js(text);
      return m === 0 ? false : jsClassic(m, out);
    },
    blockSigner: wasm.blockSigner(classicOf),
  };
}

function normalizeOptionsOf(shingle: ShingleOptions | undefined): NonNullable<ShingleOptions['normalize']> {
  return shingle?.normalize ?? {};
}
