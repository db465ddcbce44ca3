// Runs the longest e2e files first, so that two workers end together (jest with no timing cache,
// as in a clean CI clone, would start the largest files first: moves-openstack is small but runs
// five real-client scripts). Durations measured in CI on a quiet 2-core machine (2026-11-26):
// files not listed run after these, largest first. Everything else (--shard, --onlyFailures, the
// timing cache) is jest's own sequencer.
const path = require('node:path');
const { statSync } = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;

const LONGEST_FIRST = [
  'moves-openstack', // ~300 s
  'ghost-allocations', // ~130 s
  'cells', // ~95 s
  'boot', // ~70 s
  'hosts',
  'host-data',
  'moves',
  'refused-casts',
  'server-groups',
  'api-bad-input',
];

const rank = (test) => {
  const i = LONGEST_FIRST.indexOf(path.basename(test.path, '.test.ts'));
  return i === -1 ? LONGEST_FIRST.length : i;
};

class LongestFirst extends Sequencer {
  sort(tests) {
    return [...tests].sort((a, b) => rank(a) - rank(b) || statSync(b.path).size - statSync(a.path).size);
  }
}

module.exports = LongestFirst;
