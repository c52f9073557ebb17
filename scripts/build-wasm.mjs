// Generates src/wasm/kernels.wat (WebAssembly text, with the fmix32 steps macro-expanded) and
// compiles it with wabt into src/wasm/kernelsBinary.ts (base64), so neither the build nor the
// runtime needs wabt. Run after editing this file: `node scripts/build-wasm.mjs`.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import wabtInit from 'wabt';

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, '..', 'src', 'wasm');

const ROLL = '0x9e3779b1';
/** x ← fmix32(x), in place on local $x. */
const fmix = (x) => `
    local.get ${x} local.get ${x} i32.const 16 i32.shr_u i32.xor local.set ${x}
    local.get ${x} i32.const 0x85ebca6b i32.mul local.set ${x}
    local.get ${x} local.get ${x} i32.const 13 i32.shr_u i32.xor local.set ${x}
    local.get ${x} i32.const 0xc2b2ae35 i32.mul local.set ${x}
    local.get ${x} local.get ${x} i32.const 16 i32.shr_u i32.xor local.set ${x}`;
/**
 * fps[j] ← fmix32(fps[j] ^ pre) for the $count u32 at $fps, in place (OPH's fill rounds and classic
 * MinHash premix the same way); leaves $p and $end at the end of them, uses $x as scratch.
 */
const premix = (count, x) => `
    local.get $fps local.set $p
    local.get $fps local.get ${count} i32.const 2 i32.shl i32.add local.set $end
    block $d0
      loop $L0
        local.get $p local.get $end i32.ge_u br_if $d0
        local.get $p i32.load local.get $pre i32.xor local.set ${x}
        ${fmix(x)}
        local.get $p local.get ${x} i32.store
        local.get $p i32.const 4 i32.add local.set $p
        br $L0
      end
    end`;
/** h ← h·ROLL + syms[p] − syms[p − 4k]·bk, with $p the byte address of syms[i]. */
const roll = `
    local.get $h i32.const ${ROLL} i32.mul
    local.get $p i32.load i32.add
    local.get $p local.get $k4 i32.sub i32.load local.get $bk i32.mul i32.sub
    local.set $h`;
/** The roll for the window after $p's: h ← h·ROLL + syms[p + 1] − syms[p + 1 − k]·bk. */
const roll4 = `
    local.get $h i32.const ${ROLL} i32.mul
    local.get $p i32.load offset=4 i32.add
    local.get $p local.get $k4 i32.sub i32.load offset=4 local.get $bk i32.mul i32.sub
    local.set $h`;
/**
 * Rolling-hash kernels (oph, fingerprints, distinctGrams): $k4 ← 4k, $h ← the first window's plain
 * polynomial over the k symbols at $syms, $p ← the next entering symbol, $end ← the end of the n symbols.
 */
const firstWindow = `
    local.get $k i32.const 2 i32.shl local.set $k4
    local.get $syms local.set $p
    local.get $syms local.get $k4 i32.add local.set $end
    block $d0
      loop $L0
        local.get $p local.get $end i32.ge_u br_if $d0
        local.get $h i32.const ${ROLL} i32.mul local.get $p i32.load i32.add local.set $h
        local.get $p i32.const 4 i32.add local.set $p
        br $L0
      end
    end
    local.get $syms local.get $n i32.const 2 i32.shl i32.add local.set $end`;
/** bins[$a] ← min_u(bins[$a], z2), as update does for z. */
const update2 = `
          local.get $a
          local.get $z2 local.get $a i32.load local.tee $old
          local.get $z2 local.get $old i32.lt_u select
          i32.store`;
/** bins[$a] ← min_u(bins[$a], z), branch-free: a bin update is taken about a quarter of the time
 * at random, which a branch predicts badly. */
const update = `
          local.get $a
          local.get $z local.get $a i32.load local.tee $old
          local.get $z local.get $old i32.lt_u select
          i32.store`;
/** One classic lane group: m ← min_u(m, xorshift16((z ^ b) · a)). */
const group = (g) => `
        local.get $z local.get $vb${g} v128.xor local.get $va${g} i32x4.mul local.tee $t
        local.get $t i32.const 16 i32x4.shr_u v128.xor
        local.get $m${g} i32x4.min_u local.set $m${g}`;

/** Symbolize kernels: leave block $done at the end of the text, else $c ← the next code unit, $cl ← its class. */
/**
 * Symbolize kernels: leave block $done at the end of the text, else $c ← the next code unit (read by
 * `read`, which also moves $i past it), $cl ← its class.
 */
const nextUnitOf = (read, advance = '') =>
  `local.get $i local.get $len i32.ge_u br_if $done
        ${read}
        local.get $cls local.get $c i32.add i32.load8_u local.set $cl${advance}`;
/** The next UTF-16 code unit ($i is then 1 + where it starts). */
const nextUnit = nextUnitOf(
  'local.get $text local.get $i i32.const 1 i32.shl i32.add i32.load16_u local.set $c',
  `
        local.get $i i32.const 1 i32.add local.set $i`,
);
/**
 * The next code unit of UTF-8 bytes (valid UTF-8, the caller's guarantee): one to three bytes make
 * one BMP code unit; a four-byte sequence reads as a high surrogate, a class these kernels leave to
 * JavaScript. At most one unit per byte, so a buffer of $len units holds the output.
 */
const nextUtf8 = nextUnitOf(`local.get $i i32.const 1 i32.add local.set $at
        local.get $text local.get $i i32.add i32.load8_u local.tee $b
        i32.const 0x80 i32.lt_u
        if
          local.get $b local.set $c
          local.get $i i32.const 1 i32.add local.set $i
        else
          local.get $b i32.const 0xe0 i32.lt_u
          if
            local.get $b i32.const 0x1f i32.and i32.const 6 i32.shl
            local.get $text local.get $i i32.add i32.load8_u offset=1 i32.const 0x3f i32.and i32.or local.set $c
            local.get $i i32.const 2 i32.add local.set $i
          else
            local.get $b i32.const 0xf0 i32.lt_u
            if
              local.get $b i32.const 0x0f i32.and i32.const 12 i32.shl
              local.get $text local.get $i i32.add i32.load8_u offset=1 i32.const 0x3f i32.and i32.const 6 i32.shl i32.or
              local.get $text local.get $i i32.add i32.load8_u offset=2 i32.const 0x3f i32.and i32.or local.set $c
              local.get $i i32.const 3 i32.add local.set $i
            else
              i32.const 0xd800 local.set $c
              local.get $i i32.const 4 i32.add local.set $i
            end
          end
        end`);
/** Set kernels: $a ← byte address of value $v's home slot in the table at $tab. */
const homeSlot = 'local.get $tab local.get $v local.get $mask i32.and i32.const 2 i32.shl i32.add';
/** Set kernels: $p, $end ← the $m u32 values at $in. */
const valuesFrom = 'local.get $in local.set $p local.get $in local.get $m i32.const 2 i32.shl i32.add local.set $end';
/** Set kernels: leave block $done at the end of the values, else $v ← the next value. */
const nextValue = 'local.get $p local.get $end i32.ge_u br_if $done local.get $p i32.load local.set $v local.get $p i32.const 4 i32.add local.set $p';
/** Set kernels: the probe moves on to the next slot (no wrap-around: the caller zeroed slack). */
const walkOn = 'local.get $a i32.const 4 i32.add local.set $a br $P';

/** Set kernels (distinct, distinctGrams): value $v into the table, and written at $o when new (see distinct). Continues loop $L. */
const insertDistinct = `
        local.get $v i32.eqz
        if
          local.get $zf i32.load i32.eqz
          if
            local.get $zf i32.const 1 i32.store
            local.get $o i32.const 0 i32.store
            local.get $o i32.const 4 i32.add local.set $o
          end
          br $L
        end
        ${homeSlot} local.tee $a
        v128.load align=4 local.tee $w
        local.get $v i32x4.splat i32x4.eq i32x4.bitmask local.set $dup
        local.get $w v128.const i32x4 0 0 0 0 i32x4.eq i32x4.bitmask local.set $free
        local.get $dup local.get $free i32.or
        if
          local.get $a
          local.get $dup local.get $free local.get $dup select
          i32.ctz i32.const 2 i32.shl i32.add
          local.get $v i32.store
          local.get $o local.get $v i32.store
          local.get $o local.get $dup i32.eqz i32.const 2 i32.shl i32.add local.set $o
          br $L
        end
        ;; rare: four other values in a row; walk on one slot at a time
        local.get $a i32.const 16 i32.add local.set $a
        block $placed
          loop $P
            local.get $a i32.load local.tee $x
            i32.eqz
            if
              local.get $a local.get $v i32.store
              local.get $o local.get $v i32.store
              local.get $o i32.const 4 i32.add local.set $o
              br $placed
            end
            local.get $x local.get $v i32.eq br_if $placed
            ${walkOn}
          end
        end
`;

/** The set kernels, in both modules. */
const setFuncs = `  ;; ---- Exact verification: an open-addressing table of i32 values (0 = empty slot) at $tab,
  ;; linear probing upward from slot value & $mask *without wrapping*: the caller zeroes
  ;; $mask + 1 + n + 4 slots for n values, so runs stay inside and a 4-slot window never leaves the
  ;; zeroed region. The value 0 itself lives in the flag word at $zf.

  ;; The distinct values among $m u32 at $in, inserted into the table and written in first-occurrence
  ;; order to $out ($out = $in allowed: writes never pass reads). Returns their count.
  ;; Like count, it compares the 4 slots from a value's home slot at once: the value among them is a
  ;; repeat, else it goes into the first empty one (a run has no holes, so it cannot be further on).
  ;; Both cases store it (again, for a repeat: no change) and write it out; only a new value advances
  ;; the output, so there is no branch on new-or-repeat. Only four other values in a row walk on.
  (func (export "distinct") (param $in i32) (param $m i32) (param $tab i32) (param $mask i32)
      (param $out i32) (param $zf i32) (result i32)
    (local $p i32) (local $end i32) (local $v i32) (local $a i32) (local $x i32) (local $o i32)
    (local $w v128) (local $dup i32) (local $free i32)
    ${valuesFrom}
    local.get $out local.set $o
    block $done
      loop $L
        ${nextValue}
        ${insertDistinct}
        br $L
      end
    end
    local.get $o local.get $out i32.sub i32.const 2 i32.shr_u)

  ;; Inserts $m values at $in, known distinct, into the table: each into the first empty slot of
  ;; the 4 from its home slot (found with one compare), walking on only past four taken ones.
  (func (export "load") (param $in i32) (param $m i32) (param $tab i32) (param $mask i32) (param $zf i32)
    (local $p i32) (local $end i32) (local $v i32) (local $a i32) (local $free i32)
    ${valuesFrom}
    block $done
      loop $L
        ${nextValue}
        local.get $v i32.eqz
        if
          local.get $zf i32.const 1 i32.store
          br $L
        end
        ${homeSlot} local.tee $a
        v128.load align=4 v128.const i32x4 0 0 0 0 i32x4.eq i32x4.bitmask local.tee $free
        if
          local.get $a local.get $free i32.ctz i32.const 2 i32.shl i32.add
          local.get $v i32.store
          br $L
        end
        local.get $a i32.const 16 i32.add local.set $a
        block $free
          loop $P
            local.get $a i32.load i32.eqz br_if $free
            ${walkOn}
          end
        end
        local.get $a local.get $v i32.store
        br $L
      end
    end)

  ;; |table ∩ set| for $m distinct values at $in, or -1 as soon as the count so far plus the values
  ;; left falls short of $need (checked every 64 values), and at the end. $zero: 1 if 0 is in the table.
  ;; A probe compares the 4 slots from the home slot at once: the value among them is a hit (a run
  ;; has no holes), else an empty slot among them is a miss; only a full window of others walks on.
  (func (export "count") (param $in i32) (param $m i32) (param $tab i32) (param $mask i32) (param $zero i32)
      (param $need i32) (result i32)
    (local $j i32) (local $n i32) (local $v i32) (local $a i32) (local $x i32) (local $w v128) (local $hit i32)
    block $done
      loop $L
        local.get $j local.get $m i32.ge_u br_if $done
        local.get $j i32.const 63 i32.and i32.eqz
        if
          local.get $n local.get $m i32.add local.get $j i32.sub local.get $need i32.lt_s
          if
            i32.const -1 return
          end
        end
        local.get $in local.get $j i32.const 2 i32.shl i32.add i32.load local.set $v
        local.get $j i32.const 1 i32.add local.set $j
        local.get $v i32.eqz
        if
          local.get $n local.get $zero i32.add local.set $n
          br $L
        end
        ${homeSlot} local.tee $a
        v128.load align=4 local.tee $w
        local.get $v i32x4.splat i32x4.eq v128.any_true local.tee $hit
        local.get $n i32.add local.set $n
        local.get $hit br_if $L
        local.get $w v128.const i32x4 0 0 0 0 i32x4.eq v128.any_true br_if $L
        ;; rare: four other values in a row; walk on one slot at a time
        local.get $a i32.const 16 i32.add local.set $a
        block $found
          loop $P
            local.get $a i32.load local.tee $x
            local.get $v i32.eq
            if
              local.get $n i32.const 1 i32.add local.set $n
              br $found
            end
            local.get $x i32.eqz br_if $found
            ${walkOn}
          end
        end
        br $L
      end
    end
    local.get $n local.get $need i32.lt_s
    if
      i32.const -1 return
    end
    local.get $n)

  ;; The distinct character k-gram fingerprints of n > k symbols at $syms (what fingerprints
  ;; computes) inserted into the table and written in first-occurrence order to $out, as distinct
  ;; does for values in memory; returns their count. Fused, the fingerprints never go to memory.
  (func (export "distinctGrams") (param $syms i32) (param $n i32) (param $k i32) (param $bk i32)
      (param $tab i32) (param $mask i32) (param $out i32) (param $zf i32) (result i32)
    (local $h i32) (local $p i32) (local $end i32) (local $k4 i32) (local $v i32) (local $a i32)
    (local $x i32) (local $o i32) (local $w v128) (local $dup i32) (local $free i32) (local $first i32)
    ${firstWindow}
    local.get $out local.set $o
    i32.const 1 local.set $first
    block $done
      loop $L
        ;; the first window as it is, then one roll per entering symbol at $p
        local.get $first
        if
          i32.const 0 local.set $first
        else
          local.get $p local.get $end i32.ge_u br_if $done
          ${roll}
          local.get $p i32.const 4 i32.add local.set $p
        end
        local.get $h local.set $v
        ${fmix('$v')}
        ${insertDistinct}
        br $L
      end
    end
    local.get $o local.get $out i32.sub i32.const 2 i32.shr_u)
`;

