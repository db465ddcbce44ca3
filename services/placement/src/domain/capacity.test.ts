import { capacityOf, checkUnits, fits } from './capacity';

const inv = { total: 24, reserved: 4, minUnit: 2, maxUnit: 8, stepSize: 2, allocationRatio: 1.5 };

describe('capacity math', () => {
  it('capacity is (total - reserved) * allocation_ratio', () => {
    expect(capacityOf(inv)).toBe(30);
  });
  it.each([
    [1, 'min_unit'],
    [10, 'max_unit'],
    [3, 'step_size'],
    [4, undefined],
  ])('%i → %s', (amount, why) => {
    expect(checkUnits(inv, amount)).toBe(why);
  });
  it('fits up to and including capacity', () => {
    expect(fits(inv, 22, 8)).toBe(true);
    expect(fits(inv, 24, 8)).toBe(false);
  });
});
