import { ApiError } from './errors';
import { checkContentType, parseBody } from './request-body';

const status = (f: () => unknown): number | undefined => {
  try { f(); return undefined; } catch (err) { return err instanceof ApiError ? err.status : -1; }
};

describe('checkContentType', () => {
  it.each([undefined, '', 'application/json', 'Application/JSON; charset=UTF-8', 'application/vnd.openstack.compute+json', 'text/plain', 'text/plain;charset=UTF-8'])(
    '%j is accepted', (h) => { expect(status(() => checkContentType(h))).toBeUndefined(); });
  it.each(['text/xml', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'json', '*/*'])(
    '%j is 415', (h) => { expect(status(() => checkContentType(h))).toBe(415); });
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
