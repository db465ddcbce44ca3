import { Bus } from '@cellsched/bus';
import { loadCellTopology, loadConfig } from '@cellsched/config';
import { createPool } from '@cellsched/db';
import { PlacementClient, ReportClient } from '@cellsched/placement-client';
import { createLogger, loggerOptionsFrom, runMain, stopOnSignal } from '@cellsched/telemetry';
import { hostname } from 'node:os';
import { CellRegistry } from './adapters/cells';
import { startHostDiscovery } from './adapters/host-discovery';
import { GrpcDestinationSelector } from './adapters/scheduler-selector';
import { startSuperConductor } from './app';
import { superConductorConfigSchema } from './config';
import { numAlternates } from './domain/build-plan';

/** Composition root: config + topology → API DB, cell DBs, API bus, cell buses → scheduler and placement clients → serve `conductor`. */
async function main(): Promise<void> {
  const config = loadConfig(superConductorConfigSchema, { argv: process.argv.slice(2) });
  const topology = loadCellTopology();
  const log = createLogger(loggerOptionsFrom(config, { service: 'super-conductor', host: hostname() }));
  const pool = (url: string, name: string) => createPool({ url, max: config.dbPoolSize, applicationName: `super-conductor-${name}` });
  const apiDb = pool(topology.apiDbUrl, 'api');
  const cellBuses = new Map<string, Bus>();
  for (const c of topology.cells) cellBuses.set(c.uuid, await Bus.connect({ url: c.transportUrl, logger: log, name: `super-conductor-${c.name}` }));
  const cells = CellRegistry.open(topology, apiDb, pool, cellBuses);
  const placement = new PlacementClient({ addresses: config.placementGrpc, deadlineMs: config.placementDeadlineMs, logger: log });
  const selector = new GrpcDestinationSelector({ addresses: config.schedulerGrpc, deadlineMs: config.schedulerDeadlineMs, logger: log });
  const apiBus = await Bus.connect({ url: topology.apiTransportUrl, logger: log, name: 'super-conductor' });
  const sub = await startSuperConductor({
    apiDb, apiBus, cells, selector, reporter: new ReportClient({ baseUrl: config.placementUrl }), claims: { release: async (uuids) => { await placement.release(uuids); } },
    numAlternates: numAlternates(config.maxAttempts), buildTimeoutMs: config.buildTimeoutMs, prefetch: config.prefetch,
  });
  const stopDiscovery = startHostDiscovery(apiDb, cells, log, config.discoverHostsInCellsIntervalMs);
  log.info({ cells: topology.cells.map((c) => c.name), num_alternates: numAlternates(config.maxAttempts), discover_hosts_interval_ms: config.discoverHostsInCellsIntervalMs },
    'super-conductor serving');
  stopOnSignal(log, async () => {
    stopDiscovery();
    await sub.close();
    await apiBus.close();
    for (const b of cellBuses.values()) await b.close();
    selector.close();
    placement.close();
    await cells.close();
    await apiDb.end();
  });
}

runMain(main);
