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
    totals.passed += r.numPassedTests; totals.failed += r.numFailedTests;
    totals.skipped += r.numPendingTests + r.numTodoTests;
    if (r.numTotalTests === 0) { console.error('jest ran no test'); return 1; }
  }
  return status;
}

// Placement 8.0's own gabbi tests against our placement (services/placement/scripts).
function gabbi() {
  const r = spawnSync('bash', ['services/placement/scripts/gabbi-compat.sh'], { cwd: root, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  process.stdout.write(r.stdout ?? '');
  const m = /gabbi: (\d+) passed, (\d+) failed(?:, (\d+) skipped)?/.exec(r.stdout ?? '');
  if (!m) { console.error('gabbi printed no summary line'); return 1; }
  totals.passed += Number(m[1]); totals.failed += Number(m[2]); totals.skipped += Number(m[3] ?? 0);
  return r.status ?? 1;
}

// The chaos suite (e2e/chaos): its unit tests, then its CI profile (one private stack, the ci-flagged scenarios; a scenario counts as one test).
function chaos() {
  const unit = jest('e2e/chaos/jest.config.js', []);
  if (unit !== 0) return unit;
  const out = join(mkdtempSync(join(tmpdir(), 'cellsched-chaos-')), 'report.json');
  const status = run('node', ['scripts/chaos.mjs', '--profile', 'ci', '--out', out]);
  if (!existsSync(out)) { console.error('chaos wrote no report'); return status || 1; }
  const r = JSON.parse(readFileSync(out, 'utf8'));
  const ok = r.scenarios.filter((s) => s.ok).length;
  totals.passed += ok; totals.failed += r.scenarios.length - ok;
  if (r.scenarios.length === 0) { console.error('chaos ran no scenario'); return 1; }
  return status;
}

function genIsFresh() {
  const gen = join(root, 'packages/wire/src/gen');
  const keep = mkdtempSync(join(tmpdir(), 'cellsched-gen-'));
  cpSync(gen, keep, { recursive: true });
  const status = run('buf', ['generate']);
  const diff = spawnSync('diff', ['-r', keep, gen], { encoding: 'utf8' });
  rmSync(gen, { recursive: true, force: true }); cpSync(keep, gen, { recursive: true });
  if (status !== 0) return status;
  if (diff.status !== 0) { console.error(`generated code is stale: run pnpm gen\n${diff.stdout}`); return 1; }
  return 0;
}

function bufBreaking() {
  const hasMain = spawnSync('git', ['rev-parse', '--verify', '-q', 'main^{commit}'], { cwd: root }).status === 0;
  if (!hasMain) { console.log('buf breaking: no main branch to compare with, skipped'); return 0; }
  return run('buf', ['breaking', '--against', '.git#branch=main']);
}

const STEPS = {
  'buf-lint': () => run('buf', ['lint']),
  'gen-fresh': genIsFresh,
  'buf-breaking': bufBreaking,
  lint: () => run('eslint', ['--max-warnings=0', '.']),
  typecheck: () => run('tsc', ['-b']) || run('tsc', ['-p', 'tsconfig.test.json']),
  jest: () => jest('jest.config.js', []),
  serial: () => jest('jest.serial.config.js', ['--runInBand']),
  gabbi,
  // The boot flow against the real multi-process system (its own private stack).
  e2e: () => jest('e2e/boot/jest.config.js', ['--runInBand']),
  chaos,
};

const wanted = process.argv.slice(2).filter((a) => a !== '--');
const names = wanted.length ? wanted : Object.keys(STEPS);
let failedStep = null;
for (const name of names) {
  const step = STEPS[name];
  if (!step) { console.error(`unknown step ${name}; steps: ${Object.keys(STEPS).join(' ')}`); process.exit(2); }
  console.log(`\n=== ${name}`);
  const t0 = Date.now();
  const status = step();
  console.log(`=== ${name}: ${status === 0 ? 'ok' : 'FAILED'} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  if (status !== 0) { failedStep = name; break; }
}
console.log(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
if (failedStep) { console.error(`step ${failedStep} failed`); process.exit(1); }
