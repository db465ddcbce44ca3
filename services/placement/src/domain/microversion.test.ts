import { atLeast, extractPlacementVersion, negotiate } from './microversion';

describe('microversion negotiation', () => {
  it.each([
    [undefined, '1.0'],
    ['placement 1.12', '1.12'],
    ['placement latest', '1.39'],
    ['compute 2.1, placement 1.28', '1.28'],
    ['PLACEMENT 1.5', '1.5'],
    ['placement 1.5, placement 1.7', '1.7'],
    ['placement  1. 5 ', '1.5'],
    ['placement 1.01', '1.1'],
    ['placement', '1.0'],
  ])('%s → %s', (header, want) => {
    const v = negotiate(header);
    expect(`${v.major}.${v.minor}`).toBe(want);
  });
  it.each([
    ['placement 1.40', 406],
    ['placement 0.5', 406],
    ['placement 2.0', 406],
    ['placement pony.horse', 400],
    ['placement 1.2.3', 400],
    ['placement 1.-1', 406],
    ['placement -1.5', 406],
    ['placement abc', 400],
    ['placement 1', 400],
    ['placement LATEST', 400],
  ])('%s → %i', (header, status) => {
    expect(() => negotiate(header)).toThrow(expect.objectContaining({ status }));
  });
  it('compares by major then minor', () => {
    expect(atLeast({ major: 1, minor: 15 }, 15)).toBe(true);
    expect(atLeast({ major: 1, minor: 14 }, 15)).toBe(false);
    expect(extractPlacementVersion('compute 2.1')).toBeUndefined();
  });
});
