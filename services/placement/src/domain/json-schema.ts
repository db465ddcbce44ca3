import { pyPformat, pyRepr } from './py-repr';

/** The subset of JSON Schema that Placement's request schemas use. */
export interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly patternProperties?: Readonly<Record<string, JsonSchema>>;
  readonly additionalProperties?: boolean;
  readonly required?: readonly string[];
  readonly minProperties?: number;
  readonly items?: JsonSchema;
  readonly minItems?: number;
  readonly uniqueItems?: boolean;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly format?: 'uuid';
  readonly enum?: readonly unknown[];
  readonly anyOf?: readonly JsonSchema[];
}

interface SchemaError {
  readonly path: number;
  readonly message: string;
}
type Path = ReadonlyArray<string | number>;
interface Where {
  readonly depth: number;
  readonly schemaPath: Path;
  readonly instancePath: Path;
  readonly schema: JsonSchema;
  readonly value: unknown;
}

const pyPath = (p: Path): string => p.map((x) => `[${pyRepr(x)}]`).join('');

/** A value as jsonschema prints it: pformat at width 72, continuation lines indented by 4. */
const block = (v: unknown): string => pyPformat(v, 72).replace(/\n/g, '\n    ');

/** str() of a Python jsonschema ValidationError: message, failing keyword, schema and instance. */
function pyError(w: Where, keyword: string, message: string): SchemaError {
  const sub = w.schema as Record<string, unknown>;
  return {
    path: w.depth,
    message: `${message}\n\nFailed validating ${pyRepr(keyword)} in schema${pyPath(w.schemaPath)}:\n    ${block(sub)}\n\nOn instance${pyPath(w.instancePath)}:\n    ${block(w.value)}`,
  };
}

/**
 * The `uuid` format as Placement registers it (util.py: oslo's is_uuid_like, which replaces
 * jsonschema's own): after removing `urn:` / `uuid:`, the braces at the ends and every dash,
 * 32 hex digits. So braced, urn-prefixed and undashed forms pass, as on real Placement.
 */
function isSchemaUuid(v: string): boolean {
  const hex = v
    .replace(/urn:/g, '')
    .replace(/uuid:/g, '')
    .replace(/^[{}]+|[{}]+$/g, '')
    .replace(/-/g, '');
  return /^[0-9a-f]{32}$/i.test(hex);
}

/**
 * Validate `value` against `schema`. Returns undefined when valid, else the text of the
 * most relevant error (shallowest path, first in schema order), worded like Python's
 * jsonschema `str(ValidationError)` so that Placement's clients and tests see the same text.
 */
export function validateSchema(value: unknown, schema: JsonSchema): string | undefined {
  const errors: SchemaError[] = [];
  check({ depth: 0, schemaPath: [], instancePath: [], schema, value }, errors);
  let best: SchemaError | undefined;
  for (const e of errors) if (best === undefined || e.path < best.path) best = e;
  return best?.message;
}

function typeOf(v: unknown): string[] {
  if (v === null) return ['null'];
  if (Array.isArray(v)) return ['array'];
  if (typeof v === 'number') return Number.isInteger(v) ? ['integer', 'number'] : ['number'];
  if (typeof v === 'boolean') return ['boolean'];
  return [typeof v];
}

type Push = (keyword: string, message: string) => void;

const child = (w: Where, schemaKeys: Path, key: string | number, schema: JsonSchema, value: unknown): Where => ({
  depth: w.depth + 1,
  schemaPath: [...w.schemaPath, ...schemaKeys],
  instancePath: [...w.instancePath, key],
  schema,
  value,
});

