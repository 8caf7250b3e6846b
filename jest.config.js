/** Jest runs TypeScript through SWC (fast on 2 cores); `npm run typecheck` is the type gate. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' } }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testTimeout: 30000,
  // Proves every answer of the service's app in supertest tests against its OpenAPI document.
  setupFilesAfterEnv: ['<rootDir>/test/helpers/contract-setup.ts'],
  reporters: ['default', '<rootDir>/test/summary-reporter.js'],
};
