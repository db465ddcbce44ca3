import { Bus } from '@cellsched/bus';
import { syncCellDb } from '@cellsched/cell-db';
import { ConfigError, loadConfig, renderHelp, wantsHelp } from '@cellsched/config';
import { atStartup, createPool } from '@cellsched/db';
import { PlacementClient, ReportClient } from '@cellsched/placement-client';
import { createLogger, keepHealthFile, loggerOptionsFrom, runMain, stopOnSignal } from '@cellsched/telemetry';
import { hostname } from 'node:os';
import { startCellConductor } from './app';
import { cellConductorConfigSchema } from './config';

/** Composition root: config → cell DB (migrate) → placement client → cell bus → serve `conductor`. */
async function main(): Promise<void> {
  if (wantsHelp(process.argv.slice(2))) {
    console.log(renderHelp(cellConductorConfigSchema, 'cell-conductor options'));
    return;
  }
  const config = loadConfig(cellConductorConfigSchema, { argv: process.argv.slice(2) });
  const missing = (['cellUuid', 'dbUrl', 'transportUrl'] as const).filter((k) => config[k] === undefined);
  if (missing.length > 0)
    throw new ConfigError(
      missing.map((k) => `${k} is required`),
      'config.invalid',
      'cell-conductor',
    );
  const log = createLogger(loggerOptionsFrom(config, { service: 'cell-conductor', host: hostname(), cell: config.cellName }));
  const pool = createPool({ url: config.dbUrl as string, max: config.dbPoolSize, applicationName: 'cell-conductor' });
  if (config.migrate) {
    const applied = await atStartup('cell database migrations', () => syncCellDb(pool), log);
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
  }
  const placement = new PlacementClient({ addresses: config.placementGrpc, deadlineMs: config.placementDeadlineMs, logger: log });
  const bus = await Bus.connect({ url: config.transportUrl as string, logger: log, name: `cell-conductor-${config.cellName}` });
  const conductor = await startCellConductor({
    pool,
    bus,
    placement,
    logger: log,
    cellUuid: config.cellUuid as string,
    buildTimeoutMs: config.buildTimeoutMs,
    prefetch: config.prefetch,
    serviceDownTimeMs: config.serviceDownTimeMs,
    watchdogIntervalMs: config.watchdogIntervalMs,
    dependencyRetryMs: config.dependencyRetryMs,
    stepTimeoutMs: config.stepTimeoutMs,
    resizeConfirmWindowS: config.resizeConfirmWindowS,
    report: new ReportClient({ baseUrl: config.placementUrl }),
    placementUrl: config.placementUrl,
    auditIntervalMs: config.auditIntervalMs,
    auditGraceMs: config.auditGraceMs,
  });
  log.info({ cell_uuid: config.cellUuid, placement_url: config.placementUrl }, 'cell conductor serving');
  const stopHealth = keepHealthFile(config.healthFile, () => bus.connected);
  stopOnSignal(log, async () => {
    stopHealth();
    await conductor.stop();
    await bus.close();
    placement.close();
    await pool.end();
  });
}

runMain(main);
