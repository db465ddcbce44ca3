import { SuperConductorClient } from '@cellsched/api-clients';
import { CATALOGUE_CHANNEL, syncApiDb } from '@cellsched/api-db';
import { Bus } from '@cellsched/bus';
import { loadConfig } from '@cellsched/config';
import { ReportClient } from '@cellsched/placement-client';
import { atStartup, ChangeListener, createPool } from '@cellsched/db';
import { createLogger, loggerOptionsFrom, runMain, stopOnSignal } from '@cellsched/telemetry';
import { hostname } from 'node:os';
import { BuildRequestSweeper } from './adapters/build-request-sweeper';
import { CastRetrier } from './adapters/cast-retrier';
import { CatalogueCache } from './adapters/catalogue-cache';
import { PgCellDatabases } from './adapters/cell-databases';
import { CreateWriter } from './adapters/create-writer';
import { buildApp } from './adapters/http/app';
import { ServerActionSweeper } from './adapters/server-action-sweeper';
import { apiConfigSchema } from './config';

/** Composition root: config → API DB (migrate) → API bus → cells (read-only) → REST app → sweeper; SIGTERM stops cleanly. */
async function main(): Promise<void> {
  const config = loadConfig(apiConfigSchema, { argv: process.argv.slice(2) });
  const log = createLogger(loggerOptionsFrom(config, { service: 'api', host: hostname() }));
  const apiDb = createPool({ url: config.dbUrl, max: config.dbPoolSize, applicationName: 'api' });
  if (config.migrate) {
    const applied = await atStartup('API database migrations', () => syncApiDb(apiDb), log);
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
  }
  const bus = await Bus.connect({ url: config.transportUrl, logger: log, name: `api@${hostname()}` });
  if ((config.cellDbUser === undefined) !== (config.cellDbPassword === undefined))
    throw new Error('set both CELLSCHED_API_CELL_DB_USER and CELLSCHED_API_CELL_DB_PASSWORD, or neither');
  const credentials = config.cellDbUser === undefined ? undefined : { user: config.cellDbUser, password: config.cellDbPassword ?? '' };
  const cells = new PgCellDatabases({
    timeoutMs: config.cellTimeout,
    poolSize: config.cellDbPoolSize,
    credentials,
    onIdleError: (err) => log.warn({ err }, 'cell db connection lost'),
  });
  const retrier = new CastRetrier(log);
  // NOTE: flavors and images kept between creates only while their changes are heard (migration 005's notifications)
  const catalogue = new CatalogueCache({ db: apiDb });
  const catalogueListener = new ChangeListener({
    url: config.dbUrl,
    channel: CATALOGUE_CHANNEL,
    applicationName: 'api-catalogue',
    onNotify: () => catalogue.invalidate(),
    onState: (state, err) => {
      catalogue.setListening(state === 'listening');
      if (state === 'down')
        log.warn({ err }, 'catalogue notifications not heard: creates read flavors and images each time until they are');
      else log.info('catalogue notifications heard: flavors and images kept between creates');
    },
  });
  catalogueListener.start();
  const deps = {
    apiDb,
    cells,
    conductor: new SuperConductorClient(bus),
    retrier,
    creates: new CreateWriter(apiDb),
    catalogue,
    placement: new ReportClient({ baseUrl: config.placementUrl }),
    defaultAvailabilityZone: config.defaultAvailabilityZone,
    castTimeoutMs: config.castTimeout,
    nameFilterTimeoutMs: config.cellTimeout,
    log,
  };
  const app = buildApp(deps);
  await app.listen({ host: config.host, port: config.port });
  log.info({ address: config.host, port: config.port }, 'api listening');
  const sweeper = new BuildRequestSweeper(deps, { minAgeMs: config.sweepMinAge, recastEveryMs: config.sweepMinAge });
  const actions = new ServerActionSweeper(deps, {
    minAgeMs: config.actionRecastAge,
    recastEveryMs: config.actionRecastAge,
    expireAfterMs: config.actionIntentExpiry,
  });
  const timer = setInterval(
    () => {
      sweeper.sweep().then(
        (recast) => {
          if (recast.length > 0) log.warn({ recast }, 'sweeper re-cast requests');
        },
        (err: unknown) => log.warn({ err }, 'sweep failed'),
      );
      actions.sweep().then(
        (done) => {
          if (done.recast.length > 0) log.warn({ recast: done.recast }, 'sweeper re-cast server actions');
        },
        (err: unknown) => log.warn({ err }, 'server action sweep failed'),
      );
    },
    Math.min(config.sweepInterval, config.actionRecastAge),
  );
  stopOnSignal(log, async () => {
    clearInterval(timer);
    retrier.close();
    await app.close();
    await catalogueListener.close();
    await bus.close();
    await cells.close();
    await apiDb.end();
  });
}

runMain(main);
