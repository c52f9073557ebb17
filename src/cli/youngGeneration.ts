/**
 * V8's young generation for `neardup spans` over substring windows. V8 grows the young generation
 * (doubling its semi-spaces, up to 16 MB each) while much of it survives a scavenge; the substring
 * passes keep allocating short-lived values beside large typed arrays, and that growth held 30–45 MB
 * of a 230 MB peak on a 50.9 MB input. Kept at its first size (`--semi-space-growth-factor=1`, which
 * V8 reads at each scavenge, so it applies when set after start, on Node 20 as on 24), the peak
 * falls from 222–227 to 192–193 MiB for 100-byte windows and from 130 to 97–102 MiB for 50-word
 * windows, with the same CPU (bench/RESULTS.md). Lines took ~20 % more CPU and 10 % more memory with
 * it (more values promoted to the old generation), so the other units keep V8's default. The CLI
 * only: a library caller's process keeps its own settings.
 * @module
 */
import v8 from 'node:v8';

/** Keeps the young generation at its first size from now on, for this process. */
export function keepYoungGenerationSmall(): void {
  v8.setFlagsFromString('--semi-space-growth-factor=1');
}
