import { DbInputError, uuidChecks } from './schema-layer';

class LayerError extends DbInputError {}
const { checkUuid, checkUuids } = uuidChecks((m) => new LayerError('layer.invalid_uuid', m));

test('a canonical uuid comes back lowercased', () => {
  expect(checkUuid('0A1B2C3D-0000-4000-8000-00000000000F', 'x')).toBe('0a1b2c3d-0000-4000-8000-00000000000f');
  expect(checkUuids(['0a1b2c3d-0000-4000-8000-00000000000f'], 'x')).toEqual(['0a1b2c3d-0000-4000-8000-00000000000f']);
});

test.each(['', 'nope', '0a1b2c3d00004000800000000000000f', '0a1b2c3d-0000-4000-8000-00000000000f ', "1' OR '1'='1"])(
  "%j is refused with the layer's error and code",
  (bad) => {
    let err: unknown;
    try {
      checkUuids(['0a1b2c3d-0000-4000-8000-00000000000f', bad], 'instance uuid');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LayerError);
    expect(err).toMatchObject({ code: 'layer.invalid_uuid', message: `instance uuid must be a uuid, got ${JSON.stringify(bad)}` });
  },
);
