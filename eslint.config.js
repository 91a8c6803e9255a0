// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'dist-check/', 'node_modules/', 'data/', 'bench/results/', 'bench/.cache/', 'coverage/', 'test-artifacts/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    // Node 24 aborts when V8 collects a better-sqlite3 object; only openSqliteDatabase keeps them all.
    files: ['**/*.ts'],
    ignores: ['src/store/sqlite/sqlite-database.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'better-sqlite3',
              allowTypeImports: true,
              message:
                'Open databases with openSqliteDatabase (src/store/sqlite/sqlite-database.ts): a collected Statement aborts Node 24.',
            },
          ],
        },
      ],
    },
  },
  {
    // A module awaiting at its top level, in a worker thread that is stopped meanwhile, aborted
    // the whole process on Node 24 (src/representation/representation.ts, loadRepresentationHash).
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: ':matches(AwaitExpression, ForOfStatement[await=true]):not(:function *)',
          message: 'No top-level await in src/: export an async function and await it where it is used (see loadRepresentationHash).',
        },
      ],
    },
  },
);
