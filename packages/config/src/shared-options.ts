/**
 * Options that several services take, declared once so that their variable, default and bounds
 * cannot drift apart between services; each service says in `help` what it does with the value.
 */
import type { IntOption, UrlOption } from './schema';

/** CELLSCHED_API_DB_URL (required): the API database, as the service's own role. */
export const apiDbUrlOption = (help: string) =>
  ({
    type: 'url',
    env: 'CELLSCHED_API_DB_URL',
    protocols: ['postgres:', 'postgresql:'],
    required: true,
    secret: true,
    help,
  }) as const satisfies UrlOption;

/** CELLSCHED_BUILD_TIMEOUT_MS: a build attempt's deadline (the cell conductor's watchdog reads it). */
export const buildTimeoutOption = (help: string) =>
  ({ type: 'int', env: 'CELLSCHED_BUILD_TIMEOUT_MS', default: 300000, min: 1000, max: 86400000, help }) as const satisfies IntOption;

/** CELLSCHED_SERVICE_DOWN_TIME_MS: Nova's service_down_time (a compute whose last heartbeat is older is down). */
export const serviceDownTimeOption = (help: string) =>
  ({ type: 'int', env: 'CELLSCHED_SERVICE_DOWN_TIME_MS', default: 60000, min: 1000, max: 86400000, help }) as const satisfies IntOption;