/** The symbolize kernels, in both modules. */
/**
 * The symbolize kernels over code units read by `unit` (UTF-16, or UTF-8 bytes), their exports
 * named with `suffix`; `failAt` is the local that holds 1 + where the current unit starts, `extra`
 * the locals `unit` needs beyond the common ones.
 */
const symbolizeFuncsOf = (unit, suffix, failAt = '$i', extra = '') =>
  `  ;; Fused normalization + symbol lookup over UTF-16 text at $text ($len code units), using the class
  ;; table at $cls (u8 × 65536) and symbol table at $sym (i32 × 65536), writing symbols at $out;
  ;; returns their number, or -(i+1) at the first code unit i of a class it does not handle. This one
  ;; is for tables with classes 1 (one symbol) and 2 (whitespace, collapsed and trimmed): every preset
  ;; but lowercase-collapse. One store per code unit, and no branch on the class: a whitespace unit
  ;; writes a space that counts only right after a symbol, so runs collapse and leading ones vanish;
  ;; a trailing space is dropped at the end. (Two stores and a pending-space flag per unit made the
  ;; output position wait on a chain of dependent steps: 1.27x slower signing.)
  (func (export "symbolizeWs${suffix}") (param $text i32) (param $len i32) (param $cls i32) (param $sym i32)
      (param $out i32) (param $space i32) (result i32)
    (local $i i32) (local $c i32) (local $cl i32) (local $o i32) (local $one i32) (local $after i32)${extra}
    local.get $out local.set $o
    block $done
      loop $L
        ${unit}
        local.get $cl i32.const 1 i32.sub i32.const 1 i32.gt_u
        if
          i32.const 0 local.get ${failAt} i32.sub
          return
        end
        local.get $cl i32.const 1 i32.eq local.set $one
        ;; the symbol, or a space for whitespace
        local.get $o
        local.get $sym local.get $c i32.const 2 i32.shl i32.add i32.load
        local.get $space
        local.get $one select
        i32.store
        ;; a symbol always counts; a space only right after a symbol
        local.get $o local.get $one local.get $after i32.or i32.const 2 i32.shl i32.add local.set $o
        local.get $one local.set $after
        br $L
      end
    end
    ;; ends with whitespace after a symbol: drop that space
    local.get $o local.get $o local.get $out i32.ne local.get $after i32.eqz i32.and i32.const 2 i32.shl i32.sub local.set $o
    local.get $o local.get $out i32.sub i32.const 2 i32.shr_u)

  ;; symbolize for lowercase-collapse tables (classes 1, 5 and 6): every code unit writes one value,
  ;; its symbol or a space, which counts when the unit is a symbol or starts a run of its class
  ;; (spaces and newlines each collapse to one space per run). Any other class returns -(i+1).
  (func (export "symbolizeRuns${suffix}") (param $text i32) (param $len i32) (param $cls i32) (param $sym i32)
      (param $out i32) (param $space i32) (result i32)
    (local $i i32) (local $c i32) (local $cl i32) (local $o i32) (local $one i32) (local $prev i32)${extra}
    local.get $out local.set $o
    block $done
      loop $L
        ${unit}
        local.get $cl i32.const 1 i32.eq local.tee $one
        local.get $cl i32.const 5 i32.eq local.get $cl i32.const 6 i32.eq i32.or i32.or
        i32.eqz
        if
          i32.const 0 local.get ${failAt} i32.sub
          return
        end
        local.get $o
        local.get $sym local.get $c i32.const 2 i32.shl i32.add i32.load
        local.get $space
        local.get $one select
        i32.store
        local.get $o local.get $one local.get $cl local.get $prev i32.ne i32.or i32.const 2 i32.shl i32.add local.set $o
        local.get $cl local.set $prev
        br $L
      end
    end
    local.get $o local.get $out i32.sub i32.const 2 i32.shr_u)
`;
/** The symbolize kernels over UTF-16 text, in both modules. */
const symbolizeFuncs = symbolizeFuncsOf(nextUnit, '');
/** The symbolize kernels over UTF-8 bytes, in both modules. */
const symbolizeBytesFuncs = symbolizeFuncsOf(nextUtf8, '8', '$at', ' (local $at i32) (local $b i32)');

/** An i8x16 constant of sixteen `byte`s (written as given: '0x20'). */
const splat8 = (byte) => `v128.const i8x16 ${Array(16).fill(byte).join(' ')}`;

/**
 * The code units below 256 with a sentence class (src/spans/sentences.ts's CLASS: letters, digits,
 * tab, space, line feed, CR, `,` `.` `!` `?`, Latin-1 letters but × and ÷), as two 16-byte tables
 * of bucket bits: a byte has a class exactly when the entries of its high and low nibbles share a
 * bit (each high nibble's code units with a class are one set of low nibbles, one bucket each).
 * test/spans/codeUnits.test.ts checks `sentenceUnits` against the string path.
 */
const SENTENCE_NIBBLES = (() => {
  const has = (b) =>
    [0x09, 0x0a, 0x0d, 0x20, 0x21, 0x2c, 0x2e, 0x3f].includes(b)
    || (b >= 0x30 && b <= 0x39)
    || (b >= 0x41 && b <= 0x5a)
    || (b >= 0x61 && b <= 0x7a)
    || (b >= 0xc0 && b !== 0xd7 && b !== 0xf7);
  const hi = Array(16).fill(0);
  const lo = Array(16).fill(0);
  const buckets = new Map();
  for (let h = 0; h < 16; h++) {
    let set = 0;
    for (let l = 0; l < 16; l++) if (has(16 * h + l)) set |= 1 << l;
    if (set === 0) continue;
    if (!buckets.has(set)) buckets.set(set, buckets.size);
    const bit = 1 << buckets.get(set);
    if (bit > 0x80) throw new Error('SENTENCE_NIBBLES: more than eight buckets');
    hi[h] |= bit;
    for (let l = 0; l < 16; l++) if (set & (1 << l)) lo[l] |= bit;
  }
  for (let b = 0; b < 256; b++) if (((hi[b >> 4] & lo[b & 15]) !== 0) !== has(b)) throw new Error(`SENTENCE_NIBBLES: byte ${b}`);
  const table = (t) => `v128.const i8x16 ${t.join(' ')}`;
  return { hi: table(hi), lo: table(lo), note: `${buckets.size} buckets` };
})();
/** Eight u16 lanes of `x`. */
const splat16 = (x) => `v128.const i16x8 ${Array(8).fill(x).join(' ')}`;

/**
 * A byte scan over [$p, $end): `vector` runs on each whole 16 bytes at $p (on the stack, and in $v), then
 * `byte` on each byte of the tail; both see $p, and the function returns `result`.
 */
const byteScan = (name, locals, vector, byte, result) =>
  `  (func (export "${name}") (param $p i32) (param $end i32) (result i32)
    (local $v v128)${locals}
    block $tail
      loop $L
        local.get $p i32.const 16 i32.add local.get $end i32.gt_u br_if $tail
        local.get $p v128.load align=1 local.tee $v
        ${vector}
        local.get $p i32.const 16 i32.add local.set $p
        br $L
      end
    end
    block $done
      loop $B
        local.get $p local.get $end i32.ge_u br_if $done
        ${byte}
        local.get $p i32.const 1 i32.add local.set $p
        br $B
      end
    end
    ${result})`;

/**
 * Byte scans of a block of lines read as UTF-8 (src/io/read/jsonLine.ts, src/io/ranges/lineBlockBytes.ts):
 * sixteen bytes per step, for what a loop over bytes in JavaScript did at ~850 MB/s.
 */
const byteScanFuncs = `  ;; The address of the first byte in [$p, $end) that is below 0x20, a quote or a backslash (what
  ;; ends or breaks a JSON string's plain run), or $end when there is none.
${
  byteScan(
    'stringStop',
    ' (local $m i32)',
    `${splat8('0x20')} i8x16.lt_u
        local.get $v ${splat8('0x22')} i8x16.eq v128.or
        local.get $v ${splat8('0x5c')} i8x16.eq v128.or
        i8x16.bitmask local.tee $m
        if
          local.get $p local.get $m i32.ctz i32.add
          return
        end`,
    `local.get $p i32.load8_u local.tee $m
        i32.const 0x20 i32.lt_u local.get $m i32.const 0x22 i32.eq i32.or local.get $m i32.const 0x5c i32.eq i32.or
        br_if $done`,
    'local.get $p',
  )
}

  ;; The UTF-16 length of the valid UTF-8 bytes in [$p, $end): one unit per byte that does not
  ;; continue a sequence (10xxxxxx), and one more per four-byte lead (11110xxx: a surrogate pair).
${
  byteScan(
    'utf16Units',
    ' (local $n i32) (local $b i32)',
    `${splat8('0xc0')} v128.and
        ${splat8('0x80')} i8x16.ne
        i8x16.bitmask i32.popcnt
        local.get $v ${splat8('0xef')} i8x16.gt_u
        i8x16.bitmask i32.popcnt
        i32.add local.get $n i32.add local.set $n`,
    `local.get $p i32.load8_u local.tee $b
        i32.const 0xc0 i32.and i32.const 0x80 i32.ne
        local.get $b i32.const 0xef i32.gt_u i32.add
        local.get $n i32.add local.set $n`,
    'local.get $n',
  )
}
`;

