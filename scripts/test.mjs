#!/usr/bin/env node
// `pnpm test`: every check CI runs, in order, stopping at the first failing step.
//   pnpm test                 all steps
//   pnpm test jest serial     only the named steps (see STEPS below)
// Ends with the plain line "N passed, N failed" that counts every test run.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const bin = join(root, 'node_modules/.bin');
const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
const totals = { passed: 0, failed: 0, skipped: 0 };

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, env, stdio: 'inherit', ...opts });
  return r.status ?? 1;
}

function jest(config, extra) {
  const out = join(mkdtempSync(join(tmpdir(), 'cellsched-jest-')), 'result.json');
  const status = run('jest', ['-c', config, '--json', `--outputFile=${out}`, ...extra]);
  if (existsSync(out)) {
    const r = JSON.parse(readFileSync(out, 'utf8'));
    totals.passed += r.numPassedTests;
    totals.failed += r.numFailedTests;
    totals.skipped += r.numPendingTests + r.numTodoTests;
    if (r.numTotalTests === 0) {
      console.error('jest ran no test');
      return 1;
    }
  }
  return status;
}

// Placement 8.0's own gabbi tests against our placement (services/placement/scripts).
function gabbi() {
  const r = spawnSync('bash', ['services/placement/scripts/gabbi-compat.sh'], {
    cwd: root,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.stdout.write(r.stdout ?? '');
  const m = /gabbi: (\d+) passed, (\d+) failed(?:, (\d+) skipped)?/.exec(r.stdout ?? '');
  if (!m) {
    console.error('gabbi printed no summary line');
    return 1;
  }
  totals.passed += Number(m[1]);
  totals.failed += Number(m[2]);
  totals.skipped += Number(m[3] ?? 0);
  return r.status ?? 1;
}

// The differential test against the real Placement 8.0 (e2e/placement-diff): its fixed-seed CI profile, one test.
function placementDiff() {
  const status = run('bash', ['e2e/placement-diff/ci.sh']);
  if (status === 0) totals.passed += 1;
  else totals.failed += 1;
  return status;
}

// The chaos suite (e2e/chaos): its unit tests, then its CI profile (one private stack, the ci-flagged scenarios; a scenario counts as one test).
function chaos() {
  const unit = jest('e2e/chaos/jest.config.js', []);
  if (unit !== 0) return unit;
  const out = join(mkdtempSync(join(tmpdir(), 'cellsched-chaos-')), 'report.json');
  const status = run('node', ['scripts/chaos.mjs', '--profile', 'ci', '--out', out]);
  if (!existsSync(out)) {
    console.error('chaos wrote no report');
    return status || 1;
  }
  const r = JSON.parse(readFileSync(out, 'utf8'));
  const ok = r.scenarios.filter((s) => s.ok).length;
  totals.passed += ok;
  totals.failed += r.scenarios.length - ok;
  if (r.scenarios.length === 0) {
    console.error('chaos ran no scenario');
    return 1;
  }
  return status;
}

// .ci/run builds the base, PostgreSQL and RabbitMQ images in the background while the other steps run,
// and writes the build's exit code to $CELLSCHED_IMAGES_RC: wait for it (bounded), show its log if it failed.
function imagesBuilt() {
  const rc = process.env.CELLSCHED_IMAGES_RC;
  if (!rc) return 0;
  const t0 = Date.now();
  while (!existsSync(rc) && Date.now() - t0 < 1_200_000) spawnSync('sleep', ['2']);
  const code = existsSync(rc) ? Number(readFileSync(rc, 'utf8').trim()) : 'none after 20 min';
  console.log(`compose: the background image build ended with ${code} (waited ${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  if (code !== 0) spawnSync('tail', ['-40', rc.replace(/\.rc$/, '.log')], { stdio: 'inherit' });
  return code === 0 ? 0 : 1;
}

// The compose deployment for real (e2e/compose): needs a Docker engine, docker-compose and the images
// (.ci/run installs and builds them: scripts/ensure-docker.sh, deploy/images/build.sh). Missing, the
// step fails and says why; CELLSCHED_SKIP_COMPOSE=1 skips it, counted and printed as skipped.
function compose() {
  if (process.env.CELLSCHED_SKIP_COMPOSE === '1') {
    console.log('compose: SKIPPED (CELLSCHED_SKIP_COMPOSE=1)');
    totals.skipped += 1;
    return 0;
  }
  if (imagesBuilt() !== 0) return 1;
  const missing = [
    ['docker', ['info']],
    ['docker-compose', ['version']],
    ['docker', ['image', 'inspect', 'cellsched/base:bookworm', 'cellsched/postgres:dev', 'cellsched/rabbitmq:dev']],
  ]
    .filter(([cmd, args]) => spawnSync(cmd, args, { stdio: 'ignore' }).status !== 0)
    .map(([cmd, args]) => `${cmd} ${args.join(' ')}`);
  if (missing.length) {
    console.error(
      `compose: these failed: ${missing.join('; ')}. Run scripts/ensure-docker.sh and deploy/images/build.sh (as .ci/run does; the step rebuilds the app image itself), or set CELLSCHED_SKIP_COMPOSE=1 to skip`,
    );
    return 1;
  }
  // the app image from this tree (bundle + docker build: seconds when nothing changed)
  const app = run('bash', ['deploy/images/build.sh', '--app']);
  return app !== 0 ? app : jest('e2e/compose/jest.config.js', ['--runInBand']);
}

function genIsFresh() {
  const gen = join(root, 'packages/wire/src/gen');
  const keep = mkdtempSync(join(tmpdir(), 'cellsched-gen-'));
  cpSync(gen, keep, { recursive: true });
  const status = run('buf', ['generate']);
  const diff = spawnSync('diff', ['-r', keep, gen], { encoding: 'utf8' });
  rmSync(gen, { recursive: true, force: true });
  cpSync(keep, gen, { recursive: true });
  if (status !== 0) return status;
  if (diff.status !== 0) {
    console.error(`generated code is stale: run pnpm gen\n${diff.stdout}`);
    return 1;
  }
  return 0;
}

// The launcher's own tests (node:test): the committed deploy/compose.yaml is what the plan renders, and its isolation; pnpm stack's arguments.
function launcher() {
  const r = spawnSync('node', ['--test', '--test-reporter=tap', 'deploy/launcher/', 'scripts/stack/'], {
    cwd: root,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.stdout.write(
    (r.stdout ?? '')
      .split('\n')
      .filter((l) => /^(not )?ok |^# (pass|fail)/.test(l))
      .join('\n') + '\n',
  );
  const pass = /^# pass (\d+)/m.exec(r.stdout ?? '');
  const fail = /^# fail (\d+)/m.exec(r.stdout ?? '');
  if (!pass || !fail) {
    console.error('node --test printed no summary');
    return 1;
  }
  totals.passed += Number(pass[1]);
  totals.failed += Number(fail[1]);
  if (Number(pass[1]) === 0) {
    console.error('node --test ran no test');
    return 1;
  }
  return r.status ?? 1;
}

function bufBreaking() {
  const hasMain = spawnSync('git', ['rev-parse', '--verify', '-q', 'main^{commit}'], { cwd: root }).status === 0;
  if (!hasMain) {
    console.log('buf breaking: no main branch to compare with, skipped');
    return 0;
  }
  return run('buf', ['breaking', '--against', '.git#branch=main']);
}

const STEPS = {
  'buf-lint': () => run('buf', ['lint']),
  'gen-fresh': genIsFresh,
  'buf-breaking': bufBreaking,
  launcher,
  // Formatting (.prettierrc.json, .prettierignore): any difference fails; `pnpm format` rewrites.
  format: () => run('prettier', ['--check', '--log-level', 'warn', '.']),
  // ESLint, with import-x/no-cycle: an import cycle fails.
  lint: () => run('eslint', ['--max-warnings=0', '.']),
  typecheck: () => run('tsc', ['-b']) || run('tsc', ['-p', 'tsconfig.test.json']),
  // Two workers even on 2 cores: the tests wait on PostgreSQL and RabbitMQ much of the time (jest's default here is one).
  jest: () => jest('jest.config.js', ['--maxWorkers=2']),
  serial: () => jest('jest.serial.config.js', ['--runInBand']),
  gabbi,
  'placement-diff': placementDiff,
  // The boot flow against the real multi-process system: each file its own private stack, two files at a time
  // (they spend most of their time waiting on the system; longest first, e2e/boot/sequencer.js).
  e2e: () => jest('e2e/boot/jest.config.js', ['--maxWorkers=2']),
  compose,
  chaos,
};

const wanted = process.argv.slice(2).filter((a) => a !== '--');
const names = wanted.length ? wanted : Object.keys(STEPS);
let failedStep = null;
for (const name of names) {
  const step = STEPS[name];
  if (!step) {
    console.error(`unknown step ${name}; steps: ${Object.keys(STEPS).join(' ')}`);
    process.exit(2);
  }
  console.log(`\n=== ${name}`);
  const t0 = Date.now();
  const status = step();
  console.log(`=== ${name}: ${status === 0 ? 'ok' : 'FAILED'} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  if (status !== 0) {
    failedStep = name;
    break;
  }
}
console.log(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
if (failedStep) {
  console.error(`step ${failedStep} failed`);
  process.exit(1);
}
