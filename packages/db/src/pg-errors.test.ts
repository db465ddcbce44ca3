import { isConnectionError, isRetryableTxError, sqlState } from './pg-errors';

const withCode = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code });

describe('error classification', () => {
  const cases: [string, unknown, boolean, boolean][] = [
    // label, error, retryable transaction error, connection error
    ['serialization_failure', withCode('40001'), true, false],
    ['deadlock_detected', withCode('40P01'), true, false],
    ['unique_violation', withCode('23505'), false, false],
    ['lock_not_available', withCode('55P03'), false, false],
    ['admin_shutdown', withCode('57P01'), false, true],
    ['cannot_connect_now', withCode('57P03'), false, true],
    ['connection_failure', withCode('08006'), false, true],
    ['refused', withCode('ECONNREFUSED'), false, true],
    ['reset', withCode('ECONNRESET'), false, true],
    ['terminated', new Error('Connection terminated unexpectedly'), false, true],
    ['pool timeout', new Error('timeout exceeded when trying to connect'), false, true],
    ['plain error', new Error('boom'), false, false],
    ['not an error', 'string', false, false],
    ['null', null, false, false],
  ];
  test.each(cases)('%s', (_label, err, retryable, connection) => {
    expect(isRetryableTxError(err)).toBe(retryable);
    expect(isConnectionError(err)).toBe(connection);
  });

  test('sqlState reads only string codes', () => {
    expect(sqlState(withCode('40001'))).toBe('40001');
    expect(sqlState({ code: 40001 })).toBeUndefined();
    expect(sqlState(undefined)).toBeUndefined();
  });
});