/** The code unit at index $x of the u16 array at $src, looked up in the i32 table at $tbl (leaves the entry on the stack). */
const entryAt = (x) =>
  `local.get $tbl
        local.get $src ${x} i32.const 1 i32.shl i32.add i32.load16_u
        i32.const 2 i32.shl i32.add i32.load`;
/**
 * Eight code units at a time where the table would give each its own code unit (lowercased with
 * $lower): ASCII with no whitespace but single spaces (a space first only after a kept code unit,
 * one last only before a code unit that is not whitespace: a space run, or one at either end, may
 * collapse or trim, which the loop's own steps do). Where a block is refused, the loop's own steps
 * take its code units up to the one that refused it before eight are tried again ($skip), instead of
 * trying again after each single one (a line feed or a letter past ASCII cost up to eight refused tries).
 * Needs $v (v128), $bits, $lower, $skip.
 */
const asciiRun = (dst, positions) =>
  `        block $s
          local.get $i local.get $skip i32.lt_u br_if $s
          loop $S8
            local.get $i i32.const 8 i32.add local.get $b i32.gt_u br_if $s
            local.get $src local.get $i i32.const 1 i32.shl i32.add v128.load align=1 local.tee $v
            ${splat16(0x80)} i16x8.lt_u
            local.get $v ${splat16(9)} i16x8.sub ${splat16(5)} i16x8.ge_u v128.and
            i16x8.bitmask local.tee $bits i32.const 0xff i32.ne
            if
              ;; a code unit past ASCII or a control one: the loop's steps up to it and it
              local.get $i local.get $bits i32.const -1 i32.xor i32.ctz i32.add i32.const 1 i32.add local.set $skip
              br $s
            end
            local.get $v ${splat16(0x20)} i16x8.eq i16x8.bitmask local.tee $bits
            local.get $bits i32.const 1 i32.shr_u i32.and
            if
              ;; two spaces: the loop's steps up to the first, whose run they take whole
              local.get $i local.get $bits local.get $bits i32.const 1 i32.shr_u i32.and i32.ctz i32.add i32.const 1 i32.add local.set $skip
              br $s
            end
            local.get $bits i32.const 1 i32.and local.get $len i32.eqz i32.and
            if
              ;; a leading space, trimmed
              local.get $i i32.const 1 i32.add local.set $skip
              br $s
            end
            local.get $bits i32.const 0x80 i32.and
            if
              ;; a space last: kept as it is only before a code unit that is not whitespace
              local.get $i i32.const 8 i32.add local.get $b i32.ge_u
              if (result i32)
                i32.const 1
              else
                local.get $src local.get $i i32.const 1 i32.shl i32.add i32.load16_u offset=16 local.tee $bits
                i32.const 0x20 i32.eq local.get $bits i32.const 9 i32.sub i32.const 5 i32.lt_u i32.or
              end
              if
                local.get $i i32.const 8 i32.add local.set $skip
                br $s
              end
            end
            local.get ${dst} local.get $len i32.const 1 i32.shl i32.add
            local.get $v
            local.get $v ${splat16(0x41)} i16x8.sub ${splat16(26)} i16x8.lt_u
            local.get $lower i32.const 5 i32.shl i16x8.splat v128.and
            i16x8.add
            v128.store align=1${
    positions
      ? `
            local.get $pos local.get $i i32.const 2 i32.shl i32.add
            local.get $len i32x4.splat v128.const i32x4 0 1 2 3 i32x4.add v128.store align=1
            local.get $pos local.get $i i32.const 2 i32.shl i32.add
            local.get $len i32x4.splat v128.const i32x4 4 5 6 7 i32x4.add v128.store offset=16 align=1`
      : ''
  }
            local.get $len i32.const 8 i32.add local.set $len
            local.get $i i32.const 8 i32.add local.set $i
            br $S8
          end
        end
        local.get $i local.get $b i32.ge_u br_if $done
`;

/**
 * The normalizing loop unitHash and normalizeDoc share: the code units from $i up to $b through the
 * table, the kept ones written at `dst` and counted in $len, a run of whitespace as one space,
 * trimmed; with `positions`, each kept code unit's index in the source at $pos (i32 each). Returns
 * −(i+1) from the function at the first code unit i whose entry is neither.
 */
const normalizeLoop = (dst, positions, simd = false) =>
  `    block $done
      loop $L
        local.get $i local.get $b i32.ge_u br_if $done
${simd ? asciiRun(dst, positions) : ''}        ${entryAt('local.get $i')} local.tee $m
        i32.const 0 i32.ge_s
        if
${
    positions
      ? '          local.get $pos local.get $i i32.const 2 i32.shl i32.add local.get $len i32.store\n'
      : ''
  }          local.get ${dst} local.get $len i32.const 1 i32.shl i32.add local.get $m i32.store16
          local.get $len i32.const 1 i32.add local.set $len
          local.get $i i32.const 1 i32.add local.set $i
          br $L
        end
        local.get $m i32.const -2 i32.ne
        if
          i32.const -1 local.get $i i32.sub return
        end
        block $ws
          loop $W
            local.get $i i32.const 1 i32.add local.get $b i32.ge_u br_if $ws
            ${entryAt('local.get $i i32.const 1 i32.add')}
            i32.const -2 i32.ne br_if $ws
            local.get $i i32.const 1 i32.add local.set $i
            br $W
          end
        end
        local.get $len i32.const 0 i32.gt_s
        local.get $i i32.const 1 i32.add local.get $b i32.lt_u
        i32.and
        if
          local.get ${dst} local.get $len i32.const 1 i32.shl i32.add i32.const 0x20 i32.store16
          local.get $len i32.const 1 i32.add local.set $len
        end
        local.get $i i32.const 1 i32.add local.set $i
        br $L
      end
    end
`;
/** unitHash64's constants (src/hash/unitHash64.ts holds the same, and test/hash/unitHash64.test.ts checks the two agree). */
const H64 = {
  A0: '0x243f6a8885a308d3',
  B0: '0x13198a2e03707344',
  PA: '0x9e3779b97f4a7c15',
  PB: '0xc2b2ae3d27d4eb4f',
  PC: '0x165667b19e3779f9',
  PD: '0xd6e8feb86659fd93',
};
/** Lane x ← ((x ^ k) · p) ^ (that >>> 32), `k` the instructions that push the 64-bit word mixed in. */
const lane64 = (x, k, p) =>
  `local.get ${x} ${k} i64.xor i64.const ${p} i64.mul local.set ${x}
        local.get ${x} local.get ${x} i64.const 32 i64.shr_u i64.xor local.set ${x}`;
const unitHashFuncs = `  ;; What src/spans/unitHash.ts computes for a unit in JavaScript: the code units src[$a, $b) (u16 at
  ;; $src) normalized through the i32 table at $tbl (per code unit: its output code unit, or −2 for
  ;; whitespace, whose runs become one space, trimmed), written at $buf, then hashed as unitHash64
  ;; (src/hash/unitHash64.ts), its two halves to $out. Returns the normalized length, or −(i+1) at the
  ;; first code unit i whose entry is neither (the caller fills an unknown entry and calls again, or
  ;; takes the string path).
  (func (export "unitHash") (param $src i32) (param $a i32) (param $b i32) (param $tbl i32) (param $buf i32) (param $out i32) (result i32)
    (local $i i32) (local $len i32) (local $m i32)
    local.get $a local.set $i
${normalizeLoop('$buf', false)}    local.get $buf local.get $len local.get $out call $hashUnits)

  ;; unitHash64 (src/hash/unitHash64.ts) of the $len code units at $p (any alignment): its low and
  ;; high 32 bits to $out; returns $len. Two 64-bit lanes, 8 code units a step: a lane's multiply
  ;; waits only on its own last one, so the two run side by side (a quarter of textHash2's time).
  (func $hashUnits (export "hashUnits") (param $p i32) (param $len i32) (param $out i32) (result i32)
    (local $end i32) (local $r i32) (local $a i64) (local $b i64) (local $t i64)
    i64.const ${H64.A0} local.set $a
    i64.const ${H64.B0} local.set $b
    local.get $p local.get $len i32.const 3 i32.shr_u i32.const 4 i32.shl i32.add local.set $end
    block $hd
      loop $H
        local.get $p local.get $end i32.ge_u br_if $hd
        ${lane64('$a', 'local.get $p i64.load', H64.PA)}
        ${lane64('$b', 'local.get $p i64.load offset=8', H64.PB)}
        local.get $p i32.const 16 i32.add local.set $p
        br $H
      end
    end
    local.get $len i32.const 7 i32.and local.set $r
    local.get $r i32.const 4 i32.ge_u
    if
      ${lane64('$a', 'local.get $p i64.load', H64.PA)}
      local.get $p i32.const 8 i32.add local.set $p
      local.get $r i32.const 4 i32.sub local.set $r
    end
    local.get $r
    if
      local.get $p i64.load16_u local.set $t
      local.get $r i32.const 1 i32.gt_u
      if local.get $t local.get $p i64.load16_u offset=2 i64.const 16 i64.shl i64.or local.set $t end
      local.get $r i32.const 2 i32.gt_u
      if local.get $t local.get $p i64.load16_u offset=4 i64.const 32 i64.shl i64.or local.set $t end
      ${lane64('$b', 'local.get $t', H64.PB)}
    end
    ${lane64('$b', 'local.get $len i64.extend_i32_u', H64.PC)}
    ${lane64('$b', 'local.get $a', H64.PD)}
    ${lane64('$b', 'i64.const 0', H64.PA)}
    local.get $out local.get $b i64.store
    local.get $len)

  ;; A whole document normalized as unitHash normalizes a unit: the $n code units at $src through the
  ;; table at $tbl, written at $norm, and each non-blank code unit's index there at $pos (i32 each).
  ;; Returns the normalized length, or −(i+1) at the first code unit i whose entry is neither.
  (func (export "normalizeDoc") (param $src i32) (param $n i32) (param $tbl i32) (param $norm i32) (param $pos i32) (param $lower i32) (result i32)
    (local $i i32) (local $len i32) (local $m i32) (local $b i32) (local $v v128) (local $bits i32) (local $skip i32)
    local.get $n local.set $b
${normalizeLoop('$norm', true, true)}    local.get $len)
`;

/** Stores $v at byte offset `off` of the current unit record ($rec). */
const recStore = (v, off) => `local.get $rec ${v} i32.store offset=${off}`;
/**
 * Emits a unit into the next record at $out (6 i32: start, cut end, text end, normalized length,
 * the two hash lanes): the code units [$i, $b) normalized into $buf and hashed; a unit that
 * normalizes to nothing is written too (the caller skips it). With `check`, a full output stops
 * the call first, the resume position `resume` written to $info.
 */
const emitUnit = (start, end, textEnd, resume) => `
        local.get $count local.get $max i32.ge_u
        if
          local.get $info ${resume} i32.store
          local.get $count return
        end
        ${start} local.set $i
        ${textEnd} local.set $b
        i32.const 0 local.set $len
${normalizeLoop('$buf', false, true)}
        local.get $out local.get $count i32.const 24 i32.mul i32.add local.set $rec
        ${recStore(start, 0)}
        ${recStore(end, 4)}
        ${recStore(textEnd, 8)}
        ${recStore('local.get $len', 12)}
        local.get $buf local.get $len local.get $rec i32.const 16 i32.add call $hashUnits drop
        local.get $count i32.const 1 i32.add local.set $count`;

