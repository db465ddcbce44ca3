import { ApiError } from './errors';
import { checkContentType, MAX_BODY_DEPTH, parseBody } from './request-body';

const status = (f: () => unknown): number | undefined => {
  try {
    f();
    return undefined;
  } catch (err) {
    return err instanceof ApiError ? err.status : -1;
  }
};

describe('checkContentType', () => {
  it.each([
    undefined,
    '',
    'application/json',
    'Application/JSON; charset=UTF-8',
    'application/vnd.openstack.compute+json',
    'text/plain',
    'text/plain;charset=UTF-8',
  ])('%j is accepted', (h) => {
    expect(status(() => checkContentType(h))).toBeUndefined();
  });
  it.each([
    'text/xml',
    'application/xml',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonx',
    'json',
    '*/*',
  ])('%j is 415', (h) => {
    expect(status(() => checkContentType(h))).toBe(415);
  });
});

describe('parseBody', () => {
  it('reads JSON for POST and PUT, nothing for an empty body or another method', () => {
    expect(parseBody('POST', '{"a": [1]}')).toEqual({ a: [1] });
    expect(parseBody('PUT', ' "x" ')).toBe('x');
    expect(parseBody('POST', '')).toBeUndefined();
    expect(parseBody('POST', undefined)).toBeUndefined();
    expect(parseBody('GET', 'not json')).toBeUndefined();
    expect(parseBody('DELETE', '{')).toBeUndefined();
  });
  it.each(['{', 'nope', '{"a": 1,}', "{'a': 1}", '\u0000'])('%j is 400 Malformed request body', (raw) => {
    expect(() => parseBody('POST', raw)).toThrow(new ApiError(400, 'Malformed request body'));
  });
});

describe('parseBody refuses what no handler could read or store', () => {
  const depth = (n: number): string => '['.repeat(n) + ']'.repeat(n);
  it('nesting up to the limit is read, one level more is Malformed request body', () => {
    expect(parseBody('POST', depth(MAX_BODY_DEPTH))).toBeDefined();
    expect(() => parseBody('POST', depth(MAX_BODY_DEPTH + 1))).toThrow(new ApiError(400, 'Malformed request body'));
    expect(() => parseBody('POST', depth(500_000))).toThrow(new ApiError(400, 'Malformed request body'));
  });
  it.each([
    ['a NUL in a value', '{"server": {"name": "a\\u0000b"}}'],
    ['a NUL in a key', '{"a\\u0000": 1}'],
    ['a lone high surrogate', '{"name": "x\\ud800"}'],
    ['a lone low surrogate', '["\\udc00y"]'],
    ['surrogates in the wrong order', '"\\udc00\\ud800"'],
  ])('%s is a 400', (_what, raw) => {
    expect(() => parseBody('PUT', raw)).toThrow(
      new ApiError(400, 'Invalid input: strings must not hold a NUL character or an unpaired UTF-16 surrogate.'),
    );
  });
  it('a surrogate pair (an emoji) is fine', () => {
    expect(parseBody('POST', '{"name": "vm \\ud83d\\ude00"}')).toEqual({ name: 'vm \u{1F600}' });
  });
});
