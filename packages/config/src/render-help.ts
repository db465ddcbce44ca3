import { formatDuration, parseDuration } from './duration';
import type { ConfigSchema, OptionSpec } from './schema';
import { flagOf } from './sources';

/** Hides the password of a URL (`postgres://u:***@h/db`); other text is returned unchanged. */
export function redactUrl(text: string): string {
  if (!URL.canParse(text)) return text;
  const url = new URL(text);
  if (url.password === '') return text;
  url.password = '***';
  return url.toString();
}

function showDefault(spec: OptionSpec): string | undefined {
  if (spec.default === undefined) return undefined;
  if (spec.secret) return '(hidden)';
  if (spec.type === 'list') return spec.default.join(',') || '(empty)';
  if (spec.type === 'url') return redactUrl(spec.default);
  if (spec.type === 'duration') return formatDuration(parseDuration(spec.default) ?? 0);
  return String(spec.default);
}

function placeholder(spec: OptionSpec): string {
  if (spec.type === 'enum') return `<${spec.values.join('|')}>`;
  if (spec.type === 'bool') return '';
  return ` <${spec.type}>`;
}

/**
 * Human-readable help for a schema: each option's flag, env var, type, default or
 * "required", and its help text. Secret defaults and URL passwords are never shown.
 */
export function renderHelp(schema: ConfigSchema, title = 'Options'): string {
  const lines = [`${title} (precedence: command line > environment > config file > default):`, ''];
  for (const [name, spec] of Object.entries(schema)) {
    const ph = spec.type === 'enum' ? ` ${placeholder(spec)}` : placeholder(spec);
    const dflt = showDefault(spec);
    const status = spec.required ? 'required' : dflt === undefined ? 'optional' : `default: ${dflt}`;
    lines.push(`  ${flagOf(name)}${ph}`, `      env ${spec.env}; ${status}`);
    for (const line of spec.help.split('\n')) lines.push(`      ${line}`);
    lines.push('');
  }
  return lines.join('\n');
}

/**
 * A copy of a loaded configuration fit for a startup log line: `secret` options become
 * `"***"` and URL passwords are masked. Never log the configuration any other way.
 */
export function redactConfig(schema: ConfigSchema, config: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(config)) {
    const spec = schema[name];
    if (spec?.secret && value !== undefined) out[name] = '***';
    else out[name] = spec?.type === 'url' && typeof value === 'string' ? redactUrl(value) : value;
  }
  return out;
}
