import { CELLS_ENV, CELLS_FILE_ENV, loadCellTopology, loadConfig, renderHelp, wantsHelp } from '@cellsched/config';
import { createLogger, runMain, stopOnSignal } from '@cellsched/telemetry';
import { hostname } from 'node:os';
import { startSchedulerApp } from './app';
import { policyFromConfig, schedulerConfigSchema } from './config';

/**
 * Composition root of one scheduler replica: config + cell topology → host cache (full load) →
 * gRPC SchedulerService on basePort + replicaIndex → SIGTERM/SIGINT drain in-flight calls and stop.
 */
async function main(): Promise<void> {
  if (wantsHelp(process.argv.slice(2))) {
    process.stdout.write(`${renderHelp(schedulerConfigSchema, 'cellsched scheduler options')}\n\nCell databases and the API database: the cell topology, env ${CELLS_ENV} (JSON) or ${CELLS_FILE_ENV} (path).\n`);
    return;
  }
  const config = loadConfig(schedulerConfigSchema, { argv: process.argv.slice(2) });
  const topology = loadCellTopology();
  const log = createLogger({ service: 'scheduler', host: hostname(), level: config.logLevel }).child({ replica: config.replicaIndex });
  const port = config.basePort === 0 ? 0 : config.basePort + config.replicaIndex;
  const app = await startSchedulerApp({
    apiDbUrl: topology.apiDbUrl, cells: topology.cells.map((c) => ({ uuid: c.uuid, dbUrl: c.dbUrl })),
    placementAddresses: config.placementAddresses, placementDeadlineMs: config.placementDeadline, policy: policyFromConfig(config),
    dbPoolSize: config.dbPoolSize, hostCacheRefreshMs: config.hostCacheRefresh, hostCacheFullResyncMs: config.hostCacheFullResync, hostCacheOverlapMs: config.hostCacheOverlap,
    groupLockTimeoutMs: config.groupLockTimeout, candidateCacheTtlMs: config.candidateCacheTtl, candidateCacheRefreshMs: config.candidateCacheRefresh, maxConcurrentDecisions: config.maxConcurrentDecisions, logger: log,
  }, { host: config.host, port });
  log.info({ address: config.host, port: app.server.port }, 'scheduler grpc listening');
  stopOnSignal(log, async () => {
    await app.close();
  });
}

runMain(main);
