import { ApiError } from './errors';
import { namePattern, pythonRepr } from './name-filter';

describe('pythonRepr', () => {
  it.each([
    ['(', "'('"],
    ['', "''"],
    ["it's", '"it\'s"'],
    ['say "hi"', '\'say "hi"\''],
    ['both \' and "', "'both \\' and \"'"],
    ['a\\1', "'a\\\\1'"],
    ['tab\there', "'tab\\there'"],
    ['\u0001', "'\\x01'"],
    ['né', "'né'"],
  ])('%j → %s', (s, repr) => {
    expect(pythonRepr(s)).toBe(repr);
  });
});

describe('namePattern', () => {
  it('is the last value, every value being judged', () => {
    expect(namePattern([])).toBeUndefined();
    expect(namePattern(['web'])).toEqual({ values: ['web'], pattern: 'web' });
    expect(namePattern(['a', '^db'])).toEqual({ values: ['a', '^db'], pattern: '^db' });
    expect(() => namePattern(['', 'a'])).toThrow(ApiError);
  });

  it.each([
    ['', "Invalid input for query parameters name. Value: . '' is not a 'regex'"],
    ['a\u0000b', "Invalid input for query parameters name. Value: a\u0000b. 'a\\x00b' is not a 'regex' (it contains a NUL character)"],
    [
      'x'.repeat(256),
      `Invalid input for query parameters name. Value: ${'x'.repeat(256)}. '${'x'.repeat(256)}' is not a 'regex' (longer than 255 characters)`,
    ],
  ])("%j is 400 in Nova's words", (v, message) => {
    expect(() => namePattern([v])).toThrow(new ApiError(400, message));
  });
});
