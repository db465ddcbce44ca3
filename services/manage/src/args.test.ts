import { flag, intOption, keyValues, option, parseArgs, UsageError } from './args';

describe('parseArgs', () => {
  it.each([
    [['--name', 'c1', '--verbose'], 'name', 'c1'],
    [['--name=c1'], 'name', 'c1'],
    [['--transport-url', 'amqp://x'], 'transport_url', 'amqp://x'],
    [['--transport_url=amqp://y'], 'transport-url', 'amqp://y'],
    [['--name', 'a', '--name', 'b'], 'name', 'b'],
  ])('%j gives %s = %s', (argv, name, value) => {
    expect(option(parseArgs(argv, ['verbose']), name)).toBe(value);
  });

  it('keeps positionals and flags apart', () => {
    const args = parseArgs(['m1.x', 'auto', '--verbose', '512', '--swap', '0'], ['verbose']);
    expect(args.positionals).toEqual(['m1.x', 'auto', '512']);
    expect(flag(args, 'verbose')).toBe(true);
    expect(flag(args, 'strict')).toBe(false);
    expect(intOption(args, 'swap', 9)).toBe(0);
    expect(intOption(args, 'ephemeral', 9)).toBe(9);
  });

  it('refuses a missing value, unknown options, bad integers and key=value pairs', () => {
    expect(() => parseArgs(['--name'])).toThrow(new UsageError('argument --name: expected one argument'));
    expect(() => parseArgs(['--name', '--verbose'], ['verbose'])).toThrow('argument --name: expected one argument');
    expect(() => parseArgs(['--nope'], ['verbose'], ['name'])).toThrow('unrecognized arguments: --nope');
    expect(() => intOption(parseArgs(['--swap', '-1x']), 'swap', 0)).toThrow("argument --swap: invalid int value: '-1x'");
    expect(() => keyValues(parseArgs(['--property', 'novalue']), 'property')).toThrow("expected key=value, got 'novalue'");
  });

  it('collects repeated key=value options', () => {
    expect(keyValues(parseArgs(['--property', 'a=1', '--property=b=x=y']), 'property')).toEqual({ a: '1', b: 'x=y' });
  });
});
