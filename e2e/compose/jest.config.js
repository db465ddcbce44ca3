// The compose deployment e2e (a Docker engine and the images needed: `pnpm test compose` checks).
// Run: pnpm exec jest -c e2e/compose/jest.config.js --runInBand
const swc = [
  '@swc/jest',
  { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' }, sourceMaps: 'inline' },
];
module.exports = {
  rootDir: '../..',
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc },
  testMatch: ['<rootDir>/e2e/compose/**/*.test.ts'],
  testTimeout: 900000,
};
