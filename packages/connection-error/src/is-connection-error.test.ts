import { isConnectionError } from './is-connection-error';

const withCode = (code: unknown, message = 'x'): Error => Object.assign(new Error(message), { code });

test.each([
  ['admin_shutdown', withCode('57P01'), true],
  ['crash_shutdown', withCode('57P02'), true],
  ['cannot_connect_now', withCode('57P03'), true],
  ['too_many_connections', withCode('53300'), true],
  ['connection_failure (class 08)', withCode('08006'), true],
  ['refused', withCode('ECONNREFUSED'), true],
  ['reset', withCode('ECONNRESET'), true],
  ['dns', withCode('EAI_AGAIN'), true],
  ['terminated', new Error('Connection terminated unexpectedly'), true],
  ['not queryable', new Error('Client has encountered a connection error and is not queryable'), true],
  ['pool timeout', new Error('timeout exceeded when trying to connect'), true],
  ['serialization_failure', withCode('40001'), false],
  ['unique_violation', withCode('23505'), false],
  ['numeric code', withCode(8006), false],
  ['plain error', new Error('boom'), false],
  ['a string naming a socket code', 'ECONNREFUSED', false],
  ['null', null, false],
])('%s', (_label, err, connection) => {
  expect(isConnectionError(err)).toBe(connection);
});
