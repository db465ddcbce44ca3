import type { HintedHosts } from '../context';
import { hintedInstances } from '../context';
import { ctx, hostState, spec } from '../../../test/support/fixtures';
import { differentHostFilter } from './different-host-filter';
import { sameHostFilter } from './same-host-filter';

const onHost = (host: string) => hostState({ uuid: `cn-${host}`, host });

describe('SameHostFilter', () => {
  it.each<[string, HintedHosts | undefined, string, boolean]>([
    ['no hint', undefined, 'h1', true],
    ['a different_host hint is not its business', { differentHost: new Set(['h1']) }, 'h1', true],
    ['the host of a hinted instance', { sameHost: new Set(['h1', 'h3']) }, 'h3', true],
    ['another host', { sameHost: new Set(['h1']) }, 'h2', false],
    ['hinted instances on no host', { sameHost: new Set() }, 'h1', false],
  ])('%s', (_n, hinted, host, pass) => {
    expect(sameHostFilter.hostPasses(onHost(host), ctx({ hinted })).pass).toBe(pass);
  });

  it('says why a host failed', () => {
    expect(sameHostFilter.hostPasses(onHost('h2'), ctx({ hinted: { sameHost: new Set(['h1']) } }))).toEqual({
      pass: false,
      reason: 'no instance named by the same_host hint is on this host',
    });
  });
});

describe('DifferentHostFilter', () => {
  it.each<[string, HintedHosts | undefined, string, boolean]>([
    ['no hint', undefined, 'h1', true],
    ['a same_host hint is not its business', { sameHost: new Set(['h2']) }, 'h1', true],
    ['the host of a hinted instance', { differentHost: new Set(['h1', 'h3']) }, 'h3', false],
    ['another host', { differentHost: new Set(['h1']) }, 'h2', true],
    ['hinted instances on no host', { differentHost: new Set() }, 'h1', true],
  ])('%s', (_n, hinted, host, pass) => {
    expect(differentHostFilter.hostPasses(onHost(host), ctx({ hinted })).pass).toBe(pass);
  });
});

describe('hintedInstances', () => {
  it('reads the comma-joined list the API passes, without blanks', () => {
    expect(hintedInstances(spec({ schedulerHints: { same_host: 'a, b,,c' } }), 'same_host')).toEqual(['a', 'b', 'c']);
    expect(hintedInstances(spec({ schedulerHints: {} }), 'different_host')).toEqual([]);
  });
});