function check(w: Where, out: SchemaError[]): void {
  const { value: v, schema: s } = w;
  const push: Push = (keyword, message) => {
    out.push(pyError(w, keyword, message));
  };
  if (s.type !== undefined) {
    const want = typeof s.type === 'string' ? [s.type] : s.type;
    if (!typeOf(v).some((t) => want.includes(t))) {
      push('type', `${pyRepr(v)} is not of type ${want.map(pyRepr).join(', ')}`);
      return;
    }
  }
  if (
    s.anyOf !== undefined &&
    !s.anyOf.some((sub) => {
      const e: SchemaError[] = [];
      check({ ...w, schema: sub }, e);
      return e.length === 0;
    })
  ) {
    push('anyOf', `${pyRepr(v)} is not valid under any of the given schemas`);
  }
  if (s.enum !== undefined && !s.enum.includes(v)) push('enum', `${pyRepr(v)} is not one of ${pyRepr(s.enum)}`);
  if (typeof v === 'string') checkString(v, s, push);
  if (typeof v === 'number') checkNumber(v, s, push);
  if (Array.isArray(v)) checkArray(w, v, out, push);
  else if (v !== null && typeof v === 'object') checkObject(w, v as Record<string, unknown>, out, push);
}

function checkString(v: string, s: JsonSchema, push: Push): void {
  const len = [...v].length;
  if (s.minLength !== undefined && len < s.minLength) push('minLength', `${pyRepr(v)} is too short`);
  if (s.maxLength !== undefined && len > s.maxLength) push('maxLength', `${pyRepr(v)} is too long`);
  if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(v)) push('pattern', `${pyRepr(v)} does not match ${pyRepr(s.pattern)}`);
  if (s.format === 'uuid' && !isSchemaUuid(v)) push('format', `${pyRepr(v)} is not a 'uuid'`);
}

function checkNumber(v: number, s: JsonSchema, push: Push): void {
  if (s.minimum !== undefined && v < s.minimum) push('minimum', `${pyRepr(v)} is less than the minimum of ${pyRepr(s.minimum)}`);
  if (s.maximum !== undefined && v > s.maximum) push('maximum', `${pyRepr(v)} is greater than the maximum of ${pyRepr(s.maximum)}`);
}

function checkArray(w: Where, v: unknown[], out: SchemaError[], push: Push): void {
  const s = w.schema;
  if (s.minItems !== undefined && v.length < s.minItems) push('minItems', `${pyRepr(v)} is too short`);
  if (s.uniqueItems === true && new Set(v.map((x) => JSON.stringify(x))).size !== v.length) {
    push('uniqueItems', `${pyRepr(v)} has non-unique elements`);
  }
  const items = s.items;
  if (items !== undefined)
    v.forEach((item, i) => {
      check(child(w, ['items'], i, items, item), out);
    });
}

function checkObject(w: Where, v: Record<string, unknown>, out: SchemaError[], push: Push): void {
  const s = w.schema;
  const keys = Object.keys(v);
  for (const [name, sub] of Object.entries(s.properties ?? {})) {
    if (name in v) check(child(w, ['properties', name], name, sub, v[name]), out);
  }
  const patterns = Object.entries(s.patternProperties ?? {});
  for (const [pat, sub] of patterns) {
    const re = new RegExp(pat, 'u');
    for (const k of keys) if (re.test(k)) check(child(w, ['patternProperties', pat], k, sub, v[k]), out);
  }
  for (const r of s.required ?? []) if (!(r in v)) push('required', `${pyRepr(r)} is a required property`);
  if (s.minProperties !== undefined && keys.length < s.minProperties) push('minProperties', `${pyRepr(v)} does not have enough properties`);
  if (s.additionalProperties === false) {
    const extras = keys.filter((k) => !(k in (s.properties ?? {})) && !patterns.some(([p]) => new RegExp(p, 'u').test(k)));
    if (extras.length > 0)
      push(
        'additionalProperties',
        additionalMessage(
          extras,
          patterns.map(([p]) => p),
        ),
      );
  }
}

function additionalMessage(unsorted: string[], patterns: string[]): string {
  const extras = [...unsorted].sort();
  const verbPlural = extras.length > 1;
  if (patterns.length > 0) {
    return `${extras.map(pyRepr).join(', ')} ${verbPlural ? 'do' : 'does'} not match any of the regexes: ${[...patterns].sort().map(pyRepr).join(', ')}`;
  }
  return `Additional properties are not allowed (${extras.map(pyRepr).join(', ')} ${verbPlural ? 'were' : 'was'} unexpected)`;
}
