import { deliveryAttempt, headerString, isCompatibleVersion, parseRpcVersion, toSnakeCase } from './headers';

describe('toSnakeCase', () => {
  it.each([
    ['BuildAndRunInstance', 'build_and_run_instance'],
    ['buildAndRunInstance', 'build_and_run_instance'],
    ['ScheduleAndBuildInstances', 'schedule_and_build_instances'],
    ['EchoCast', 'echo_cast'],
    ['echo', 'echo'],
    ['GetVNCConsole', 'get_vnc_console'],
  ])('%s -> %s', (input, expected) => expect(toSnakeCase(input)).toBe(expected));
});

describe('RPC versions', () => {
  it.each([
    ['1.0', { major: 1, minor: 0 }],
    ['2.17', { major: 2, minor: 17 }],
  ])('parses %s', (text, v) => {
    expect(parseRpcVersion(text)).toEqual(v);
  });
  it.each([[undefined], [''], ['1'], ['1.0.0'], ['v1.0'], [1.0], ['a.b']])('rejects %p', (text) => {
    expect(parseRpcVersion(text)).toBeUndefined();
  });
  it.each([
    ['1.3', '1.0', true],
    ['1.3', '1.3', true],
    ['1.3', '1.4', false],
    ['1.3', '2.0', false],
    ['2.0', '1.0', false],
  ])('server %s handles cast %s: %p', (mine, theirs, ok) => {
    expect(isCompatibleVersion(parseRpcVersion(mine)!, parseRpcVersion(theirs)!)).toBe(ok);
  });
});

describe('header readers', () => {
  it('counts attempts from x-delivery-count', () => {
    expect(deliveryAttempt(undefined)).toBe(1);
    expect(deliveryAttempt({})).toBe(1);
    expect(deliveryAttempt({ 'x-delivery-count': 0 })).toBe(1);
    expect(deliveryAttempt({ 'x-delivery-count': 2 })).toBe(3);
    expect(deliveryAttempt({ 'x-delivery-count': 'junk' })).toBe(1);
  });
  it('reads strings and buffers', () => {
    expect(headerString({ a: 'x', b: Buffer.from('y'), c: 3 }, 'a')).toBe('x');
    expect(headerString({ b: Buffer.from('y') }, 'b')).toBe('y');
    expect(headerString({ c: 3 }, 'c')).toBeUndefined();
  });
});
