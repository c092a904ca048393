// typescript-eslint with type information: the rules that catch real faults
// (floating promises, misused promises, unsafe narrowing) over the whole tree.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'coverage/',
      'test/bench/.data/',
      'test/examples/.readme*/',
      'docs/api/',
      '**/*.mjs',
      'eslint.config.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      // The browser code has a tsconfig of its own (DOM types), and so has the NestJS example (decorators).
      parserOptions: {
        project: ['./tsconfig.json', './tsconfig.web.json', './examples/nest/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Tests reach into values of `unknown` shape on purpose, to check what arrived.
    files: ['test/**/*.ts', 'examples/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off',
      // Async generators without await stand for sources that could be asynchronous.
      '@typescript-eslint/require-await': 'off',
      // Escape sequences are what the terminal tests look for.
      'no-control-regex': 'off',
    },
  },
);
