import { EXPLANATIONS, ErrorCode, PlacementError, TITLES } from '../../domain/errors';
import { atLeast, MAX_VERSION, MIN_VERSION, versionString, type Microversion } from '../../domain/microversion';

/** How an error body is rendered, following the request's Accept like webob does. */
export function wantsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return /application\/json|\*\/\*|application\/\*/.test(accept) || !/text\/html|text\/plain/.test(accept);
}

/**
 * Render an error like Placement's json_error_formatter: `{"errors": [{status, title,
 * detail, request_id, code (1.23+), min/max_version (406 before a version was chosen)}]}`.
 */
export function renderError(
  err: PlacementError, version: Microversion | undefined, requestId: string, accept: string | undefined,
  explanation?: string,
): { contentType: string; body: string } {
  const title = TITLES[err.status] ?? 'Error';
  const detail = err.status === 406 ? notAcceptableDetail(err.detail, accept) : `${explanation ?? EXPLANATIONS[err.status] ?? ''}\n\n ${err.detail}  `;
  if (!wantsJson(accept)) {
    const html = /text\/html/.test(accept ?? '');
    const text = `${err.status} ${title}\n\n${detail}`;
    return html
      ? { contentType: 'text/html; charset=UTF-8', body: `<html><head><title>${err.status} ${title}</title></head><body><h1>${err.status} ${title}</h1>${escapeHtml(detail)}</body></html>` }
      : { contentType: 'text/plain; charset=UTF-8', body: text };
  }
  const e: Record<string, unknown> = { status: err.status, title, detail };
  if (version !== undefined && atLeast(version, 23)) e.code = err.code ?? ErrorCode.DEFAULT;
  e.request_id = requestId;
  if (err.status === 406 && version === undefined) {
    e.max_version = versionString(MAX_VERSION);
    e.min_version = versionString(MIN_VERSION);
  }
  return { contentType: 'application/json', body: JSON.stringify({ errors: [e] }) };
}

/**
 * webob's 406 template names the request's Accept (Placement's request log has turned an
 * absent or `*\/*` one into application/json) and ends without the usual trailing blanks.
 */
function notAcceptableDetail(detail: string, accept: string | undefined): string {
  const type = accept === undefined || accept === '' || accept === '*/*' ? 'application/json' : accept;
  return `The resource could not be generated that was acceptable to your browser (content of type ${type}. \n\n ${detail}`;
}

const escapeHtml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
