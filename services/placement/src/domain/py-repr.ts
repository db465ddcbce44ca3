/**
 * Python `repr()` of a JSON value, so validation messages read exactly like
 * Placement's (which come from Python's jsonschema).
 */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return pyNumber(value);
  if (typeof value === 'string') return pyString(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>);
  return `{${entries.map(([k, v]) => `${pyString(k)}: ${pyRepr(v)}`).join(', ')}}`;
}

function pyNumber(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : n < 0 ? '-inf' : 'nan';
  return String(n);
}

function pyString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of s) {
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch < ' ') out += `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${quote}${out}${quote}`;
}

const sortedEntries = (o: object): Array<[string, unknown]> => Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** `repr()` as pprint's safe_repr writes it: like {@link pyRepr}, with dict keys sorted. */
function ppRepr(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(ppRepr).join(', ')}]`;
  if (value !== null && typeof value === 'object')
    return `{${sortedEntries(value)
      .map(([k, v]) => `${pyString(k)}: ${ppRepr(v)}`)
      .join(', ')}}`;
  return pyRepr(value);
}

/**
 * Python's `pprint.pformat(value, width)` for JSON values (what jsonschema prints a schema and
 * an instance with): the repr when it fits, else one dict item or list element per line,
 * keys sorted. Long strings are not split (no schema or instance of ours has spaces to split on).
 */
export function pyPformat(value: unknown, width = 80): string {
  const out: string[] = [];
  format(value, 0, 0, width, out);
  return out.join('');
}

function format(value: unknown, indent: number, allowance: number, width: number, out: string[]): void {
  const rep = ppRepr(value);
  if (rep.length <= width - indent - allowance || value === null || typeof value !== 'object') {
    out.push(rep);
    return;
  }
  const items: Array<[string | undefined, unknown]> = Array.isArray(value) ? value.map((v) => [undefined, v]) : sortedEntries(value);
  if (items.length === 0) {
    out.push(rep);
    return;
  }
  out.push(Array.isArray(value) ? '[' : '{');
  const inner = indent + 1;
  items.forEach(([key, v], i) => {
    const last = i === items.length - 1;
    if (i > 0) out.push(`,\n${' '.repeat(inner)}`);
    const itemAllowance = last ? allowance + 1 : 1;
    if (key === undefined) {
      format(v, inner, itemAllowance, width, out);
      return;
    }
    const k = pyString(key);
    out.push(`${k}: `);
    format(v, inner + k.length + 2, itemAllowance, width, out);
  });
  out.push(Array.isArray(value) ? ']' : '}');
}