const spanFuncs = `  ;; Lines ($para = 0) or paragraphs (1) of the $n code units at $src, split as src/spans/units.ts
  ;; splits them, from $from (a line start where no paragraph is open), each normalized and hashed as
  ;; unitHash does, at most $max of them written at $out (6 i32 each: start, cut end, text end,
  ;; normalized length, the hash's two halves); the position to call again from goes to $info ($n: done).
  ;; Returns the units written, or −(i+1) at the first code unit i whose table entry is neither a
  ;; code unit nor whitespace (the caller fills an unknown one and calls again from $from; a
  ;; character that normalizes only in context, or a blank other than ASCII's, needs the string path).
  ;; One call per document, not one per unit, and no split in JavaScript: blank lines are those whose
  ;; code units all have the whitespace entry (a line whose normalization is empty, lines).
  (func (export "codeUnits") (param $src i32) (param $from i32) (param $n i32) (param $para i32) (param $tbl i32)
    (param $buf i32) (param $out i32) (param $max i32) (param $info i32) (result i32)
    (local $a i32) (local $nl i32) (local $te i32) (local $next i32) (local $count i32) (local $ps i32)
    (local $pe i32) (local $i i32) (local $b i32) (local $len i32) (local $m i32) (local $rec i32) (local $k i32)
    (local $v v128) (local $bits i32) (local $lower i32) (local $skip i32)
    local.get $para i32.const 1 i32.shr_u local.set $lower
    local.get $para i32.const 1 i32.and local.set $para
    local.get $from local.set $a
    i32.const -1 local.set $ps
    i32.const -1 local.set $pe
    block $end
      loop $line
        local.get $a local.get $n i32.ge_u br_if $end
        ;; the line feed that ends the line, or $n
        local.get $a local.set $nl
        block $f
          ;; eight code units at a time: the first line feed among them is the one
          block $f8
            loop $F8
              local.get $nl i32.const 8 i32.add local.get $n i32.gt_u br_if $f8
              local.get $src local.get $nl i32.const 1 i32.shl i32.add v128.load align=1
              v128.const i16x8 10 10 10 10 10 10 10 10 i16x8.eq i16x8.bitmask local.tee $bits
              if
                local.get $nl local.get $bits i32.ctz i32.add local.set $nl
                br $f
              end
              local.get $nl i32.const 8 i32.add local.set $nl
              br $F8
            end
          end
          loop $F
            local.get $nl local.get $n i32.ge_u br_if $f
            local.get $src local.get $nl i32.const 1 i32.shl i32.add i32.load16_u i32.const 0x0a i32.eq br_if $f
            local.get $nl i32.const 1 i32.add local.set $nl
            br $F
          end
        end
        local.get $nl i32.const 1 i32.add local.get $n local.get $nl local.get $n i32.lt_u select local.set $next
        ;; the line's text ends before a CR ahead of its line feed
        local.get $nl i32.const 1 i32.sub local.get $nl
        local.get $nl local.get $a i32.gt_u
        if (result i32)
          local.get $src local.get $nl i32.const 1 i32.shl i32.add i32.const 2 i32.sub i32.load16_u i32.const 0x0d i32.eq
        else
          i32.const 0
        end
        select local.set $te
        local.get $para
        if
          ;; blank: every code unit whitespace
          local.get $a local.set $i
          block $nb
            loop $B
              local.get $i local.get $te i32.ge_u br_if $nb
              ${entryAt('local.get $i')} local.tee $m
              i32.const -2 i32.eq
              if
                local.get $i i32.const 1 i32.add local.set $i
                br $B
              end
              local.get $m i32.const 0 i32.lt_s
              if
                i32.const -1 local.get $i i32.sub return
              end
            end
          end
          local.get $i local.get $te i32.lt_u
          if
            ;; a text line: it ends the open paragraph when a blank line came between (two line feeds or more)
            local.get $ps i32.const 0 i32.ge_s
            if
              i32.const 0 local.set $k
              local.get $pe local.set $i
              block $c
                loop $C
                  local.get $i local.get $a i32.ge_u br_if $c
                  local.get $k
                  local.get $src local.get $i i32.const 1 i32.shl i32.add i32.load16_u i32.const 0x0a i32.eq
                  i32.add local.set $k
                  local.get $i i32.const 1 i32.add local.set $i
                  br $C
                end
              end
              local.get $k i32.const 2 i32.ge_u
              if${emitUnit('local.get $ps', 'local.get $a', 'local.get $pe', 'local.get $ps')}
                i32.const -1 local.set $ps
              end
            end
            local.get $ps i32.const 0 i32.lt_s
            if
              local.get $a local.set $ps
            end
            local.get $te local.set $pe
          end
        else${emitUnit('local.get $a', 'local.get $next', 'local.get $te', 'local.get $a')}
          ;; a blank line is no unit
          local.get $len i32.eqz
          if
            local.get $count i32.const 1 i32.sub local.set $count
          end
        end
        local.get $next local.set $a
        br $line
      end
    end
    local.get $ps i32.const 0 i32.ge_s
    if${emitUnit('local.get $ps', 'local.get $n', 'local.get $pe', 'local.get $ps')}
    end
    local.get $info local.get $n i32.store
    local.get $count)

  ;; What src/spans/offsets.ts's OffsetCursor walks: from UTF-16 index $p of the $n code units at $src
  ;; up to $to, the code points (a pair one, a lone surrogate one) and UTF-8 bytes (a lone surrogate
  ;; 3) passed, to $out and $out + 4; returns the index reached ($to, or past it inside a pair).
  ;; Four ASCII code units at a time where they are.
  (func (export "utf8Offsets") (param $src i32) (param $p i32) (param $to i32) (param $n i32) (param $out i32) (result i32)
    (local $cp i32) (local $byte i32) (local $c i32)
    block $done
      loop $L
        local.get $p local.get $to i32.ge_u br_if $done
        local.get $p i32.const 4 i32.add local.get $to i32.le_u
        if
          local.get $src local.get $p i32.const 1 i32.shl i32.add i64.load
          i64.const 0xff80ff80ff80ff80 i64.and i64.eqz
          if
            local.get $p i32.const 4 i32.add local.set $p
            local.get $cp i32.const 4 i32.add local.set $cp
            local.get $byte i32.const 4 i32.add local.set $byte
            br $L
          end
        end
        local.get $src local.get $p i32.const 1 i32.shl i32.add i32.load16_u local.set $c
        local.get $cp i32.const 1 i32.add local.set $cp
        local.get $p i32.const 1 i32.add local.set $p
        local.get $c i32.const 0x80 i32.lt_u
        if
          local.get $byte i32.const 1 i32.add local.set $byte
          br $L
        end
        local.get $c i32.const 0x800 i32.lt_u
        if
          local.get $byte i32.const 2 i32.add local.set $byte
          br $L
        end
        ;; a high surrogate with its low one: one code point of four bytes
        local.get $c i32.const 0xfc00 i32.and i32.const 0xd800 i32.eq
        local.get $p local.get $n i32.lt_u i32.and
        if
          local.get $src local.get $p i32.const 1 i32.shl i32.add i32.load16_u i32.const 0xfc00 i32.and i32.const 0xdc00 i32.eq
          if
            local.get $byte i32.const 4 i32.add local.set $byte
            local.get $p i32.const 1 i32.add local.set $p
            br $L
          end
        end
        local.get $byte i32.const 3 i32.add local.set $byte
        br $L
      end
    end
    local.get $out local.get $cp i32.store
    local.get $out local.get $byte i32.store offset=4
    local.get $p)
`;

/** The sentence class (src/spans/sentences.ts) of the code unit at index `x` of $src, from the u8 table at $cls (code units below 256 only). */
const clsAt = (x) => `local.get $cls local.get $src ${x} i32.const 1 i32.shl i32.add i32.load16_u i32.add i32.load8_u`;
/** Whether class $k is blank (SP 4, LF 6, CR 7: the only \s among the classes handled). */
const blankClass = 'local.get $k i32.const 4 i32.eq local.get $k i32.const 6 i32.eq i32.or local.get $k i32.const 7 i32.eq i32.or';
/** $count ← the sentence [$last, end) emitted ($sentence), returning −1 from the function when the output is full. */
const sentenceAt = (end) => `
        local.get $src local.get $cls local.get $last ${end} local.get $out local.get $count local.get $max call $sentence local.tee $count
        i32.const 0 i32.lt_s
        if
          i32.const -1 return
        end
        ${end} local.set $last`;

