import { status } from '@grpc/grpc-js';
import { makeFailure } from './failure-error';
import { statusForFailure, statusName } from './status-map';

describe('statusForFailure', () => {
  it.each([
    ['placement.concurrent_update', false, status.ABORTED],
    ['scheduler.no_valid_host', true, status.FAILED_PRECONDITION],
    ['placement.resource_provider.not_found', true, status.NOT_FOUND],
    ['placement.inventory.inuse', true, status.FAILED_PRECONDITION],
    ['placement.duplicate_name', true, status.ALREADY_EXISTS],
    ['placement.query.bad_value', true, status.INVALID_ARGUMENT],
    ['placement.resource_provider.no_capacity', true, status.FAILED_PRECONDITION],
    ['rpc.version.unsupported_version', true, status.FAILED_PRECONDITION],
    ['conductor.build.something_new', true, status.FAILED_PRECONDITION],
    ['conductor.build.something_new', false, status.INTERNAL],
  ])('%s (expected=%s) → %s', (code, expected, want) => {
    expect(statusForFailure(makeFailure(code, 'm', { expected }))).toBe(want);
  });
});

describe('statusName', () => {
  it('gives the lowercase status name used in synthesized codes', () => {
    expect(statusName(status.DEADLINE_EXCEEDED)).toBe('deadline_exceeded');
    expect(statusName(status.UNAVAILABLE)).toBe('unavailable');
    expect(statusName(99 as status)).toBe('status_99');
  });
});
