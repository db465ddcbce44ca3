// Unit tests of the chaos suite's own pure pieces (the suite itself: pnpm chaos).
// Run: pnpm exec jest -c e2e/chaos/jest.config.js
const swc = [
  '@swc/jest',
  { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' }, sourceMaps: 'inline' },
];
module.exports = {
  rootDir: '../..',
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc },
  testMatch: ['<rootDir>/e2e/chaos/**/*.test.ts'],
};
