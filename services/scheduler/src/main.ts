import { loadConfig, renderHelp, wantsHelp } from '@cellsched/config';
import { createLogger, loggerOptionsFrom, runMain, stopOnSignal } from '@cellsched/telemetry';
import { hostname } from 'node:os';
import { DecisionStats } from './adapters/decision-stats';
import { startSchedulerApp } from './app';
import { policyFromConfig, schedulerConfigSchema } from './config';

/**
 * Composition root of one scheduler replica: config → cells from the API DB → host cache (full load) →
 * gRPC SchedulerService on basePort + replicaIndex → SIGTERM/SIGINT drain in-flight calls and stop.
 */
async function main(): Promise<void> {
  if (wantsHelp(process.argv.slice(2))) {
    process.stdout.write(
      `${renderHelp(schedulerConfigSchema, 'cellsched scheduler options')}\n\nThe cells come from the API database (cell_mappings, without their credentials), followed while running.\n`,
    );
    return;
  }
  const config = loadConfig(schedulerConfigSchema, { argv: process.argv.slice(2) });
  const log = createLogger(loggerOptionsFrom(config, { service: 'scheduler', host: hostname() })).child({ replica: config.replicaIndex });
  const port = config.basePort === 0 ? 0 : config.basePort + config.replicaIndex;
  const decisions = new DecisionStats(log, config.decisionLogInterval);
  const app = await startSchedulerApp(
    {
      apiDbUrl: config.apiDbUrl,
      cellDbCredentials: { user: config.cellDbUser, password: config.cellDbPassword },
      placementAddresses: config.placementAddresses,
      placementDeadlineMs: config.placementDeadline,
      policy: policyFromConfig(config),
      dbPoolSize: config.dbPoolSize,
      hostCacheRefreshMs: config.hostCacheRefresh,
      hostCacheFullResyncMs: config.hostCacheFullResync,
      hostCacheOverlapMs: config.hostCacheOverlap,
      groupLockTimeoutMs: config.groupLockTimeout,
      candidateCacheTtlMs: config.candidateCacheTtl,
      candidateCacheRefreshMs: config.candidateCacheRefresh,
      maxConcurrentDecisions: config.maxConcurrentDecisions,
      logger: log,
      observe: decisions.observe,
    },
    { host: config.host, port },
  );
  log.info({ address: config.host, port: app.server.port }, 'scheduler grpc listening');
  stopOnSignal(log, async () => {
    await app.close();
    decisions.close();
  });
}

runMain(main);
