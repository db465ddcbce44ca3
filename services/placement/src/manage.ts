#!/usr/bin/env node
// placement-manage: placement's own administration commands (Placement's `placement-manage`),
// the composition root only. Reads the same options as the service (CELLSCHED_PLACEMENT_DB_URL).
//   placement-manage db reset    empty the database but for the standard classes and traits
import { loadConfig } from '@cellsched/config';
import { createPool } from '@cellsched/db';
import { resetPlacementData } from './adapters/sql/reset';
import { placementConfigSchema } from './config';

const USAGE = 'usage: placement-manage db reset   (options from the environment, as the service: CELLSCHED_PLACEMENT_DB_URL)';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.join(' ') !== 'db reset') {
    console.error(USAGE);
    process.exitCode = 2;
    return;
  }
  const config = loadConfig(placementConfigSchema);
  const pool = createPool({ url: config.dbUrl, max: 1, applicationName: 'placement-manage' });
  try {
    await resetPlacementData(pool);
  } finally {
    await pool.end();
  }
  console.log('placement database reset: providers, allocations, consumers and custom classes and traits deleted');
}

// NOTE: not telemetry's runMain: loading OpenTelemetry costs a second, and gabbi resets before every file
main().catch((err: unknown) => {
  console.error(`placement-manage: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
