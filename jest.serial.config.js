// Tests that disturb shared infrastructure (stop the broker, restart PostgreSQL) run
// alone, one file at a time, after the parallel suites: see scripts/test.mjs.
const base = require('./jest.config.js').projects[0];
module.exports = {
  testTimeout: 180000,
  projects: [
    {
      ...base,
      displayName: 'serial',
      testMatch: ['<rootDir>/{packages,services}/*/test/**/*.serial.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '/dist/'],
    },
  ],
};
