import type { GroupState } from '../context';
import { ctx, group, hostState } from '../../../test/support/fixtures';
import { serverGroupAffinityFilter } from './server-group-affinity-filter';
import { serverGroupAntiAffinityFilter } from './server-group-anti-affinity-filter';

const onHost = (host: string) => hostState({ uuid: `cn-${host}`, host });

describe('ServerGroupAffinityFilter', () => {
  it.each<[string, GroupState | undefined, string, boolean]>([
    ['no group', undefined, 'h1', true],
    ['affinity group without members placed', group('affinity'), 'h1', true],
    ['host of the members', group('affinity', { h1: 2 }), 'h1', true],
    ['another host', group('affinity', { h1: 2 }), 'h2', false],
    ['anti-affinity group is not its business', group('anti-affinity', { h1: 1 }), 'h2', true],
    ['soft-affinity is a weigher, not a filter', group('soft-affinity', { h1: 1 }), 'h2', true],
  ])('%s', (_n, g, host, pass) => {
    expect(serverGroupAffinityFilter.hostPasses(onHost(host), ctx({ group: g })).pass).toBe(pass);
  });
});

describe('ServerGroupAntiAffinityFilter', () => {
  it.each<[string, GroupState | undefined, string, boolean]>([
    ['no group', undefined, 'h1', true],
    ['empty host', group('anti-affinity', { h1: 1 }), 'h2', true],
    ['host with a member', group('anti-affinity', { h1: 1 }), 'h1', false],
    ['max_server_per_host=2, one there', group('anti-affinity', { h1: 1 }, 2), 'h1', true],
    ['max_server_per_host=2, two there', group('anti-affinity', { h1: 2 }, 2), 'h1', false],
    ['affinity group is not its business', group('affinity', { h1: 1 }), 'h1', true],
    ['soft-anti-affinity is a weigher, not a filter', group('soft-anti-affinity', { h1: 3 }), 'h1', true],
  ])('%s', (_n, g, host, pass) => {
    expect(serverGroupAntiAffinityFilter.hostPasses(onHost(host), ctx({ group: g })).pass).toBe(pass);
  });
});
