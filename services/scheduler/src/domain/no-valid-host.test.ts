import { noValidHostFailure } from './no-valid-host';

describe('noValidHostFailure', () => {
  it('is the wire Failure: expected, not retryable, with the diagnosis and the claim retries', () => {
    const diagnosis = [{ filter: 'ComputeFilter', hostsBefore: 3, hostsAfter: 0, reason: 'compute service is down (3 hosts)' }];
    const f = noValidHostFailure('no host passed the filters', diagnosis, 2);
    expect(f).toEqual({
      code: 'scheduler.no_valid_host',
      message: 'No valid host was found. no host passed the filters',
      retryable: false,
      expected: true,
      metadata: { claim_retries: '2' },
      diagnosis,
    });
    expect(f.diagnosis[0]).not.toBe(diagnosis[0]);
  });
});
