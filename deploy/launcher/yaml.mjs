// A YAML writer for the documents the launcher generates (compose files): maps, lists and
// scalars only. Strings are written plain when YAML reads them back as the same string, else
// double-quoted (JSON strings are valid YAML); short lists of scalars are written inline.

const PLAIN = /^[A-Za-z_./][A-Za-z0-9_./:@=,+-]*(?: [A-Za-z0-9_./:@=,+()'-]+)*$/;
const RESERVED = /^(?:true|false|yes|no|on|off|null|y|n|~)$/i;
const INLINE_MAX = 130;

const isScalar = (v) => v === null || typeof v !== 'object';

function scalar(v) {
  if (v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const s = String(v);
  return PLAIN.test(s) && !RESERVED.test(s) && !s.endsWith(':') && !s.includes(': ') && !s.includes(' #') ? s : JSON.stringify(s);
}

const key = (k) => (PLAIN.test(k) && !RESERVED.test(k) ? k : JSON.stringify(k));

function inlineList(list) {
  if (!list.every(isScalar)) return undefined;
  const text = `[${list.map((v) => (typeof v === 'string' ? JSON.stringify(v) : scalar(v))).join(', ')}]`;
  return text.length <= INLINE_MAX ? text : undefined;
}

function lines(value, indent) {
  const pad = ' '.repeat(indent);
  if (Array.isArray(value)) {
    return value.flatMap((item) => {
      if (isScalar(item)) return [`${pad}- ${scalar(item)}`];
      const [first, ...rest] = lines(item, indent + 2);
      return [`${pad}- ${first.trimStart()}`, ...rest];
    });
  }
  return Object.entries(value)
    .filter(([, v]) => v !== undefined)
    .flatMap(([k, v]) => {
      if (isScalar(v)) return [`${pad}${key(k)}: ${scalar(v)}`];
      const inline = Array.isArray(v) ? inlineList(v) : undefined;
      if (inline !== undefined) return [`${pad}${key(k)}: ${inline}`];
      if ((Array.isArray(v) && v.length === 0) || Object.keys(v).length === 0)
        return [`${pad}${key(k)}: ${Array.isArray(v) ? '[]' : '{}'}`];
      return [`${pad}${key(k)}:`, ...lines(v, indent + 2)];
    });
}

/** `doc` as YAML, after `header` (lines written as `# ...` comments). */
export function toYaml(doc, header = []) {
  return [...header.map((l) => (l === '' ? '#' : `# ${l}`)), ...lines(doc, 0)].join('\n') + '\n';
}
