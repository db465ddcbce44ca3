import { hostStatusOf } from './host-status';

const NOW = Date.parse('2026-11-26T04:00:00Z');
const ago = (s: number): Date => new Date(NOW - s * 1000);
const svc = (o: { forcedDown?: boolean; disabled?: boolean; lastSeenUp?: Date | null } = {}) => ({
  forcedDown: false,
  disabled: false,
  lastSeenUp: ago(5),
  ...o,
});

describe("host_status (Nova's get_instance_host_status)", () => {
  it.each([
    ['no host', null, svc(), ''],
    ['a host without a nova-compute service', 'h1', undefined, ''],
    ['a service heartbeating', 'h1', svc(), 'UP'],
    ['a service heartbeating at the edge of service_down_time', 'h1', svc({ lastSeenUp: ago(60) }), 'UP'],
    ['a service silent past service_down_time', 'h1', svc({ lastSeenUp: ago(61) }), 'UNKNOWN'],
    ['a service that never reported', 'h1', svc({ lastSeenUp: null }), 'UNKNOWN'],
    ['a forced-down service (even heartbeating, even disabled)', 'h1', svc({ forcedDown: true, disabled: true }), 'DOWN'],
    ['a disabled service (heartbeating or not)', 'h1', svc({ disabled: true, lastSeenUp: ago(600) }), 'MAINTENANCE'],
  ] as const)('%s: %p', (_what, host, service, expected) => {
    expect(hostStatusOf(host, service, NOW)).toBe(expected);
  });
});
