/**
 * Placement's JSON-schema check of GET /allocation_candidates query parameters, per
 * microversion (placement/schemas/allocation_candidate.py), with jsonschema's wording in
 * the error text ("Invalid query string parameters: ... Failed validating 'pattern' ...").
 */
import { CandidateQueryError } from './errors';

const GROUP_PAT = '[1-9][0-9]*';
const GROUP_PAT_1_33 = '[a-zA-Z0-9_-]{1,64}';
const LIMIT_PATTERN = /^[1-9][0-9]*$/;

/** The group-key pattern (`resources`, `required1`, `member_of_NET`, ...) at a microversion. */
export function groupKeyPattern(minor: number): RegExp {
  const prefixes = minor >= 31 ? 'resources|required|member_of|in_tree' : 'resources|required|member_of';
  const suffix = minor >= 33 ? GROUP_PAT_1_33 : GROUP_PAT;
  return new RegExp(`^(${prefixes})(${suffix})?$`);
}

/** The schema's patternProperties keys, sorted as jsonschema lists them in its message. */
function patternSources(minor: number): string[] {
  const prefixes = minor >= 31 ? ['resources', 'required', 'member_of', 'in_tree'] : ['resources', 'required', 'member_of'];
  const suffix = minor >= 33 ? GROUP_PAT_1_33 : GROUP_PAT;
  return prefixes.map((p) => `^${p}(${suffix})?$`).sort();
}

function allowedFixedKeys(minor: number): Set<string> {
  const keys = new Set<string>();
  if (minor < 25) {
    keys.add('resources');
    if (minor >= 17) keys.add('required');
    if (minor >= 21) keys.add('member_of');
  } else {
    keys.add('group_policy');
  }
  if (minor >= 16) keys.add('limit');
  if (minor >= 35) keys.add('root_required');
  if (minor >= 36) keys.add('same_subtree');
  return keys;
}

function fail(detail: string): never {
  throw new CandidateQueryError(`Invalid query string parameters: ${detail}`);
}

function pyRepr(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * Validates the query (last value of each key, as webob's `dict(req.GET)`) against the
 * microversion's schema. Throws CandidateQueryError with jsonschema-like text.
 */
export function validateQuerySchema(last: ReadonlyMap<string, string>, minor: number): void {
  const fixed = allowedFixedKeys(minor);
  const pattern = minor >= 25 ? groupKeyPattern(minor) : null;
  const unexpected = [...last.keys()].filter((k) => !fixed.has(k) && !(pattern?.test(k) ?? false)).sort();
  if (unexpected.length > 0) {
    const names = unexpected.map(pyRepr).join(', ');
    if (minor >= 25) {
      const regexes = patternSources(minor).map(pyRepr).join(', ');
      fail(
        `${names} ${unexpected.length === 1 ? 'does' : 'do'} not match any of the regexes: ${regexes}\n\nFailed validating 'additionalProperties' in schema`,
      );
    }
    fail(
      `Additional properties are not allowed (${names} ${unexpected.length === 1 ? 'was' : 'were'} unexpected)\n\nFailed validating 'additionalProperties' in schema`,
    );
  }
  if (minor < 25 && !last.has('resources')) {
    fail("'resources' is a required property\n\nFailed validating 'required' in schema");
  }
  const limit = last.get('limit');
  if (limit !== undefined) {
    if (limit.length < 1) fail(`${pyRepr(limit)} is too short\n\nFailed validating 'minLength' in schema['properties']['limit']`);
    if (!LIMIT_PATTERN.test(limit)) {
      fail(`${pyRepr(limit)} does not match '^[1-9][0-9]*$'\n\nFailed validating 'pattern' in schema['properties']['limit']`);
    }
  }
  const policy = last.get('group_policy');
  if (policy !== undefined && policy !== 'none' && policy !== 'isolate') {
    fail(`${pyRepr(policy)} is not one of ['none', 'isolate']\n\nFailed validating 'enum' in schema['properties']['group_policy']`);
  }
}
