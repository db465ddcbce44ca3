import { loadConfig } from '@cellsched/config';
import { createPool, runMigrations } from '@cellsched/db';
import { join } from 'node:path';
import pino from 'pino';
import { buildApp } from './adapters/http/app';
import { placementConfigSchema } from './config';

/** Composition root: config → database (migrate) → HTTP app → listen; SIGTERM stops cleanly. */
async function main(): Promise<void> {
  const config = loadConfig(placementConfigSchema, { argv: process.argv.slice(2) });
  const log = pino({ level: config.logLevel, base: { service: 'placement' } });
  const pool = createPool({ url: config.dbUrl, max: config.dbPoolSize, applicationName: 'placement' });
  if (config.migrate) {
    const applied = await runMigrations(pool, { kind: 'placement', dir: join(__dirname, '..', 'migrations') });
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
  }
  const app = buildApp({ pool, onError: (err, requestId) => { log.error({ err, request_id: requestId }, 'unexpected error'); } });
  await app.listen({ host: config.host, port: config.port });
  log.info({ host: config.host, port: config.port }, 'placement listening');
  const stop = async (): Promise<void> => {
    log.info('stopping');
    await app.close();
    await pool.end();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
