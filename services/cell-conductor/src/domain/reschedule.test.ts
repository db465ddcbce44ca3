import type { Selection } from '@cellsched/wire';
import { chooseAlternate, maxRetriesMessage } from './reschedule';

const sel = (host: string): Selection => ({ computeNodeUuid: `${host}-uuid`, serviceHost: host, nodename: host, cellUuid: 'c', availabilityZone: '', allocationRequest: { json: '{}', version: '1.39' } });

test.each([
  { name: 'first alternate claims', fits: ['b', 'c'], expectHost: 'b', remaining: ['c'], skipped: [] as string[] },
  { name: 'full alternate is dropped', fits: ['c'], expectHost: 'c', remaining: [], skipped: ['b'] },
  { name: 'none fits', fits: [] as string[], expectHost: undefined, remaining: [], skipped: ['b', 'c'] },
])('chooseAlternate: $name', async ({ fits, expectHost, remaining, skipped }) => {
  const tried: string[] = [];
  const d = await chooseAlternate([sel('b'), sel('c')], async (s) => {
    tried.push(s.serviceHost);
    return fits.includes(s.serviceHost) ? { kind: 'claimed' } : { kind: 'skipped', reason: 'no capacity' };
  });
  expect(d.skipped.map((s) => s.host)).toEqual(skipped);
  if (expectHost === undefined) expect(d.kind).toBe('exhausted');
  else {
    expect(d).toMatchObject({ kind: 'rescheduled', selection: { serviceHost: expectHost } });
    if (d.kind === 'rescheduled') expect(d.remaining.map((s) => s.serviceHost)).toEqual(remaining);
  }
  expect(tried).toEqual([...skipped, ...(expectHost === undefined ? [] : [expectHost])]);
});

test('maxRetriesMessage is Nova\'s MaxRetriesExceeded text', () => {
  expect(maxRetriesMessage('u1')).toBe('Exceeded maximum number of retries. Exhausted all hosts available for retrying build failures for instance u1.');
});
