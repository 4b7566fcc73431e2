/**
 * One run, three tiers (docs/architecture.md "Test tiers"): unit specs next to the code in libs/,
 * integration and e2e specs in test/ on a real PostgreSQL, system specs spawning real processes.
 * ts-jest only transpiles (type errors are caught by `npm run build`, which `npm test` runs first).
 */
module.exports = {
  rootDir: '.',
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }] },
  moduleNameMapper: {
    '^@openbot/engine/node$': '<rootDir>/libs/engine/src/node.ts',
    '^@openbot/(.*)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'],
  modulePathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/.toolchain/'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
  // Each test file loads the whole module graph again and a worker keeps some of it (about 100 MB
  // per file). Past 1 GB a worker is replaced between files: late in a run a multi-GB heap's
  // collections stalled the event loop past pg's 5 s connect timeout.
  workerIdleMemoryLimit: '1GB',
  reporters: ['default', '<rootDir>/test/support/summary-reporter.cjs'],
};
