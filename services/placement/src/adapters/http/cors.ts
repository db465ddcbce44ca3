/**
 * CORS like oslo.middleware's, configured with allowed origins: preflights (OPTIONS with
 * Origin and Access-Control-Request-Method) are answered 200 by the middleware itself;
 * allowed origins get Access-Control-* headers, others get none.
 */
type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** Headers a browser may send, as Placement's CORS defaults allow them. */
const ALLOW_HEADERS = ['openstack-api-version', 'x-auth-token', 'x-openstack-request-id', 'content-type', 'accept'];
const EXPOSE_HEADERS = ['openstack-api-version', 'x-openstack-request-id', 'openstack-request-id'];
const ALLOW_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'HEAD'];

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** True for a CORS preflight the middleware answers itself (only when CORS is configured). */
export function isPreflight(method: string, h: Headers, origins: readonly string[] | undefined): boolean {
  return (
    (origins?.length ?? 0) > 0 &&
    method === 'OPTIONS' &&
    one(h.origin) !== undefined &&
    one(h['access-control-request-method']) !== undefined
  );
}

/** Access-Control-* headers for this request (empty unless the origin is allowed). */
export function corsHeaders(h: Headers, origins: readonly string[] | undefined): Record<string, string> {
  const origin = one(h.origin);
  if (!origins || origin === undefined || !(origins.includes(origin) || origins.includes('*'))) return {};
  const out: Record<string, string> = { 'access-control-allow-origin': origin, vary: 'Origin' };
  const method = one(h['access-control-request-method']);
  if (method !== undefined) {
    const asked = (one(h['access-control-request-headers']) ?? '')
      .split(',')
      .map((x) => x.trim().toLowerCase())
      .filter((x) => x !== '');
    const allowed = asked.filter((x) => ALLOW_HEADERS.includes(x));
    if (allowed.length > 0) out['access-control-allow-headers'] = allowed.join(',');
    out['access-control-allow-methods'] = ALLOW_METHODS.join(',');
  } else {
    out['access-control-expose-headers'] = EXPOSE_HEADERS.join(',');
  }
  return out;
}