const sentenceFuncs = `  ;; One sentence [$a, $e) of sentenceUnits: nothing when blank, else its record (start, end, first
  ;; and past the last non-blank code unit) at $out + 16·$count; returns the records written, −1 past $max.
  (func $sentence (param $src i32) (param $cls i32) (param $a i32) (param $e i32) (param $out i32) (param $count i32) (param $max i32) (result i32)
    (local $ts i32) (local $te i32) (local $k i32) (local $rec i32)
    local.get $a local.set $ts
    block $f
      loop $F
        local.get $ts local.get $e i32.ge_u br_if $f
        ${clsAt('local.get $ts')} local.set $k
        ${blankClass} i32.eqz br_if $f
        local.get $ts i32.const 1 i32.add local.set $ts
        br $F
      end
    end
    local.get $ts local.get $e i32.ge_u
    if
      local.get $count return
    end
    local.get $count local.get $max i32.ge_u
    if
      i32.const -1 return
    end
    local.get $e local.set $te
    block $g
      loop $G
        ${clsAt('local.get $te i32.const 1 i32.sub')} local.set $k
        ${blankClass} i32.eqz br_if $g
        local.get $te i32.const 1 i32.sub local.set $te
        br $G
      end
    end
    local.get $out local.get $count i32.const 4 i32.shl i32.add local.set $rec
    local.get $rec local.get $a i32.store
    local.get $rec local.get $e i32.store offset=4
    local.get $rec local.get $ts i32.store offset=8
    local.get $rec local.get $te i32.store offset=12
    local.get $count i32.const 1 i32.add)

  ;; The sentences of the $n code units at $src as src/spans/sentences.ts's sentenceEnds finds them
  ;; (UAX #29 for the texts of the classes in the u8 table at $cls, src/spans/sentences.ts's CLASS), the
  ;; non-blank ones as records of 4 i32 at $out (start, end, first and past the last non-blank code
  ;; unit), at most $max; returns how many, or −1 when a code unit has no class there (another
  ;; character: Intl.Segmenter's, with the text as a string) or the output is full.
  (func (export "sentenceUnits") (param $src i32) (param $n i32) (param $cls i32) (param $out i32) (param $max i32) (result i32)
    (local $i i32) (local $j i32) (local $k i32) (local $next i32) (local $q i32) (local $count i32) (local $last i32) (local $c i32) (local $p i32) (local $v v128) (local $w v128)
    ;; every code unit one of the classes handled: sixteen at a time while all sixteen are (below
    ;; 256, then each byte's class looked up by its two nibbles, ${SENTENCE_NIBBLES.note}), then one at a time
    block $v8
      loop $V
        local.get $i i32.const 16 i32.add local.get $n i32.gt_u br_if $v8
        local.get $src local.get $i i32.const 1 i32.shl i32.add v128.load align=1 local.tee $v
        local.get $src local.get $i i32.const 1 i32.shl i32.add v128.load offset=16 align=1 local.tee $w
        v128.or ${splat16(0xff00)} v128.and v128.any_true br_if $v8
        local.get $v local.get $w i8x16.narrow_i16x8_u local.set $v
        ${SENTENCE_NIBBLES.hi} local.get $v i32.const 4 i8x16.shr_u i8x16.swizzle
        ${SENTENCE_NIBBLES.lo} local.get $v ${splat8(0x0f)} v128.and i8x16.swizzle
        v128.and i8x16.all_true i32.eqz br_if $v8
        local.get $i i32.const 16 i32.add local.set $i
        br $V
      end
    end
    block $ok
      loop $H
        local.get $i local.get $n i32.ge_u br_if $ok
        local.get $src local.get $i i32.const 1 i32.shl i32.add i32.load16_u local.tee $c
        i32.const 256 i32.ge_u
        if
          i32.const -1 return
        end
        local.get $cls local.get $c i32.add i32.load8_u i32.eqz
        if
          i32.const -1 return
        end
        local.get $i i32.const 1 i32.add local.set $i
        br $H
      end
    end
    i32.const 0 local.set $i
    block $end
      loop $S
        ;; the next code unit a sentence may end at: a terminator or a paragraph separator (classes 6 to 9), past eight at a time where none is
        block $t8
          loop $T8
            local.get $i i32.const 8 i32.add local.get $n i32.gt_u br_if $t8
            local.get $src local.get $i i32.const 1 i32.shl i32.add v128.load align=1 local.set $v
            local.get $v ${splat16(0x2e)} i16x8.eq
            ${[0x21, 0x3f, 0x0d, 0x0a].map((c) => `local.get $v ${splat16(c)} i16x8.eq v128.or`).join('\n            ')}
            i16x8.bitmask local.tee $c
            if
              ;; the loop below starts at the first of them (it checked each of the eight in turn)
              local.get $i local.get $c i32.ctz i32.add local.set $i
              br $t8
            end
            local.get $i i32.const 8 i32.add local.set $i
            br $T8
          end
        end
        block $found
          loop $T
            local.get $i local.get $n i32.ge_u br_if $end
            ${clsAt('local.get $i')} i32.const 6 i32.ge_u br_if $found
            local.get $i i32.const 1 i32.add local.set $i
            br $T
          end
        end
        ${clsAt('local.get $i')} local.set $k
        local.get $k i32.const 6 i32.ge_u local.get $k i32.const 7 i32.le_u i32.and
        if
          ;; SB3: CR × LF; SB4: a paragraph separator ends its sentence.
          local.get $i i32.const 1 i32.add local.set $p
          local.get $k i32.const 7 i32.eq local.get $p local.get $n i32.lt_u i32.and
          if
            ${clsAt('local.get $p')} i32.const 6 i32.eq
            if
              local.get $i i32.const 2 i32.add local.set $p
            end
          end
          ${sentenceAt('local.get $p')}
          local.get $p local.set $i
          br $S
        end
        local.get $i i32.const 1 i32.add local.set $j
        local.get $k i32.const 8 i32.eq local.get $j local.get $n i32.lt_u i32.and
        if
          ;; SB6: ATerm × Numeric; SB7: (Upper | Lower) ATerm × Upper.
          ${clsAt('local.get $j')} local.tee $next i32.const 3 i32.eq
          if
            local.get $j local.set $i
            br $S
          end
          local.get $next i32.const 2 i32.eq local.get $i i32.const 0 i32.gt_u i32.and
          if
            ${clsAt('local.get $i i32.const 1 i32.sub')} local.tee $c i32.const 1 i32.eq local.get $c i32.const 2 i32.eq i32.or
            if
              local.get $j local.set $i
              br $S
            end
          end
        end
        block $sp
          loop $P
            local.get $j local.get $n i32.ge_u br_if $sp
            ${clsAt('local.get $j')} i32.const 4 i32.ne br_if $sp
            local.get $j i32.const 1 i32.add local.set $j
            br $P
          end
        end
        local.get $j local.get $n i32.ge_u br_if $end
        local.get $j local.set $i
        ;; SB9, SB10, SB8a: no break before a paragraph separator, SContinue or a terminator (classes 5 to 9).
        ${clsAt('local.get $j')} i32.const 5 i32.ge_u br_if $S
        local.get $k i32.const 8 i32.eq
        if
          ;; SB8: ATerm Sp* × (¬(OLetter | Upper | Lower | ParaSep | SATerm))* Lower.
          local.get $j local.set $q
          block $qd
            loop $Q
              local.get $q local.get $n i32.ge_u br_if $qd
              ${clsAt('local.get $q')} local.tee $c i32.const 3 i32.ne
              local.get $c i32.const 4 i32.ne i32.and local.get $c i32.const 5 i32.ne i32.and br_if $qd
              local.get $q i32.const 1 i32.add local.set $q
              br $Q
            end
          end
          local.get $q local.get $n i32.lt_u
          if
            ${clsAt('local.get $q')} i32.const 1 i32.eq br_if $S
          end
        end
        ;; SB11: the sentence ends after its terminator and spaces.
        ${sentenceAt('local.get $j')}
        br $S
      end
    end
    local.get $last local.get $n i32.lt_u
    if
      ${sentenceAt('local.get $n')}
    end
    local.get $count)
`;

/** Stores byte `b` (an i32 expression) at $o, then steps $o. */
const put8 = (b) => `local.get $o ${b} i32.store8 local.get $o i32.const 1 i32.add local.set $o`;
/** Writes `\u` and the four lowercase hexadecimal digits of $c at $o (JSON.stringify's escape). */
const hexEscape = `
          ${put8('i32.const 0x5c')}
          ${put8('i32.const 0x75')}
          ${
  [12, 8, 4, 0].map((sh) =>
    put8(
      `local.get $c i32.const ${sh} i32.shr_u i32.const 15 i32.and local.tee $x i32.const 0x30 i32.add local.get $x i32.const 0x57 i32.add local.get $x i32.const 10 i32.lt_u select`,
    )
  ).join('\n          ')
}`;

const jsonQuoteFuncs = `  ;; JSON.stringify of the string of $n UTF-16 code units at $src, as UTF-8 bytes at $out (the quotes,
  ;; the short escapes, \\u00xx for other controls and \\udxxx for a lone surrogate, in lowercase; every
  ;; other character as its UTF-8); returns the bytes written (at most 6·$n + 2). Why: JSON.stringify
  ;; of the text a cut record keeps, then its UTF-8 encoding, was 5 ns a code unit.
  (func (export "jsonQuote") (param $src i32) (param $n i32) (param $out i32) (result i32)
    (local $i i32) (local $o i32) (local $c i32) (local $d i32) (local $x i32) (local $v v128)
    local.get $out local.set $o
    ${put8('i32.const 0x22')}
    block $done
      loop $L
        ;; eight code units at a time, narrowed to bytes: those before the first that is not plain
        ;; ASCII (a control, a quote or a backslash, or past ASCII) are taken, and it goes to its own
        ;; steps below (before, a block was tried again after each single code unit). The eight bytes
        ;; always fit: $out has room for 6·$n + 2.
        block $one
          loop $V
            local.get $i i32.const 8 i32.add local.get $n i32.gt_u br_if $one
            local.get $src local.get $i i32.const 1 i32.shl i32.add v128.load align=1 local.tee $v
            ${splat16(0x20)} i16x8.sub ${splat16(0x60)} i16x8.lt_u
            local.get $v ${splat16(0x22)} i16x8.ne v128.and
            local.get $v ${splat16(0x5c)} i16x8.ne v128.and
            i16x8.bitmask local.set $x
            local.get $o local.get $v local.get $v i8x16.narrow_i16x8_u i64x2.extract_lane 0 i64.store align=1
            local.get $x i32.const 0xff i32.ne
            if
              local.get $x i32.const -1 i32.xor i32.ctz local.set $x
              local.get $o local.get $x i32.add local.set $o
              local.get $i local.get $x i32.add local.set $i
              br $one
            end
            local.get $o i32.const 8 i32.add local.set $o
            local.get $i i32.const 8 i32.add local.set $i
            br $V
          end
        end
        local.get $i local.get $n i32.ge_u br_if $done
        local.get $src local.get $i i32.const 1 i32.shl i32.add i32.load16_u local.set $c
        local.get $i i32.const 1 i32.add local.set $i
        local.get $c i32.const 0x80 i32.lt_u
        if
          local.get $c i32.const 0x20 i32.ge_u local.get $c i32.const 0x22 i32.ne i32.and local.get $c i32.const 0x5c i32.ne i32.and
          if
            ${put8('local.get $c')}
            br $L
          end
          ;; the short escapes: \\" \\\\ \\b \\f \\n \\r \\t
          i32.const 0 local.set $d
          local.get $c i32.const 0x22 i32.eq if i32.const 0x22 local.set $d end
          local.get $c i32.const 0x5c i32.eq if i32.const 0x5c local.set $d end
          local.get $c i32.const 0x08 i32.eq if i32.const 0x62 local.set $d end
          local.get $c i32.const 0x0c i32.eq if i32.const 0x66 local.set $d end
          local.get $c i32.const 0x0a i32.eq if i32.const 0x6e local.set $d end
          local.get $c i32.const 0x0d i32.eq if i32.const 0x72 local.set $d end
          local.get $c i32.const 0x09 i32.eq if i32.const 0x74 local.set $d end
          local.get $d
          if
            ${put8('i32.const 0x5c')}
            ${put8('local.get $d')}
            br $L
          end
          ${hexEscape}
          br $L
        end
        local.get $c i32.const 0x800 i32.lt_u
        if
          ${put8('local.get $c i32.const 6 i32.shr_u i32.const 0xc0 i32.or')}
          ${put8('local.get $c i32.const 0x3f i32.and i32.const 0x80 i32.or')}
          br $L
        end
        local.get $c i32.const 0xf800 i32.and i32.const 0xd800 i32.eq
        if
          ;; a high surrogate and its low one: one character of four bytes; any other surrogate alone: escaped
          local.get $c i32.const 0xdc00 i32.lt_u local.get $i local.get $n i32.lt_u i32.and
          if
            local.get $src local.get $i i32.const 1 i32.shl i32.add i32.load16_u local.tee $d
            i32.const 0xfc00 i32.and i32.const 0xdc00 i32.eq
            if
              local.get $c i32.const 0x3ff i32.and i32.const 10 i32.shl local.get $d i32.const 0x3ff i32.and i32.or i32.const 0x10000 i32.add local.set $x
              ${put8('local.get $x i32.const 18 i32.shr_u i32.const 0xf0 i32.or')}
              ${put8('local.get $x i32.const 12 i32.shr_u i32.const 0x3f i32.and i32.const 0x80 i32.or')}
              ${put8('local.get $x i32.const 6 i32.shr_u i32.const 0x3f i32.and i32.const 0x80 i32.or')}
              ${put8('local.get $x i32.const 0x3f i32.and i32.const 0x80 i32.or')}
              local.get $i i32.const 1 i32.add local.set $i
              br $L
            end
          end
          ${hexEscape}
          br $L
        end
        ${put8('local.get $c i32.const 12 i32.shr_u i32.const 0xe0 i32.or')}
        ${put8('local.get $c i32.const 6 i32.shr_u i32.const 0x3f i32.and i32.const 0x80 i32.or')}
        ${put8('local.get $c i32.const 0x3f i32.and i32.const 0x80 i32.or')}
        br $L
      end
    end
    ${put8('i32.const 0x22')}
    local.get $o local.get $out i32.sub)
`;

