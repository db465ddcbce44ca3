// The boot-flow e2e suite against the real processes (`pnpm stack up` into a private state
// dir, name prefix and port offset, so it never touches a developer's running stack).
// Run: pnpm exec jest -c e2e/boot/jest.config.js --maxWorkers=2 (each file its own stack: files run side by side;
// longest first, see sequencer.js)
const swc = [
  '@swc/jest',
  { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' }, sourceMaps: 'inline' },
];
module.exports = {
  rootDir: '../..',
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc },
  testMatch: ['<rootDir>/e2e/boot/**/*.test.ts'],
  testTimeout: 600000,
  testSequencer: '<rootDir>/e2e/boot/sequencer.js',
};
