// @ts-check
/**
 * ESLint flat config for the OpenBot monorepo.
 *
 * Base: `eslint.configs.recommended` + `tseslint.configs.recommended` (the non-type-checked preset;
 * the full strict-type-checked preset is too noisy), plus a hand-picked set of type-aware rules
 * that catch real bugs (floating / misused promises, non-exhaustive switches, awaiting non-thenables).
 * Type information comes from the root tsconfig.json through the TypeScript project service.
 */
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** Every TypeScript file that belongs to the project (mirrors tsconfig.json `include`). */
const TS_FILES = [
  'apps/**/*.ts',
  'libs/**/*.ts',
  'test/**/*.ts',
  'bench/**/*.ts',
  'migrations/**/*.ts',
  'ormconfig.ts',
];

const TEST_FILES = ['**/*.spec.ts', '**/*.test.ts', 'test/**/*.ts'];

/** Scope a shared config object to the project's TypeScript files. */
const scoped = (config) => ({ ...config, files: TS_FILES });

export default defineConfig(
  {
    name: 'openbot/ignores',
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '.toolchain/**',
      '.openbot/**',
      '**/coverage/**',
      '.test-pg/**',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
      '**/*.d.ts',
    ],
  },

  scoped(eslint.configs.recommended),
  ...tseslint.configs.recommended.map(scoped),

  {
    name: 'openbot/typescript',
    files: TS_FILES,
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: {
      reportUnusedDisableDirectives: 'error',
    },
    rules: {
      // --- type-aware rules (need parserOptions.projectService) ---
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        {
          // `default:` on a union switch is an explicit "everything else" and counts as exhaustive.
          considerDefaultExhaustiveForUnions: true,
          allowDefaultCaseForExhaustiveSwitch: true,
          requireDefaultForNonUnion: false,
        },
      ],

      // --- syntactic rules ---
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrors: 'all',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      eqeqeq: ['error', 'smart'],
      // NestJS modules / static-only holder classes are idiomatic here.
      '@typescript-eslint/no-extraneous-class': 'off',
    },
  },

  {
    // Libraries never write to the console: logging goes through the injected logger.
    // (apps/server may write to process.stdout directly, which is not `console`.)
    name: 'openbot/libs-no-console',
    files: ['libs/**/*.ts'],
    rules: {
      'no-console': 'error',
    },
  },

  {
    name: 'openbot/tests',
    files: TEST_FILES,
    rules: {
      // Not enabled for sources either (tseslint `recommended` leaves it off); kept explicit so
      // turning it on for sources later keeps tests free to assert presence with `!`.
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
