/**
 * "METHOD /path" patterns naming the API requests whose traces are always kept (a server's
 * scheduling story). `*` stands for one path segment: `POST /v2.1/servers/*\/action`.
 */

/** One parsed pattern. */
export interface RequestPattern {
  readonly method: string;
  readonly segments: readonly string[];
  /** As written, for messages. */
  readonly text: string;
}

const METHOD = /^[A-Z]+$/;

function segmentsOf(path: string): string[] {
  return path.replace(/\/+$/, '').split('/').slice(1);
}

/** Parses `METHOD /path/with/*` (method upper case, path absolute); a reason when it is not one. */
export function parseRequestPattern(text: string): RequestPattern | string {
  const [method = '', path = '', ...rest] = text.trim().split(/\s+/);
  if (rest.length > 0 || !METHOD.test(method) || !path.startsWith('/')) {
    return `request pattern '${text}' is not 'METHOD /path' (e.g. 'POST /v2.1/servers/*/action')`;
  }
  return { method, segments: segmentsOf(path), text };
}

/** Whether a request (`url.path`, query excluded) matches the pattern; a trailing slash is ignored. */
export function requestMatches(pattern: RequestPattern, method: string, path: string): boolean {
  if (pattern.method !== method.toUpperCase()) return false;
  const segments = segmentsOf(path.split('?')[0] ?? '');
  return segments.length === pattern.segments.length && pattern.segments.every((p, i) => p === '*' || p === segments[i]);
}

/** Parses every pattern: the parsed ones, and one problem per unparsable one. */
export function parseRequestPatterns(texts: readonly string[]): { patterns: RequestPattern[]; problems: string[] } {
  const patterns: RequestPattern[] = [];
  const problems: string[] = [];
  for (const text of texts) {
    const parsed = parseRequestPattern(text);
    if (typeof parsed === 'string') problems.push(parsed);
    else patterns.push(parsed);
  }
  return { patterns, problems };
}
