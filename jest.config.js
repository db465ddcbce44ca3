// One jest config for the whole workspace. Tests import workspace libraries from source
// (moduleNameMapper), so `pnpm test` does not depend on a prior build for unit tests.
const swc = [
  '@swc/jest',
  { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' }, sourceMaps: 'inline' },
];
const common = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: { '^@cellsched/([a-z-]+)$': '<rootDir>/packages/$1/src' },
};
module.exports = {
  testTimeout: 60000,
  projects: [
    {
      ...common,
      displayName: 'unit+functional+integration',
      testMatch: ['<rootDir>/{packages,services}/*/{src,test}/**/*.test.ts'],
      testPathIgnorePatterns: ['\\.serial\\.test\\.ts$', '/node_modules/', '/dist/'],
    },
  ],
};
