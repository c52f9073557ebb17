// Bundles the compiled CLI (dist/src/cli/main.js) into dist/cli/: why a bundle, see docs/architecture.md
// ("Start-up"). Statically imported modules are merged, so a run resolves and compiles a handful of
// files instead of ~90; dynamic imports stay separate chunks, so code a command does not need is
// still not loaded. The worker scripts are entries of their own next to the chunks, where the pools
// look for them (`new URL('./signWorker.js', import.meta.url)`). npm packages stay external.
// Run by `npm run build`, after tsc.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';

const outdir = 'dist/cli';
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: {
    main: 'dist/src/cli/main.js',
    signWorker: 'dist/src/parallel/signWorker.js',
    prepareWorker: 'dist/src/online/prepareWorker.js',
    rebuildWorker: 'dist/src/store/file/rebuildWorker.js',
    taskChild: 'dist/src/run/taskChild.js',
  },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
});
