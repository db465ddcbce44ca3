#!/usr/bin/env node
// The compose deployment's one-shot `init` (`node deploy/launcher/init.mjs --cells N ...`, the
// options the compose file was generated with): provisions PostgreSQL and RabbitMQ exactly as
// `pnpm stack up` does (same roles, databases, grants, vhosts and users, from the same plan), runs
// nova-manage's bootstrap, marks itself healthy (the cells' processes start), then runs
// discover_hosts until every simulated host is mapped and exits 0 (the API level starts).
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BOOTSTRAPPED_FILE, composePlan } from './compose.mjs';
import { adminSessions, countHostMappings } from './pg.mjs';
import { ensureVhostWithUserHttp, provisionPlan } from './provision.mjs';
import { SYSTEM_DEFAULTS, bootstrapCells, discoverHosts } from './system.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const log = (msg) => console.log(`${new Date().toISOString()} init: ${msg}`);

function planOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      cells: { type: 'string' },
      'hosts-per-cell': { type: 'string' },
      schedulers: { type: 'string' },
      prefix: { type: 'string' },
    },
  });
  const int = (v, d) => (v === undefined ? d : Number.parseInt(v, 10));
  return {
    ...SYSTEM_DEFAULTS,
    cells: int(values.cells, SYSTEM_DEFAULTS.cells),
    hostsPerCell: int(values['hosts-per-cell'], SYSTEM_DEFAULTS.hostsPerCell),
    schedulers: int(values.schedulers, SYSTEM_DEFAULTS.schedulers),
    prefix: values.prefix ?? SYSTEM_DEFAULTS.prefix,
  };
}

/** Retries `fn` while the broker or the database is still starting (its listener is up before it answers). */
async function untilUp(what, fn, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      log(`${what} not ready yet (${err.message}); retrying`);
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

/** What `pnpm stack up` provisions (provisionPlan), the vhosts through the management API once it answers. */
async function provision(plan, adminUrl, brokerUrl) {
  await provisionPlan(plan, adminSessions(adminUrl), (vhost) =>
    untilUp('RabbitMQ management API', () => ensureVhostWithUserHttp(brokerUrl, vhost)),
  );
}

async function main() {
  const adminUrl = process.env.CELLSCHED_PG_ADMIN_URL;
  const brokerUrl = process.env.CELLSCHED_RABBITMQ_ADMIN_URL;
  if (!adminUrl || !brokerUrl) throw new Error('CELLSCHED_PG_ADMIN_URL and CELLSCHED_RABBITMQ_ADMIN_URL are required');
  const plan = composePlan(planOptions(process.argv.slice(2)));
  await provision(plan, adminUrl, brokerUrl);
  log(
    `provisioned ${[...plan.roles, plan.placement.role].join(', ')}; vhosts ${plan.vhosts.join(', ')}; read-only ${plan.readOnlyRoles.join(', ')}`,
  );
  bootstrapCells(plan, ROOT);
  log(`bootstrap done: cell0 and ${plan.cells.map((c) => `${c.name} ${c.uuid}`).join(', ')}`);
  writeFileSync(BOOTSTRAPPED_FILE, `${new Date().toISOString()}\n`);
  const hosts = plan.cells.length * plan.options.hostsPerCell;
  const mapped = await discoverHosts(plan, ROOT, () => countHostMappings(plan), 180_000 + 200 * hosts);
  log(`discover_hosts: ${mapped} of ${hosts} compute hosts mapped; done`);
}

main().catch((err) => {
  console.error(`init failed: ${err.stack ?? err}`);
  process.exit(1);
});
