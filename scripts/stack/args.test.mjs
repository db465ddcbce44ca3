// `pnpm stack`'s arguments (`node --test scripts/stack`, in pnpm test's launcher step): the
// flags DESIGN's contract and the harnesses pass parse as before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseArgs } from './args.mjs';

test('no arguments: status, the state dir from CELLSCHED_STACK_DIR, no system option', () => {
  assert.deepEqual(parseArgs([], { CELLSCHED_STACK_DIR: '/tmp/s' }), {
    command: 'status',
    only: undefined,
    purge: false,
    noBuild: false,
    check: false,
    out: undefined,
    signal: 'SIGKILL',
    stateDir: '/tmp/s',
    system: {},
  });
});

test("up's system options, with a value after the flag or after '='", () => {
  const o = parseArgs(
    [
      'up',
      '--cells',
      '3',
      '--hosts-per-cell=1000',
      '--schedulers',
      '2',
      '--build-failure-rate',
      '0.2',
      '--port-offset',
      '4000',
      '--prefix',
      'e2e_x1',
      '--build-latency-ms',
      '50',
      '--state-dir',
      '/tmp/x',
    ],
    {},
  );
  assert.deepEqual(o.system, {
    cells: 3,
    hostsPerCell: 1000,
    schedulers: 2,
    buildFailureRate: 0.2,
    portOffset: 4000,
    prefix: 'e2e_x1',
    buildLatencyMs: 50,
  });
  assert.equal(o.stateDir, '/tmp/x');
});

test('the flags of down, kill, start, compose and reset', () => {
  assert.equal(parseArgs(['down', '--purge'], {}).purge, true);
  const k = parseArgs(['kill', '--only', 'api,scheduler-0', '--signal', 'SIGSTOP'], {});
  assert.deepEqual([k.only, k.signal], ['api,scheduler-0', 'SIGSTOP']);
  assert.equal(parseArgs(['start', '--only', 'api', '--no-build'], {}).noBuild, true);
  const c = parseArgs(['compose', '--out', 'f.yaml', '--check'], {});
  assert.deepEqual([c.out, c.check], ['f.yaml', true]);
  assert.equal(parseArgs(['reset', '--only', 'placement'], {}).only, 'placement');
});

test('refused: an unknown flag, a value out of range or not whole, a bad prefix', () => {
  assert.throws(() => parseArgs(['up', '--cell', '2'], {}), /unknown option --cell/);
  assert.throws(() => parseArgs(['up', '--cells', '0'], {}), /--cells must be a number in \[1, 50\]/);
  assert.throws(() => parseArgs(['up', '--schedulers', '1.5'], {}), /--schedulers must be a number/);
  assert.throws(() => parseArgs(['up', '--build-failure-rate', '2'], {}), /--build-failure-rate must be a number in \[0, 1\]/);
  assert.throws(() => parseArgs(['up', '--prefix', 'Bad-Name'], {}), /--prefix must match/);
});
