import { aggregateId, parseAggregateCreate, parseAggregateHost, parseAggregateMetadata, parseAggregateUpdate } from './aggregate-bodies';

const err = (fn: () => unknown): string => {
  try {
    fn();
    return 'ok';
  } catch (e) {
    return `${(e as { status: number }).status} ${(e as Error).message}`;
  }
};

describe('aggregate bodies', () => {
  it("reads Nova's create and update: names and zones trimmed, a null zone none", () => {
    expect(parseAggregateCreate({ aggregate: { name: 'agg', availability_zone: 'az1' } })).toEqual({
      name: 'agg',
      availabilityZone: 'az1',
    });
    expect(parseAggregateCreate({ aggregate: { name: 'agg', availability_zone: null } })).toEqual({
      name: 'agg',
      availabilityZone: undefined,
    });
    expect(parseAggregateUpdate({ aggregate: { name: '  spaced  ' } })).toEqual({ name: 'spaced' });
    expect(parseAggregateUpdate({ aggregate: { availability_zone: null } })).toEqual({ availabilityZone: null });
  });

  it.each([
    [() => parseAggregateCreate([]), "400 [] is not of type 'object'"],
    [
      () => parseAggregateCreate({ aggregate: 'x' }),
      "400 Invalid input for field/attribute aggregate. Value: x. 'x' is not of type 'object'",
    ],
    [() => parseAggregateCreate({ aggregate: { name: '' } }), "400 Invalid input for field/attribute name. Value: . '' is too short"],
    [
      () => parseAggregateCreate({ aggregate: { name: 'n', availability_zone: ' az' } }),
      "400 Invalid input for field/attribute availability_zone. Value:  az. ' az' is not valid under any of the given schemas",
    ],
    [
      () => parseAggregateCreate({ aggregate: { name: 'n', availability_zone: 3 } }),
      '400 Invalid input for field/attribute availability_zone. Value: 3. 3 is not valid under any of the given schemas',
    ],
    [() => parseAggregateCreate({ aggregate: { name: 'n' }, x: 1 }), "400 Additional properties are not allowed ('x' was unexpected)"],
    [
      () => parseAggregateUpdate({ aggregate: { name: '   ' } }),
      "400 An invalid 'name' value was provided. The name must be: printable characters with at least one non space character",
    ],
    [
      () => parseAggregateUpdate({ aggregate: { uuid: 'u' } }),
      "400 Invalid input for field/attribute aggregate. Additional properties are not allowed ('uuid' was unexpected)",
    ],
    [
      () => parseAggregateHost({ add_host: { host: '' } }, 'add_host'),
      "400 Invalid input for field/attribute host. Value: . '' is too short",
    ],
    [
      () => parseAggregateHost({ remove_host: { host: 'h', x: 1 } }, 'remove_host'),
      "400 Invalid input for field/attribute remove_host. Additional properties are not allowed ('x' was unexpected)",
    ],
    [
      () => parseAggregateHost({ add_host: null }, 'add_host'),
      "400 Invalid input for field/attribute add_host. Value: null. None is not of type 'object'",
    ],
    [
      () => parseAggregateMetadata({ set_metadata: { metadata: [] } }),
      "400 Invalid input for field/attribute metadata. Value: []. [] is not of type 'object'",
    ],
    [
      () => parseAggregateMetadata({ set_metadata: { metadata: { k: 'x'.repeat(256) } } }),
      `400 Invalid input for field/attribute k. Value: ${'x'.repeat(256)}. '${'x'.repeat(256)}' is too long`,
    ],
    [() => aggregateId('1.5'), '400 Invalid input received: id must be an integer'],
  ])('refuses as Nova (%#)', (fn, message) => {
    expect(err(fn)).toBe(message);
  });

  it("reads ids as Python's int() does", () => {
    expect([aggregateId('7'), aggregateId(' +7 '), aggregateId('1_0')]).toEqual([7, 7, 10]);
  });

  it('keeps metadata values and nulls as given', () => {
    expect(parseAggregateMetadata({ set_metadata: { metadata: { ssd: 'true', gone: null, 'a:b.c d': '' } } })).toEqual({
      ssd: 'true',
      gone: null,
      'a:b.c d': '',
    });
  });
});
