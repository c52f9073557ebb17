// page.js imports './passages.js', which the server serves from the compiled library
// (dist/src/similarity/passages.js); rootDirs in src/web/tsconfig.json resolves it here.
export * from '../../similarity/passages.js';
