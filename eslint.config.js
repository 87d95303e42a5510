// ESLint flat config: `npm run lint` (CI runs it before the tests and allows no warning).
// TypeScript is linted with type information: each file is checked against the tsconfig.json nearest to
// it (the project service), so the server, tests and benches use ./tsconfig.json and the web UI uses
// src/web/tsconfig.json (DOM, Preact JSX). Plain JavaScript (bench, scripts, bin) gets the rules that
// need no types.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Unused names are errors, except a deliberate `_name` (an argument an interface requires, a skipped element). */
const unusedVars = [
  'error',
  {
    argsIgnorePattern: '^_',
    varsIgnorePattern: '^_',
    caughtErrorsIgnorePattern: '^_',
    destructuredArrayIgnorePattern: '^_',
    ignoreRestSiblings: true,
  },
];

export default defineConfig(
  // src/web/api-types.ts and channel-configs.ts are generated from /openapi.json (npm run generate:api-types).
  globalIgnores(['dist/', 'data/', 'coverage/', 'test-results/', 'bench/results/', 'src/web/api-types.ts', 'src/web/channel-configs.ts']),
  // A disable comment that no longer suppresses anything fails the lint, so none outlives its reason.
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },

  js.configs.recommended,
  {
    rules: { 'no-unused-vars': unusedVars },
  },

  // JavaScript run by Node: the benches, scripts, the bin entry and the config files.
  {
    files: ['**/*.{js,mjs,cjs}'],
    ignores: ['src/web/public/**'],
    languageOptions: { globals: globals.node },
  },
  // Served as is to the browser (no bundler): a classic script, not a module.
  {
    files: ['src/web/public/**/*.js'],
    languageOptions: { sourceType: 'script', globals: globals.browser },
  },

  // TypeScript, type-aware.
  {
    files: ['**/*.{ts,tsx,mts,cts}'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: {
          // Config files that no tsconfig includes get a default project instead of failing.
          allowDefaultProject: ['vitest.config.ts', 'src/web/vite.config.ts'],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      'no-unused-vars': 'off',
      '@typescript-eslint/no-unused-vars': unusedVars,
      // Off: `async` without `await` is how this code meets a contract. Fastify plugins are typed
      // FastifyPluginAsync, and a hook that is not async must call `done` or the request hangs;
      // Kysely's driver and migration-provider interfaces return promises.
      '@typescript-eslint/require-await': 'off',
      // Passing on a rejection reason as received (`reject(e)` in a `.then`) is right; what this rule
      // is for is rejecting with a literal. Same defaults as only-throw-error.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
    },
  },

  // Tests read response bodies as loosely typed JSON (`readJson` returns any) and assert on their shape
  // with expect(); typing each body would restate the API's schemas. The `any` rules are off there only.
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },

  // The web UI runs in the browser; Preact's hooks follow React's rules.
  {
    files: ['src/web/**/*.{ts,tsx}'],
    languageOptions: { globals: globals.browser },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
    },
  },
);
