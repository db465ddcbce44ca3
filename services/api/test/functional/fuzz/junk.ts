// Arbitraries of bad input shared by every body the compute API reads (fast-check).
import fc from 'fast-check';

/** Any UTF-16 code unit, lone surrogates and NUL included. */
const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));

/** Strings a careless parser trips on: control characters, lone surrogates, huge, unicode, JSON-looking. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: anyUnit, maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\udc00x',
    '\t',
    '\n',
    ' lead',
    'trail ',
    '\u2028',
    '\u00a0x',
    '{}',
    '[]',
    'null',
    'true',
    '0',
    '-1',
    '1e309',
    'NaN',
    '__proto__',
    'constructor',
    "'; DROP TABLE instances; --",
    '%00',
    '\\u0000',
  ),
  fc.nat({ max: 70_000 }).map((n) => 'x'.repeat(n)),
);

/** Any JSON value, including deep and wide ones and nasty strings. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 1, arbitrary: nastyString },
  { weight: 1, arbitrary: fc.dictionary(nastyString, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 200 }).map((n) => JSON.parse('['.repeat(n) + ']'.repeat(n)) as unknown) },
);

/** A value of a JSON type other than `keep`'s (`'integer'` counts as a number). */
export function wrongType(...keep: ('string' | 'number' | 'integer' | 'boolean' | 'null' | 'array' | 'object')[]): fc.Arbitrary<unknown> {
  const all: [string, fc.Arbitrary<unknown>][] = [
    // NOTE: where integers are allowed, a "wrong" number must not be one (a double may be 3.0).
    ['string', nastyString],
    ['number', fc.double({ noNaN: true }).filter((d) => !keep.includes('integer') || !Number.isInteger(d))],
    ['integer', fc.integer()],
    ['boolean', fc.boolean()],
    ['null', fc.constant(null)],
    ['array', fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 })],
    ['object', fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })],
  ];
  const excluded = new Set<string>(keep.includes('number') ? [...keep, 'integer'] : keep);
  return fc.oneof(...all.filter(([t]) => !excluded.has(t)).map(([, a]) => a));
}

/** Text that is not JSON at all (or is cut short). */
export const notJson: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('{', '{"a": 1,}', "{'a': 1}", '<xml/>', 'a=1&b=2', '[1, 2', 'nul', '"unterminated', '{"a" 1}', '\u0000', '\ufeff{}'),
  fc
    .jsonValue({ maxDepth: 3 })
    .map((v) => JSON.stringify(v))
    .filter((s) => s.length > 1)
    .map((s) => s.slice(0, -1)),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }).filter((s) => {
    try {
      JSON.parse(s);
      return false;
    } catch {
      return true;
    }
  }),
);

/** A body mutation: returns the changed body (the argument is a fresh copy it may change). */
export type Mutation = (body: Record<string, unknown>) => Record<string, unknown>;

function parentOf(body: Record<string, unknown>, path: readonly string[]): Record<string, unknown> {
  let node = body;
  for (const key of path.slice(0, -1)) {
    const child = node[key];
    if (child === null || typeof child !== 'object' || Array.isArray(child)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  return node;
}

/** Sets `path` (creating parents) to a value drawn from `values`. */
export function setAt(path: readonly string[], values: fc.Arbitrary<unknown>): fc.Arbitrary<Mutation> {
  // NOTE: defineProperty, so that a key such as __proto__ becomes an own key of the JSON sent.
  return values.map((v) => (body: Record<string, unknown>) => {
    Object.defineProperty(parentOf(body, path), path[path.length - 1] ?? '', {
      value: v,
      enumerable: true,
      writable: true,
      configurable: true,
    });
    return body;
  });
}

/** Removes `path` (a required field). */
export function removeAt(path: readonly string[]): fc.Arbitrary<Mutation> {
  return fc.constant((body: Record<string, unknown>) => {
    const parent = parentOf(body, path);
    Reflect.deleteProperty(parent, path[path.length - 1] ?? '');
    return body;
  });
}

/** Adds a key the schema does not know under `path` (an object whose additionalProperties are false). */
export function addUnknownAt(path: readonly string[], known: readonly string[]): fc.Arbitrary<Mutation> {
  const key = fc
    .oneof(fc.constantFrom('colour', '__proto__', 'constructor', 'Name', 'name '), fc.string({ minLength: 1, maxLength: 12 }))
    .filter((k) => !known.includes(k));
  return fc.tuple(key, fc.jsonValue({ maxDepth: 1 })).chain(([k, v]) => setAt([...path, k], fc.constant(v)));
}
