import { isBase64, isIpAddress, isNovaBoolean, isNovaName, novaBoolean } from './nova-formats';

describe("Nova's formats", () => {
  it.each(['vm', 'web server 1', 'é-ü', 'x'.repeat(300), 'vm \u{1F600}'])('%j is a name', (s) => {
    expect(isNovaName(s)).toBe(true);
  });
  it.each([' lead', 'trail ', '\u00a0x', 'a\u0000b', 'a\nb', 'a\u2028b', 'x\u200b', '\ud800', 'a\u0085'])('%j is not a name', (s) => {
    expect(isNovaName(s)).toBe(false);
  });
  it('booleans', () => {
    expect([true, false, 'True', 'yes', '0', 'off'].every(isNovaBoolean)).toBe(true);
    expect(['maybe', 1, null, 'y', ''].some(isNovaBoolean)).toBe(false);
    expect([true, 'ON', '1', 'Yes'].map((v) => novaBoolean(v))).toEqual([true, true, true, true]);
    expect([false, 'no', '0', 'OFF'].map((v) => novaBoolean(v))).toEqual([false, false, false, false]);
  });
  it('base64', () => {
    expect(['', 'aGVsbG8=', 'aGVs\nbG8=', 'YQ=='].every(isBase64)).toBe(true);
    expect(['abc', 'not base64!', 'a===', '===='].some(isBase64)).toBe(false);
  });
  it('ip addresses', () => {
    expect(['10.0.0.1', '::1', 'fe80::1', '2001:db8::8a2e:370:7334', '::ffff:10.0.0.1', '1:2:3:4:5:6:7:8'].every(isIpAddress)).toBe(true);
    expect(['256.0.0.1', '1.2.3', 'abc', ':::', '1:2:3:4:5:6:7:8:9', '1::2::3', '10.0.0.1/24'].some(isIpAddress)).toBe(false);
  });
});
