import { parseCpuInfo } from './host-records';

describe('parseCpuInfo (once per record read, never per decision)', () => {
  it.each<[string, string, Record<string, unknown>]>([
    ['a JSON object', '{"arch": "aarch64", "topology": {"cores": 4}}', { arch: 'aarch64', topology: { cores: 4 } }],
    ['not reported', '{}', {}],
    ['empty text', '', {}],
    ['not JSON', 'x86_64', {}],
    ['JSON but not an object', '["x86_64"]', {}],
    ['JSON null', 'null', {}],
  ])('%s', (_n, text, expected) => {
    expect(parseCpuInfo(text)).toEqual(expected);
  });
});
