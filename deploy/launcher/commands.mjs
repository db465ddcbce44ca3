// `pnpm stack compose` and `pnpm stack endpoints`: the plan rendered for docker compose, and
// the addresses a client of a system uses (the e2e harnesses read them instead of adding an
// offset to 8774 themselves).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ADMINS, renderCompose } from './compose.mjs';
import { devPassword } from './provision.mjs';
import { SYSTEM_DEFAULTS, systemPlan } from './system.mjs';

/** `pnpm stack compose` without options renders this (the committed deploy/compose.yaml): compose shows reschedules. */
export const COMPOSE_DEFAULTS = Object.freeze({ ...SYSTEM_DEFAULTS, buildFailureRate: 0.2 });

const FLAGS = {
  cells: '--cells',
  hostsPerCell: '--hosts-per-cell',
  schedulers: '--schedulers',
  buildFailureRate: '--build-failure-rate',
  buildLatencyMs: '--build-latency-ms',
  portOffset: '--port-offset',
  prefix: '--prefix',
};

/** The command that renders `given` (only the options given, in a fixed order): the file's header names it. */
function commandLine(given) {
  const flags = Object.entries(FLAGS)
    .filter(([k]) => given[k] !== undefined)
    .map(([k, f]) => `${f} ${given[k]}`);
  return ['pnpm stack compose', ...flags].join(' ');
}

/**
 * Writes the compose file of `given` (plan options) to `out` (default deploy/compose.yaml);
 * with `check`, writes nothing and fails when the file differs from what the plan renders.
 */
export function composeCommand(root, given, out, check) {
  const file = resolve(out ?? join(root, 'deploy/compose.yaml'));
  const context = relative(dirname(file), root) || '.';
  const text = renderCompose({ ...COMPOSE_DEFAULTS, ...given }, context, commandLine(given));
  if (check) {
    const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
    if (current !== text) {
      console.error(
        `${relative(root, file)} is stale: it is not what the plan renders. Run: ${commandLine(given)}${out ? ` --out ${out}` : ''}`,
      );
      return 1;
    }
    console.log(`${relative(root, file)} is what the plan renders`);
    return 0;
  }
  writeFileSync(file, text);
  console.log(`wrote ${file}`);
  return 0;
}

/** A system's client addresses on this machine (the native launcher's, or a compose deployment's published ports). */
export function endpoints(options) {
  const plan = systemPlan({ ...SYSTEM_DEFAULTS, ...options }, { adminUrl: 'postgres://127.0.0.1/', amqpBase: 'amqp://127.0.0.1/' });
  const p = plan.ports;
  return {
    api: `http://127.0.0.1:${p.api}/v2.1`,
    placement: `http://127.0.0.1:${p.placement}`,
    placementGrpc: `127.0.0.1:${p.placementGrpc}`,
    schedulers: Array.from({ length: plan.options.schedulers }, (_, i) => `127.0.0.1:${p.scheduler(i)}`),
    // a compose deployment's PostgreSQL, published on loopback, as its superuser
    composeAdminUrl: `postgres://${ADMINS.postgres}:${devPassword(ADMINS.postgres)}@127.0.0.1:${p.postgres}/postgres`,
  };
}
