import { Bus } from '@cellsched/bus';
import { loadConfig } from '@cellsched/config';
import { atStartup, createPool } from '@cellsched/db';
import { PlacementClient, ReportClient } from '@cellsched/placement-client';
import { createLogger, keepHealthFile, loggerOptionsFrom, runMain, stopOnSignal } from '@cellsched/telemetry';
import { hostname } from 'node:os';
import { cellOpener } from './adapters/cell-opener';
import { CellRegistry } from './adapters/cells';
import { startHostDiscovery } from './adapters/host-discovery';
import { GrpcDestinationSelector } from './adapters/scheduler-selector';
import { startSuperConductor } from './app';
import { superConductorConfigSchema } from './config';
import { numAlternates } from './domain/build-plan';

/** Composition root: config → API DB → cells from cell_mappings (followed) → API bus → scheduler and placement clients → serve `conductor`. */
async function main(): Promise<void> {
  const config = loadConfig(superConductorConfigSchema, { argv: process.argv.slice(2) });
  const log = createLogger(loggerOptionsFrom(config, { service: 'super-conductor', host: hostname() }));
  const pool = (url: string, name: string) =>
    createPool({
      url,
      max: config.dbPoolSize,
      applicationName: `super-conductor-${name}`,
      onIdleError: (err) => log.warn({ err, db: name }, 'idle db client error'),
    });
  const apiDb = pool(config.apiDbUrl, 'api');
  const cells = new CellRegistry(
    apiDb,
    cellOpener({
      pool,
      bus: (url, name) =>
        Bus.connect({ url, logger: log, name: `super-conductor-${name}`, connectTimeoutMs: config.cellBusConnectTimeout }),
    }),
    log,
  );
  await atStartup('cell mappings load', () => cells.refresh(), log);
  // NOTE: polled, not LISTEN/NOTIFY: a few rows, one cheap read per period, nothing to re-arm after a reconnect
  const follow = setInterval(() => {
    cells.refresh().catch((err: unknown) => log.warn({ err }, 'cell mappings could not be read'));
  }, config.cellMappingsRefresh);
  const placement = new PlacementClient({ addresses: config.placementGrpc, deadlineMs: config.placementDeadlineMs, logger: log });
  const selector = new GrpcDestinationSelector({ addresses: config.schedulerGrpc, deadlineMs: config.schedulerDeadlineMs, logger: log });
  const apiBus = await Bus.connect({ url: config.apiTransportUrl, logger: log, name: 'super-conductor' });
  const sub = await startSuperConductor({
    apiDb,
    apiBus,
    cells,
    selector,
    reporter: new ReportClient({ baseUrl: config.placementUrl }),
    claims: {
      release: async (uuids) => {
        await placement.release(uuids);
      },
      revertMove: async (i, m) => {
        await placement.revertMove(i, m);
      },
    },
    numAlternates: numAlternates(config.maxAttempts),
    buildTimeoutMs: config.buildTimeoutMs,
    prefetch: config.prefetch,
    conductorHost: hostname(),
    allowResizeToSameHost: config.allowResizeToSameHost,
    serviceDownTimeMs: config.serviceDownTimeMs,
  });
  const stopDiscovery = startHostDiscovery(apiDb, cells, log, config.discoverHostsInCellsIntervalMs);
  log.info(
    {
      num_alternates: numAlternates(config.maxAttempts),
      cell_mappings_refresh_ms: config.cellMappingsRefresh,
      discover_hosts_interval_ms: config.discoverHostsInCellsIntervalMs,
    },
    'super-conductor serving',
  );
  const stopHealth = keepHealthFile(config.healthFile, () => apiBus.connected);
  stopOnSignal(log, async () => {
    stopHealth();
    stopDiscovery();
    clearInterval(follow);
    await sub.close();
    await apiBus.close();
    selector.close();
    placement.close();
    await cells.close();
    await apiDb.end();
  });
}

runMain(main);