const jsonStringFuncs = `  ;; The value of hexadecimal digit $c, or −1.
  (func $hexDigit (param $c i32) (result i32)
    local.get $c i32.const 0x30 i32.sub i32.const 10 i32.lt_u
    if
      local.get $c i32.const 0x30 i32.sub return
    end
    local.get $c i32.const 0x20 i32.or i32.const 0x61 i32.sub i32.const 6 i32.lt_u
    if
      local.get $c i32.const 0x20 i32.or i32.const 0x57 i32.sub return
    end
    i32.const -1)

  ;; What src/spans/jsonScan.ts's decodeJsonString computes: the contents of a JSON string, UTF-8
  ;; bytes (valid) from $p up to its closing quote at $q, decoded into UTF-16 code units at $out as
  ;; JSON.parse decodes them (a \\u escape is one code unit, a lone surrogate included). Returns the
  ;; code units written, or −1 where JSON.parse refuses the string (a control character, an unknown
  ;; escape, a short \\u). The string's UTF-8 length (a lone surrogate counts 3) goes to $info (i32).
  (func (export "jsonString") (param $p i32) (param $q i32) (param $out i32) (param $info i32) (result i32)
    (local $i i32) (local $c i32) (local $o i32) (local $adj i32) (local $x i32) (local $u i32) (local $w i32) (local $v v128)
    local.get $p local.set $i
    local.get $out local.set $o
    block $bad
      block $done
        loop $L
          ;; A run of ASCII other than controls, the quote and the backslash (the closing quote ends it).
          block $run
            ;; Sixteen bytes at a time (before the closing quote), widened to code units: those before
            ;; the first other byte are taken, and that byte goes to its own steps below (the byte loop
            ;; took the rest of a block one byte at a time). The widened block always fits: a byte
            ;; decodes to at most one code unit, so $out has room for 2·($q − $p) bytes.
            block $one
              loop $V
                local.get $i i32.const 16 i32.add local.get $q i32.gt_u br_if $one
                local.get $i v128.load align=1 local.tee $v
                ${splat8(0x20)} i8x16.sub ${splat8(0x60)} i8x16.lt_u
                local.get $v ${splat8(0x22)} i8x16.ne v128.and
                local.get $v ${splat8(0x5c)} i8x16.ne v128.and
                i8x16.bitmask local.set $x
                local.get $o local.get $v i16x8.extend_low_i8x16_u v128.store align=1
                local.get $o local.get $v i16x8.extend_high_i8x16_u v128.store offset=16 align=1
                local.get $x i32.const 0xffff i32.ne
                if
                  local.get $x i32.const -1 i32.xor i32.ctz local.set $x
                  local.get $o local.get $x i32.const 1 i32.shl i32.add local.set $o
                  local.get $i local.get $x i32.add local.tee $i i32.load8_u local.set $c
                  br $run
                end
                local.get $o i32.const 32 i32.add local.set $o
                local.get $i i32.const 16 i32.add local.set $i
                br $V
              end
            end
            loop $R
              local.get $i i32.load8_u local.tee $c
              i32.const 0x20 i32.sub i32.const 0x60 i32.ge_u br_if $run
              local.get $c i32.const 0x22 i32.eq br_if $run
              local.get $c i32.const 0x5c i32.eq br_if $run
              local.get $o local.get $c i32.store16
              local.get $o i32.const 2 i32.add local.set $o
              local.get $i i32.const 1 i32.add local.set $i
              br $R
            end
          end
          local.get $i local.get $q i32.ge_u br_if $done
          local.get $c i32.const 0x20 i32.lt_u br_if $bad
          local.get $c i32.const 0x5c i32.eq
          if
            local.get $i i32.load8_u offset=1 local.set $x
            local.get $x i32.const 0x75 i32.eq
            if
              local.get $i i32.const 6 i32.add local.get $q i32.gt_u br_if $bad
              local.get $i i32.load8_u offset=2 call $hexDigit i32.const 12 i32.shl
              local.get $i i32.load8_u offset=3 call $hexDigit i32.const 8 i32.shl i32.or
              local.get $i i32.load8_u offset=4 call $hexDigit i32.const 4 i32.shl i32.or
              local.get $i i32.load8_u offset=5 call $hexDigit i32.or
              local.tee $u i32.const 0 i32.lt_s br_if $bad
              ;; Its UTF-8 bytes: 1, 2 or 3; a low surrogate right after a high one, 1 (4 with it).
              i32.const 3 local.set $w
              local.get $u i32.const 0x800 i32.lt_u
              if
                i32.const 2 local.set $w
              end
              local.get $u i32.const 0x80 i32.lt_u
              if
                i32.const 1 local.set $w
              end
              local.get $u i32.const 0xfc00 i32.and i32.const 0xdc00 i32.eq
              local.get $o local.get $out i32.gt_u i32.and
              if
                local.get $o i32.const 2 i32.sub i32.load16_u i32.const 0xfc00 i32.and i32.const 0xd800 i32.eq
                if
                  i32.const 1 local.set $w
                end
              end
              local.get $adj local.get $w i32.add i32.const 6 i32.sub local.set $adj
              local.get $o local.get $u i32.store16
              local.get $o i32.const 2 i32.add local.set $o
              local.get $i i32.const 6 i32.add local.set $i
              br $L
            end
            i32.const -1 local.set $u
            local.get $x i32.const 0x22 i32.eq local.get $x i32.const 0x5c i32.eq i32.or local.get $x i32.const 0x2f i32.eq i32.or
            if
              local.get $x local.set $u
            end
            local.get $x i32.const 0x6e i32.eq
            if
              i32.const 0x0a local.set $u
            end
            local.get $x i32.const 0x74 i32.eq
            if
              i32.const 0x09 local.set $u
            end
            local.get $x i32.const 0x72 i32.eq
            if
              i32.const 0x0d local.set $u
            end
            local.get $x i32.const 0x62 i32.eq
            if
              i32.const 0x08 local.set $u
            end
            local.get $x i32.const 0x66 i32.eq
            if
              i32.const 0x0c local.set $u
            end
            local.get $u i32.const 0 i32.lt_s br_if $bad
            local.get $o local.get $u i32.store16
            local.get $o i32.const 2 i32.add local.set $o
            local.get $i i32.const 2 i32.add local.set $i
            local.get $adj i32.const 1 i32.sub local.set $adj
            br $L
          end
          ;; Two, three or four bytes of UTF-8 (four: a surrogate pair).
          local.get $c i32.const 0xe0 i32.lt_u
          if
            local.get $o
            local.get $c i32.const 0x1f i32.and i32.const 6 i32.shl
            local.get $i i32.load8_u offset=1 i32.const 0x3f i32.and i32.or
            i32.store16
            local.get $o i32.const 2 i32.add local.set $o
            local.get $i i32.const 2 i32.add local.set $i
            br $L
          end
          local.get $c i32.const 0xf0 i32.lt_u
          if
            local.get $o
            local.get $c i32.const 0x0f i32.and i32.const 12 i32.shl
            local.get $i i32.load8_u offset=1 i32.const 0x3f i32.and i32.const 6 i32.shl i32.or
            local.get $i i32.load8_u offset=2 i32.const 0x3f i32.and i32.or
            i32.store16
            local.get $o i32.const 2 i32.add local.set $o
            local.get $i i32.const 3 i32.add local.set $i
            br $L
          end
          local.get $c i32.const 0x07 i32.and i32.const 18 i32.shl
          local.get $i i32.load8_u offset=1 i32.const 0x3f i32.and i32.const 12 i32.shl i32.or
          local.get $i i32.load8_u offset=2 i32.const 0x3f i32.and i32.const 6 i32.shl i32.or
          local.get $i i32.load8_u offset=3 i32.const 0x3f i32.and i32.or
          i32.const 0x10000 i32.sub local.set $u
          local.get $o local.get $u i32.const 10 i32.shr_u i32.const 0xd800 i32.add i32.store16
          local.get $o local.get $u i32.const 0x3ff i32.and i32.const 0xdc00 i32.add i32.store16 offset=2
          local.get $o i32.const 4 i32.add local.set $o
          local.get $i i32.const 4 i32.add local.set $i
          br $L
        end
      end
      local.get $info local.get $q local.get $p i32.sub local.get $adj i32.add i32.store
      local.get $o local.get $out i32.sub i32.const 1 i32.shr_u
      return
    end
    i32.const -1)
`;

/** Regions of the sweep's memory, each 4·$cap bytes from $base, in this order (`first` is $cap bytes, last). */
const SWEEP_REGIONS = ['byteAt', 'codeAt', 'p0', 'pow0', 'dq', 'dq2', 'gh', 'gh2', 'ah', 'wa', 'we', 'wj', 'walk', 'first'];
/** The i32 at element `idx` (a local or an expression pushing it) of region `r`. */
const at = (r, idx) => `local.get $${r} ${idx.startsWith('$') ? `local.get ${idx}` : idx} i32.const 2 i32.shl i32.add`;
const ld = (r, idx) => `${at(r, idx)} i32.load`;
/** The sweeps' locals for their regions, and each region's address from $base and $cap. */
const sweepRegionLocals = SWEEP_REGIONS.map((r) => `(local $${r} i32)`).join(' ');
const sweepRegionAddresses = SWEEP_REGIONS.map((r, i) => `    local.get $base local.get $cap i32.const ${4 * i} i32.mul i32.add local.set $${r}`).join('\n');
/**
 * Token $a as a window's start: passed over (br $next) unless a character's first; $e moved on to
 * the fewest tokens that reach $L bytes, and the sweep ended (br $done) when no window is left.
 */
const windowEnd = `local.get $first local.get $a i32.add i32.load8_u i32.eqz br_if $next
          ${ld('byteAt', '$a')} local.get $L i32.add local.set $need
          block $d1
            loop $E
              local.get $e local.get $n i32.ge_s br_if $d1
              ${ld('byteAt', '$e')} local.get $need i32.ge_s br_if $d1
              local.get $e i32.const 1 i32.add local.set $e
              br $E
            end
          end
          ${ld('byteAt', '$e')} local.get $need i32.lt_s br_if $done`;
/** Gram $g's hash under the two orders into $h and $h2, from the prefix hashes (uses $ca, $cb). */
const gramHashes = `${ld('codeAt', '$g')} local.set $ca
        ${ld('codeAt', 'local.get $g local.get $G i32.add')} local.set $cb
        ${ld('p0', '$cb')} ${ld('p0', '$ca')} ${ld('pow0', 'local.get $cb local.get $ca i32.sub')} i32.mul i32.sub local.set $h
        ${fmix('$h')}
        local.get $h i32.const 0x9e3779b9 i32.xor local.set $h2
        ${fmix('$h2')}`;
