import { ctx, hostState, NOW } from '../../../test/support/fixtures';
import { computeFilter } from './compute-filter';

const ago = (s: number): Date => new Date(NOW.getTime() - s * 1000);

describe('ComputeFilter', () => {
  it.each([
    ['enabled and up', {}, true, ''],
    ['heartbeat exactly service_down_time old is still up', { lastHeartbeatAt: ago(60) }, true, ''],
    ['heartbeat older than service_down_time is down', { lastHeartbeatAt: ago(61) }, false, 'compute service is down'],
    ['never reported is down', { lastHeartbeatAt: undefined }, false, 'compute service is down'],
    ['forced down', { forcedDown: true }, false, 'compute service is down'],
    ['disabled', { serviceDisabled: true }, false, 'compute service is disabled'],
    [
      'disabled with a reason',
      { serviceDisabled: true, serviceDisabledReason: 'maintenance' },
      false,
      'compute service is disabled: maintenance',
    ],
  ])('%s', (_n, rec, pass, reason) => {
    const r = computeFilter.hostPasses(hostState(rec), ctx());
    expect(r.pass).toBe(pass);
    if (!r.pass) expect(r.reason).toBe(reason);
  });

  it('reads service_down_time from the policy', () => {
    expect(computeFilter.hostPasses(hostState({ lastHeartbeatAt: ago(100) }), ctx({ policy: { serviceDownTimeSeconds: 120 } })).pass).toBe(
      true,
    );
  });
});
