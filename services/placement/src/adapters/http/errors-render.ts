import { EXPLANATIONS, ErrorCode, PlacementError, TITLES } from '../../domain/errors';
import { atLeast, MAX_VERSION, MIN_VERSION, versionString, type Microversion } from '../../domain/microversion';

/**
 * The media type webob renders an error in: of text/html and application/json, the one the
 * Accept gives the highest q (the most specific matching range decides; text/html first on a
 * tie), plain text when it accepts neither. No Accept or `*\/*`: JSON (Placement's request log
 * sets it).
 */
export function errorMediaType(accept: string | undefined): 'json' | 'html' | 'plain' {
  if (accept === undefined || accept.trim() === '' || accept.trim() === '*/*') return 'json';
  const ranges = accept.split(',').map((part) => {
    const [range = '', ...params] = part.trim().split(';');
    const q = params.map((x) => x.trim()).find((x) => x.startsWith('q='));
    const [type = '', subtype = ''] = range.trim().toLowerCase().split('/');
    return { type, subtype, q: q === undefined ? 1 : Number(q.slice(2)) };
  });
  const qOf = (type: string, subtype: string): number => {
    let best = { specificity: -1, q: 0 };
    for (const r of ranges) {
      const specificity =
        r.type === type && r.subtype === subtype
          ? 2
          : r.type === type && r.subtype === '*'
            ? 1
            : r.type === '*' && r.subtype === '*'
              ? 0
              : -1;
      if (specificity > best.specificity) best = { specificity, q: r.q };
    }
    return best.q;
  };
  const [html, json] = [qOf('text', 'html'), qOf('application', 'json')];
  if (html <= 0 && json <= 0) return 'plain';
  return html >= json ? 'html' : 'json';
}

/** What webob's templates name of the request. */
export interface RequestFacts {
  readonly method?: string;
  readonly contentType?: string;
}

/**
 * The body of webob's error templates before tags are stripped (JSON, plain) or the detail is
 * escaped (HTML): the 406 names the Accept (Placement's request log has turned an absent or
 * `*\/*` one into application/json), the 405 the method, others the status's explanation.
 */
function templateBody(err: PlacementError, accept: string | undefined, req: RequestFacts, esc: (s: string) => string): string {
  const detail = esc(err.detail);
  if (err.status === 406) {
    const type = accept === undefined || accept === '' || accept === '*/*' ? 'application/json' : accept;
    return `The resource could not be generated that was acceptable to your browser\n(content of type ${esc(type)}. <br /><br />\n${detail}`;
  }
  if (err.status === 405 && req.method !== undefined)
    return `The method ${esc(req.method)} is not allowed for this resource. <br /><br />\n${detail}`;
  if (err.status === 415)
    return `The request media type ${esc(req.contentType ?? '')} is not supported by this server.\n<br /><br />\n${detail}`;
  return `${EXPLANATIONS[err.status] ?? ''}<br /><br />\n${detail}\n\n`;
}

/** webob's strip_tags: newlines become blanks, `<br>` a newline, other tags go. */
const stripTags = (s: string): string =>
  s
    .replace(/\n/g, ' ')
    .replace(/\r/g, '')
    .replace(/<br.*?>/gis, '\n')
    .replace(/<!--|-->/g, '')
    .replace(/<[^>]*>/gs, '');

/**
 * Render an error as webob and Placement's json_error_formatter do: `{"errors": [{status,
 * title, detail, request_id, code (1.23+), min/max_version (406 before a version was
 * chosen)}]}`, or webob's HTML / plain text page when the Accept asks for one.
 */
export function renderError(
  err: PlacementError,
  version: Microversion | undefined,
  requestId: string,
  accept: string | undefined,
  req: RequestFacts = {},
): { contentType: string; body: string } {
  const title = TITLES[err.status] ?? 'Error';
  const status = `${err.status} ${title}`;
  const media = errorMediaType(accept);
  if (media !== 'json') {
    if (media === 'plain')
      return { contentType: 'text/plain; charset=UTF-8', body: `${status}\n\n${stripTags(templateBody(err, accept, req, (x) => x))}` };
    const body = templateBody(err, accept, req, escapeHtml);
    return {
      contentType: 'text/html; charset=UTF-8',
      body: `<html>\n <head>\n  <title>${status}</title>\n </head>\n <body>\n  <h1>${status}</h1>\n  ${body}\n </body>\n</html>`,
    };
  }
  const e: Record<string, unknown> = { status: err.status, title, detail: stripTags(templateBody(err, accept, req, (x) => x)) };
  if (version !== undefined && atLeast(version, 23)) e.code = err.code ?? ErrorCode.DEFAULT;
  e.request_id = requestId;
  if (err.status === 406 && version === undefined) {
    e.max_version = versionString(MAX_VERSION);
    e.min_version = versionString(MIN_VERSION);
  }
  return { contentType: 'application/json', body: JSON.stringify({ errors: [e] }) };
}

const escapeHtml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