const sweepFuncs = `  ;; The windows of one document's token stream, as ByteWindows.sweep (src/spans/byteWindows.ts)
  ;; computes them in JavaScript: the $n tokens' byteAt and codeAt (n + 1 each), prefix hashes p0 and
  ;; powers pow0 (m + 1 each), first (u8), in the regions of SWEEP_REGIONS; writes gh, gh2, ah and per
  ;; window wa, we, wj; the deques are scratch. With $nw ≥ 0, only the $nw windows whose indices
  ;; (ascending) are in region walk: the grams of windows between them are not hashed (an anchor
  ;; depends on its window's grams alone, so the deques start again after a gap), and window k of
  ;; the list is written at k. Returns the count of all the windows.
  (func (export "sweep") (param $base i32) (param $cap i32) (param $n i32) (param $G i32) (param $L i32) (param $nw i32) (result i32)
    ${sweepRegionLocals}
    (local $head i32) (local $tail i32) (local $head2 i32) (local $tail2 i32) (local $g i32) (local $e i32)
    (local $w i32) (local $runs i32) (local $last1 i32) (local $last2 i32) (local $a i32) (local $need i32)
    (local $h i32) (local $h2 i32) (local $ca i32) (local $cb i32) (local $j1 i32) (local $j2 i32) (local $x i32)
    (local $k i32) (local $o i32) (local $fresh i32)
${sweepRegionAddresses}
    i32.const -1 local.set $runs
    i32.const -1 local.set $last1
    i32.const -1 local.set $last2
    block $done
      loop $A
        local.get $a local.get $n i32.ge_s br_if $done
        block $next
          ${windowEnd}
          ;; Window $w: walked when all are, or when it is the list's next ($o: where it is written).
          local.get $w local.set $o
          local.get $nw i32.const 0 i32.ge_s
          if
            block $walked
              local.get $k local.get $nw i32.lt_s
              if
                ${ld('walk', '$k')} local.get $w i32.eq br_if $walked
              end
              i32.const 1 local.set $fresh
              local.get $w i32.const 1 i32.add local.set $w
              br $next
            end
            local.get $k local.set $o
            local.get $k i32.const 1 i32.add local.set $k
            local.get $fresh
            if
              i32.const 0 local.set $fresh
              i32.const 0 local.set $head i32.const 0 local.set $tail
              i32.const 0 local.set $head2 i32.const 0 local.set $tail2
              i32.const -1 local.set $last1 i32.const -1 local.set $last2
              local.get $a local.set $g
            end
          end
          ;; The grams inside the window, [a, e − G], into both deques (least hash, the last of equal ones, at the head).
          block $d2
            loop $Gr
              local.get $g local.get $e local.get $G i32.sub i32.gt_s br_if $d2
              ${gramHashes}
              ${at('gh', '$g')} local.get $h i32.store
              ${at('gh2', '$g')} local.get $h2 i32.store
              block $p1
                loop $P1
                  local.get $tail local.get $head i32.le_s br_if $p1
                  ${ld('gh', `${ld('dq', 'local.get $tail i32.const 1 i32.sub')}`)} local.get $h i32.lt_u br_if $p1
                  local.get $tail i32.const 1 i32.sub local.set $tail
                  br $P1
                end
              end
              ${at('dq', '$tail')} local.get $g i32.store
              local.get $tail i32.const 1 i32.add local.set $tail
              block $p2
                loop $P2
                  local.get $tail2 local.get $head2 i32.le_s br_if $p2
                  ${ld('gh2', `${ld('dq2', 'local.get $tail2 i32.const 1 i32.sub')}`)} local.get $h2 i32.lt_u br_if $p2
                  local.get $tail2 i32.const 1 i32.sub local.set $tail2
                  br $P2
                end
              end
              ${at('dq2', '$tail2')} local.get $g i32.store
              local.get $tail2 i32.const 1 i32.add local.set $tail2
              local.get $g i32.const 1 i32.add local.set $g
              br $Gr
            end
          end
          block $h1
            loop $H1
              ${ld('dq', '$head')} local.get $a i32.ge_s br_if $h1
              local.get $head i32.const 1 i32.add local.set $head
              br $H1
            end
          end
          block $h2b
            loop $H2
              ${ld('dq2', '$head2')} local.get $a i32.ge_s br_if $h2b
              local.get $head2 i32.const 1 i32.add local.set $head2
              br $H2
            end
          end
          ${ld('dq', '$head')} local.set $j1
          ${ld('dq2', '$head2')} local.set $j2
          local.get $j1 local.get $last1 i32.ne local.get $j2 local.get $last2 i32.ne i32.or
          if
            local.get $j1 local.set $last1
            local.get $j2 local.set $last2
            local.get $runs i32.const 1 i32.add local.set $runs
            ${ld('gh', '$j1')} i32.const 0x85ebca6b i32.mul
            ${ld('gh2', '$j2')} i32.xor
            local.get $j2 local.get $j1 i32.sub i32.const 0xc2b2ae35 i32.mul i32.xor local.set $x
            ${fmix('$x')}
            ${at('ah', '$runs')} local.get $x i32.store
          end
          ${at('wa', '$o')} local.get $a i32.store
          ${at('we', '$o')} local.get $e i32.store
          ${at('wj', '$o')} local.get $runs i32.store
          local.get $w i32.const 1 i32.add local.set $w
        end
        local.get $a i32.const 1 i32.add local.set $a
        br $A
      end
    end
    local.get $w)
`;

/** The i64 at element `idx` of the i64 array at local `r` (its address). */
const at8 = (r, idx) => `local.get $${r} ${idx.startsWith('$') ? `local.get ${idx}` : idx} i32.const 3 i32.shl i32.add`;
/** A gram's key: its hash (sign bit flipped, so signed order is the hash's unsigned order) high, 2³² − 1 − its index low (the last of equal hashes least). */
const gramKey = (h) =>
  `local.get ${h} i32.const 0x80000000 i32.xor i64.extend_i32_u i64.const 32 i64.shl
              local.get $g i32.const -1 i32.xor i64.extend_i32_u i64.or`;
/** Pushes the lesser (signed) of the two i64 the instructions `x` and `y` push (uses $u, $v). */
const min64 = (x, y) => `${x} local.tee $u ${y} local.tee $v local.get $u local.get $v i64.lt_s select`;
/** $m ← the least key of order `o` (arrays $p<o>, $s<o>) over grams [$a, $b], blocks of 2^$lg, every window at least a block long. */
const windowMin = (o) =>
  `${min64(`${at8(`s${o}`, '$a')} i64.load`, `${at8(`p${o}`, '$b')} i64.load`)} local.set $m
            local.get $a local.get $lg i32.shr_u i32.const 1 i32.add local.set $i
            block $f${o}
              loop $F${o}
                local.get $i local.get $b local.get $lg i32.shr_u i32.ge_s br_if $f${o}
                ${min64('local.get $m', `${at8(`s${o}`, 'local.get $i local.get $lg i32.shl')} i64.load`)} local.set $m
                local.get $i i32.const 1 i32.add local.set $i
                br $F${o}
              end
            end`;
/** $j ← the gram of key $m, $hh ← its hash. */
const keyParts = `local.get $m i32.wrap_i64 i32.const -1 i32.xor local.set $j
            local.get $m i64.const 32 i64.shr_u i32.wrap_i64 i32.const 0x80000000 i32.xor local.set $hh`;
const sweepAllFuncs = `  ;; The sweep of every window (what sweep computes with $nw < 0) without its deques, whose pops a
  ;; branch predicts badly (about 35 ns a window). Each gram's key (gramKey), per order, goes into
  ;; prefix minima ($p1, $p2) and suffix minima ($s1, $s2) within blocks of 2^$lg grams, 2^$lg no
  ;; longer than the shortest window; a window's least key is then the least of its first gram's
  ;; suffix, its last gram's prefix and the blocks whole between (van Herk / Gil-Werman). $p1 lies
  ;; over the regions dq and dq2, $s1 over gh and gh2, $p2 and $s2 (8·$cap bytes each) past first.
  (func (export "sweepAll") (param $base i32) (param $cap i32) (param $n i32) (param $G i32) (param $L i32) (result i32)
    ${sweepRegionLocals}
    (local $p1 i32) (local $s1 i32) (local $p2 i32) (local $s2 i32) (local $g i32) (local $e i32) (local $w i32) (local $runs i32)
    (local $last1 i32) (local $last2 i32) (local $a i32) (local $b i32) (local $need i32) (local $h i32) (local $h2 i32)
    (local $ca i32) (local $cb i32) (local $j i32) (local $j1 i32) (local $hh i32) (local $hh1 i32) (local $x i32) (local $lg i32)
    (local $least i32) (local $ng i32) (local $i i32) (local $bm i32) (local $k1 i64) (local $k2 i64) (local $m i64) (local $u i64) (local $v i64)
${sweepRegionAddresses}
    local.get $dq local.set $p1
    local.get $gh local.set $s1
    local.get $first local.get $cap i32.add i32.const 7 i32.add i32.const -8 i32.and local.tee $p2
    local.get $cap i32.const 3 i32.shl i32.add local.set $s2
    i32.const 0x7fffffff local.set $least
    ;; The windows: wa, we, and the fewest grams one holds.
    block $done
      loop $A
        local.get $a local.get $n i32.ge_s br_if $done
        block $next
          ${windowEnd}
          ${at('wa', '$w')} local.get $a i32.store
          ${at('we', '$w')} local.get $e i32.store
          local.get $e local.get $G i32.sub local.get $a i32.sub i32.const 1 i32.add local.tee $i
          local.get $least i32.lt_s
          if local.get $i local.set $least end
          local.get $w i32.const 1 i32.add local.set $w
        end
        local.get $a i32.const 1 i32.add local.set $a
        br $A
      end
    end
    local.get $w i32.eqz
    if i32.const 0 return end
    i32.const 31 local.get $least i32.clz i32.sub local.set $lg
    i32.const 1 local.get $lg i32.shl i32.const 1 i32.sub local.set $bm
    ;; The grams' keys, [0, ng): prefix minima forward, the keys themselves into the suffix arrays.
    ${ld('we', 'local.get $w i32.const 1 i32.sub')} local.get $G i32.sub i32.const 1 i32.add local.set $ng
    block $d2
      loop $Gr
        local.get $g local.get $ng i32.ge_s br_if $d2
        ${gramHashes}
        ${gramKey('$h')} local.set $k1
        ${gramKey('$h2')} local.set $k2
        ${at8('s1', '$g')} local.get $k1 i64.store
        ${at8('s2', '$g')} local.get $k2 i64.store
        local.get $g local.get $bm i32.and
        if
          ${min64('local.get $k1', `${at8('p1', 'local.get $g i32.const 1 i32.sub')} i64.load`)} local.set $k1
          ${min64('local.get $k2', `${at8('p2', 'local.get $g i32.const 1 i32.sub')} i64.load`)} local.set $k2
        end
        ${at8('p1', '$g')} local.get $k1 i64.store
        ${at8('p2', '$g')} local.get $k2 i64.store
        local.get $g i32.const 1 i32.add local.set $g
        br $Gr
      end
    end
    ;; Suffix minima backward, within blocks.
    local.get $ng i32.const 2 i32.sub local.set $g
    block $d3
      loop $S
        local.get $g i32.const 0 i32.lt_s br_if $d3
        local.get $g i32.const 1 i32.add local.get $bm i32.and
        if
          ${at8('s1', '$g')} ${min64(`${at8('s1', '$g')} i64.load`, `${at8('s1', 'local.get $g i32.const 1 i32.add')} i64.load`)} i64.store
          ${at8('s2', '$g')} ${min64(`${at8('s2', '$g')} i64.load`, `${at8('s2', 'local.get $g i32.const 1 i32.add')} i64.load`)} i64.store
        end
        local.get $g i32.const 1 i32.sub local.set $g
        br $S
      end
    end
    ;; Each window's anchor grams, and a new run where either changes.
    i32.const -1 local.set $runs
    i32.const -1 local.set $last1
    i32.const -1 local.set $last2
    block $d5
      loop $R
        local.get $x local.get $w i32.ge_s br_if $d5
        ${ld('wa', '$x')} local.set $a
        ${ld('we', '$x')} local.get $G i32.sub local.set $b
        ${windowMin(1)}
        ${keyParts}
        local.get $j local.set $j1
        local.get $hh local.set $hh1
        ${windowMin(2)}
        ${keyParts}
        local.get $j1 local.get $last1 i32.ne local.get $j local.get $last2 i32.ne i32.or
        if
          local.get $j1 local.set $last1
          local.get $j local.set $last2
          local.get $runs i32.const 1 i32.add local.set $runs
          local.get $hh1 i32.const 0x85ebca6b i32.mul
          local.get $hh i32.xor
          local.get $j local.get $j1 i32.sub i32.const 0xc2b2ae35 i32.mul i32.xor local.set $h
          ${fmix('$h')}
          ${at('ah', '$runs')} local.get $h i32.store
        end
        ${at('wj', '$x')} local.get $runs i32.store
        local.get $x i32.const 1 i32.add local.set $x
        br $R
      end
    end
    local.get $w)
`;

