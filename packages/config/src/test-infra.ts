import { loadConfig } from './load-config';
import { defineConfig } from './schema';

/** Where integration tests find the shared PostgreSQL and RabbitMQ servers. */
export const testInfraSchema = defineConfig({
  pgAdminUrl: {
    type: 'url',
    env: 'CELLSCHED_TEST_PG_URL',
    protocols: ['postgres:', 'postgresql:'],
    default: 'postgres://cellsched:cellsched@127.0.0.1:5432/postgres',
    help: 'PostgreSQL URL of a superuser (or CREATEDB role) on its admin database; tests create their own databases there.',
  },
  amqpUrl: {
    type: 'url',
    env: 'CELLSCHED_TEST_AMQP_URL',
    protocols: ['amqp:', 'amqps:'],
    default: 'amqp://cellsched:cellsched@127.0.0.1:5672/',
    help: 'RabbitMQ URL of an administrator; tests create their own vhosts/queues there.',
  },
});

export interface TestInfra {
  readonly pgAdminUrl: string;
  readonly amqpUrl: string;
}

/**
 * The PostgreSQL admin URL and RabbitMQ URL integration tests use: env
 * `CELLSCHED_TEST_PG_URL` / `CELLSCHED_TEST_AMQP_URL` or the local defaults. Never reads
 * a config file. Throws `ConfigError` if an env value is not a valid URL of the right scheme.
 */
export function testInfra(env?: Readonly<Record<string, string | undefined>>): TestInfra {
  return loadConfig(testInfraSchema, { env, file: false });
}
