// ESLint (flat config): a small set of rules that catch bugs, not style (layout is dprint's:
// dprint.json). Type-aware rules (floating promises and friends) use the TypeScript project.
// Rationale for each rule is in CONTRIBUTING.md ("Lint").
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/data/**', 'test-artifacts/**', 'src/wasm/*.wasm', 'src/web/types/**', 'test/fixtures/consumer/**'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Promises: a forgotten await loses errors and ordering.
      // node:test's test()/describe() return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] }] },
      ],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/await-thenable': 'error',
      'no-async-promise-executor': 'error',
      // Dead or mistaken code.
      '@typescript-eslint/no-unused-vars': ['error', { args: 'none', caughtErrors: 'none', ignoreRestSiblings: true }],
      'no-unreachable': 'error',
      'no-fallthrough': 'error',
      'no-duplicate-case': 'error',
      'no-dupe-else-if': 'error',
      'no-self-assign': 'error',
      'no-self-compare': 'error',
      'no-cond-assign': ['error', 'except-parens'],
      'no-unsafe-finally': 'error',
      'no-sparse-arrays': 'error',
      'no-loss-of-precision': 'error',
      'no-constant-binary-expression': 'error',
      'use-isnan': 'error',
      'valid-typeof': 'error',
      // == coerces ('' == 0); == null stays allowed as the one idiom for null-or-undefined.
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      '@typescript-eslint/no-for-in-array': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    rules: {
      'no-unused-vars': ['error', { args: 'none', caughtErrors: 'none' }],
      'no-unreachable': 'error',
      'no-fallthrough': 'error',
      'no-duplicate-case': 'error',
      'no-self-compare': 'error',
      'no-cond-assign': ['error', 'except-parens'],
      'no-constant-binary-expression': 'error',
      'use-isnan': 'error',
      'valid-typeof': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // no-undef is left to TypeScript: src/web/tsconfig.json type-checks the browser scripts.
    },
    languageOptions: { ecmaVersion: 2022, sourceType: 'module', globals: {} },
  },
);