const wat = `;; Generated by scripts/build-wasm.mjs: do not edit by hand.
;; Hot kernels of the fast signing path (each computes exactly what src/sketch/kernels.ts computes)
;; and of exact verification (what src/similarity/probeSet.ts computes).
(module
  (memory (export "memory") 32)

${symbolizeFuncs}
  ;; The same over UTF-8 bytes (pass 1 signs JSONL, text and id⇥text lines from their bytes).
${symbolizeBytesFuncs}
${byteScanFuncs}
${unitHashFuncs}
${spanFuncs}
${sentenceFuncs}
${jsonQuoteFuncs}
${jsonStringFuncs}
${sweepFuncs}
${sweepAllFuncs}
  ;; OPH bin minima from n > k symbols at $syms (see ophBinsFromSymbols). $bins holds np u32 minima
  ;; (pre-filled by the caller). $shift = 32 − log2(np) when np is a power of two ≥ 2, else 0.
  (func (export "oph") (param $syms i32) (param $n i32) (param $k i32) (param $bk i32) (param $pre i32)
      (param $bins i32) (param $np i32) (param $shift i32)
    (local $h i32) (local $p i32) (local $end i32) (local $k4 i32) (local $z i32) (local $a i32) (local $old i32) (local $scale f64) (local $z2 i32)
    ${firstWindow}
    local.get $np f64.convert_i32_u f64.const 4294967296 f64.div local.set $scale
    ;; the first window's z, then the rolling windows; $p points at the next entering symbol
    local.get $h local.set $z
    ${fmix('$z')}
    local.get $z local.get $pre i32.xor local.set $z
    ${fmix('$z')}
    local.get $bins local.get $z f64.convert_i32_u local.get $scale f64.mul i32.trunc_f64_u i32.const 2 i32.shl i32.add local.set $a
    ${update}
    local.get $shift
    if
      ;; Two windows per turn (the loop's own compare, branch and step are a tenth of a window's
      ;; work), bins updated in window order; then the odd one out.
      block $d1
        loop $L1
          local.get $p i32.const 4 i32.add local.get $end i32.ge_u br_if $d1
          ${roll}
          local.get $h local.set $z
          ${roll4}
          local.get $h local.set $z2
          ${fmix('$z')}
          ${fmix('$z2')}
          local.get $z local.get $pre i32.xor local.set $z
          local.get $z2 local.get $pre i32.xor local.set $z2
          ${fmix('$z')}
          ${fmix('$z2')}
          local.get $bins local.get $z local.get $shift i32.shr_u i32.const 2 i32.shl i32.add local.set $a
          ${update}
          local.get $bins local.get $z2 local.get $shift i32.shr_u i32.const 2 i32.shl i32.add local.set $a
          ${update2}
          local.get $p i32.const 8 i32.add local.set $p
          br $L1
        end
      end
      local.get $p local.get $end i32.lt_u
      if
        ${roll}
        local.get $h local.set $z
        ${fmix('$z')}
        local.get $z local.get $pre i32.xor local.set $z
        ${fmix('$z')}
        local.get $bins local.get $z local.get $shift i32.shr_u i32.const 2 i32.shl i32.add local.set $a
        ${update}
      end
    else
      block $d2
        loop $L2
          local.get $p local.get $end i32.ge_u br_if $d2
          ${roll}
          local.get $h local.set $z
          ${fmix('$z')}
          local.get $z local.get $pre i32.xor local.set $z
          ${fmix('$z')}
          local.get $bins local.get $z f64.convert_i32_u local.get $scale f64.mul i32.trunc_f64_u i32.const 2 i32.shl i32.add local.set $a
          ${update}
          local.get $p i32.const 4 i32.add local.set $p
          br $L2
        end
      end
    end)

  ;; Character k-gram fingerprints of n > k symbols at $syms into $out (n − k + 1 of them).
  (func (export "fingerprints") (param $syms i32) (param $n i32) (param $k i32) (param $bk i32) (param $out i32)
    (local $h i32) (local $p i32) (local $end i32) (local $k4 i32) (local $z i32) (local $o i32)
    ${firstWindow}
    local.get $out local.set $o
    local.get $h local.set $z
    ${fmix('$z')}
    local.get $o local.get $z i32.store
    local.get $o i32.const 4 i32.add local.set $o
    block $d1
      loop $L1
        local.get $p local.get $end i32.ge_u br_if $d1
        ${roll}
        local.get $h local.set $z
        ${fmix('$z')}
        local.get $o local.get $z i32.store
        local.get $o i32.const 4 i32.add local.set $o
        local.get $p i32.const 4 i32.add local.set $p
        br $L1
      end
    end)

  ;; OPH's fill rounds (ophFillRounds in src/sketch/minhash.ts) for the bins of $bins (np u32) that
  ;; round 0 left empty (0xffffffff), from the m >= 1 fingerprints at $fps, premixed in place to
  ;; z = fmix32(fp ^ pre). Round t offers every z to bin floor(fmix32(z ^ t*0x9e3779b9) * np / 2^32)
  ;; (from t = np on, to bin t - np), where it fills an empty bin or lowers one filled in the same
  ;; round. $round: np i32 of scratch (the round that filled each bin; -1 while empty). Short
  ;; documents leave bins empty most of the time: this was half of signing them, in JavaScript.
  (func (export "ophFill") (param $fps i32) (param $m i32) (param $pre i32) (param $bins i32) (param $np i32) (param $round i32)
    (local $p i32) (local $end i32) (local $z i32) (local $i i32) (local $empty i32) (local $t i32) (local $salt i32)
    (local $bin i32) (local $r i32) (local $scale f64)
${premix('$m', '$z')}
    block $d1
      loop $L1
        local.get $i local.get $np i32.ge_u br_if $d1
        local.get $bins local.get $i i32.const 2 i32.shl i32.add i32.load i32.const -1 i32.eq
        if
          local.get $round local.get $i i32.const 2 i32.shl i32.add i32.const -1 i32.store
          local.get $empty i32.const 1 i32.add local.set $empty
        else
          local.get $round local.get $i i32.const 2 i32.shl i32.add i32.const 0 i32.store
        end
        local.get $i i32.const 1 i32.add local.set $i
        br $L1
      end
    end
    local.get $np f64.convert_i32_u f64.const 4294967296 f64.div local.set $scale
    i32.const 1 local.set $t
    block $d2
      loop $L2
        local.get $empty i32.eqz br_if $d2
        local.get $t i32.const 0x9e3779b9 i32.mul local.set $salt
        local.get $fps local.set $p
        block $d3
          loop $L3
            local.get $p local.get $end i32.ge_u br_if $d3
            local.get $p i32.load local.get $salt i32.xor local.set $z
            ${fmix('$z')}
            local.get $t local.get $np i32.sub
            local.get $z f64.convert_i32_u local.get $scale f64.mul i32.trunc_f64_u
            local.get $t local.get $np i32.ge_u select
            i32.const 2 i32.shl local.set $bin
            local.get $round local.get $bin i32.add i32.load local.set $r
            local.get $r i32.const -1 i32.eq
            if
              local.get $round local.get $bin i32.add local.get $t i32.store
              local.get $bins local.get $bin i32.add local.get $z i32.store
              local.get $empty i32.const 1 i32.sub local.set $empty
            else
              local.get $r local.get $t i32.eq
              if
                local.get $z local.get $bins local.get $bin i32.add i32.load i32.lt_u
                if
                  local.get $bins local.get $bin i32.add local.get $z i32.store
                end
              end
            end
            local.get $p i32.const 4 i32.add local.set $p
            br $L3
          end
        end
        local.get $t i32.const 1 i32.add local.set $t
        br $L2
      end
    end)

  ;; Classic MinHash of n ≥ 1 fingerprints at $fps (overwritten with their premixed values):
  ;; out[i] = min_j xorshift16((fmix32(fp_j ^ pre) ^ b[i]) · a[i]), np a multiple of 4.
  ;; 16 slots per sweep in four i32x4 accumulators, then 4 at a time.
  (func (export "classic") (param $fps i32) (param $n i32) (param $pre i32) (param $pa i32) (param $pb i32)
      (param $out i32) (param $np i32)
    (local $p i32) (local $end i32) (local $x i32) (local $g i32) (local $gend i32)
    (local $z v128) (local $t v128)
    (local $va0 v128) (local $va1 v128) (local $va2 v128) (local $va3 v128)
    (local $vb0 v128) (local $vb1 v128) (local $vb2 v128) (local $vb3 v128)
    (local $m0 v128) (local $m1 v128) (local $m2 v128) (local $m3 v128)
${premix('$n', '$x')}
    ;; $g is the byte offset of the current slot group
    local.get $np i32.const 2 i32.shl local.set $gend
    block $dg
      loop $LG
        local.get $g i32.const 64 i32.add local.get $gend i32.gt_u br_if $dg
        local.get $pa local.get $g i32.add v128.load local.set $va0
        local.get $pa local.get $g i32.add v128.load offset=16 local.set $va1
        local.get $pa local.get $g i32.add v128.load offset=32 local.set $va2
        local.get $pa local.get $g i32.add v128.load offset=48 local.set $va3
        local.get $pb local.get $g i32.add v128.load local.set $vb0
        local.get $pb local.get $g i32.add v128.load offset=16 local.set $vb1
        local.get $pb local.get $g i32.add v128.load offset=32 local.set $vb2
        local.get $pb local.get $g i32.add v128.load offset=48 local.set $vb3
        v128.const i32x4 -1 -1 -1 -1 local.tee $m0 local.tee $m1 local.tee $m2 local.set $m3
        local.get $fps local.set $p
        block $d1
          loop $L1
            local.get $p local.get $end i32.ge_u br_if $d1
            local.get $p v128.load32_splat local.set $z
            ${group(0)}
            ${group(1)}
            ${group(2)}
            ${group(3)}
            local.get $p i32.const 4 i32.add local.set $p
            br $L1
          end
        end
        local.get $out local.get $g i32.add local.get $m0 v128.store
        local.get $out local.get $g i32.add local.get $m1 v128.store offset=16
        local.get $out local.get $g i32.add local.get $m2 v128.store offset=32
        local.get $out local.get $g i32.add local.get $m3 v128.store offset=48
        local.get $g i32.const 64 i32.add local.set $g
        br $LG
      end
    end
    block $dh
      loop $LH
        local.get $g i32.const 16 i32.add local.get $gend i32.gt_u br_if $dh
        local.get $pa local.get $g i32.add v128.load local.set $va0
        local.get $pb local.get $g i32.add v128.load local.set $vb0
        v128.const i32x4 -1 -1 -1 -1 local.set $m0
        local.get $fps local.set $p
        block $d2
          loop $L2
            local.get $p local.get $end i32.ge_u br_if $d2
            local.get $p v128.load32_splat local.set $z
            ${group(0)}
            local.get $p i32.const 4 i32.add local.set $p
            br $L2
          end
        end
        local.get $out local.get $g i32.add local.get $m0 v128.store
        local.get $g i32.const 16 i32.add local.set $g
        br $LH
      end
    end)

${setFuncs})
`;

/**
 * The set kernels alone over an imported shared memory: streaming verification's workers all run
 * them on one memory that holds every set (src/parallel/setArena.ts), so a pair's held set is
 * probed where it lies and a new set is written straight into its block, without copies.
 */
const sharedWat = `;; Generated by scripts/build-wasm.mjs: do not edit by hand.
;; The symbolize and set kernels of kernels.wat over an imported shared memory (up to 4 GiB).
(module
  (import "env" "memory" (memory 1 65536 shared))
${symbolizeFuncs}
  ;; The same over UTF-8 bytes (verification reads JSONL texts as bytes: src/io/read/jsonLine.ts).
${symbolizeBytesFuncs}
${setFuncs})
`;

writeFileSync(join(outDir, 'kernels.wat'), wat);
writeFileSync(join(outDir, 'setKernelsShared.wat'), sharedWat);
const wabt = await wabtInit();
const binary = (name, text) => {
  const mod = wabt.parseWat(name, text, { simd: true, threads: true });
  const { buffer } = mod.toBinary({});
  mod.destroy();
  return Buffer.from(buffer);
};
const main = binary('kernels.wat', wat);
const shared = binary('setKernelsShared.wat', sharedWat);
writeFileSync(
  join(outDir, 'kernelsBinary.ts'),
  `/**\n * The compiled WebAssembly kernels (src/wasm/kernels.wat, src/wasm/setKernelsShared.wat), base64.\n * Generated by scripts/build-wasm.mjs.\n * @module\n */\n\n/** The kernels module's bytes, base64-encoded (${main.length} bytes). */\nexport const KERNELS_WASM_BASE64 =\n  '${
    main.toString('base64')
  }';\n\n/** The shared-memory set kernels module's bytes, base64-encoded (${shared.length} bytes). */\nexport const SET_KERNELS_SHARED_WASM_BASE64 =\n  '${
    shared.toString('base64')
  }';\n`,
);
console.log(`wrote src/wasm/kernels.wat, setKernelsShared.wat and kernelsBinary.ts (${main.length} + ${shared.length} bytes)`);
