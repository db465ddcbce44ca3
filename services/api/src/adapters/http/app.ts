import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { callerFromToken, requireAdmin } from '../../domain/auth';
import { ApiError, errorBody } from '../../domain/errors';
import { atLeast, negotiate, requestedVersion, versionString, type Microversion } from '../../domain/microversion';
import { checkContentType, parseBody } from '../../domain/request-body';
import type { ApiDeps, ApiReply, Route } from './kit';
import { ROUTES } from './routes';
import { versionBody, versionsBody } from './versions';

function baseUrlOf(req: FastifyRequest): string {
  return `${req.protocol}://${req.headers.host ?? '127.0.0.1:8774'}`;
}

function versionHeaders(v: Microversion): Record<string, string> {
  const s = versionString(v);
  return {
    'openstack-api-version': `compute ${s}`,
    'x-openstack-nova-api-version': s,
    vary: 'OpenStack-API-Version, X-OpenStack-Nova-API-Version',
  };
}

async function send(reply: FastifyReply, r: ApiReply, requestId: string): Promise<FastifyReply> {
  void reply.code(r.status).headers({ 'x-openstack-request-id': requestId, 'x-compute-request-id': requestId, ...r.headers });
  if (r.body === undefined) return reply.send();
  return reply.type('application/json').send(JSON.stringify(r.body));
}

/** Runs one request of `route`; `contentType` is its Content-Type header as sent (set aside by buildApp's hook). */
async function handle(
  deps: ApiDeps,
  route: Route,
  req: FastifyRequest,
  reply: FastifyReply,
  contentType: string | undefined,
): Promise<FastifyReply> {
  const requestId = `req-${randomUUID()}`;
  const started = performance.now();
  try {
    return await handleIn(deps, route, { req, reply, requestId, contentType });
  } finally {
    deps.log.info(
      { request_id: requestId, method: req.method, url: req.url, status: reply.statusCode, ms: Math.round(performance.now() - started) },
      'request',
    );
  }
}

function serves(route: Route, v: Microversion): boolean {
  return (
    (route.minVersion === undefined || atLeast(v, route.minVersion)) &&
    (route.maxVersion === undefined || !atLeast(v, route.maxVersion + 1))
  );
}

function tokenOf(req: FastifyRequest): string | undefined {
  const token = req.headers['x-auth-token'];
  return Array.isArray(token) ? token[0] : token;
}

/**
 * Judges a request in Nova's order — token (401), microversion (400/406), route version (404),
 * policy of an admin-only route (403), Content-Type (415), body (400) — then runs the handler.
 * So a caller who may not make a request never learns how its body would have been judged.
 */
async function handleIn(
  deps: ApiDeps,
  route: Route,
  call: { req: FastifyRequest; reply: FastifyReply; requestId: string; contentType: string | undefined },
): Promise<FastifyReply> {
  const { req, reply, requestId } = call;
  try {
    const caller = callerFromToken(tokenOf(req));
    const version = negotiate(requestedVersion(req.headers));
    void reply.headers(versionHeaders(version));
    if (!serves(route, version)) throw new ApiError(404, 'The resource could not be found.');
    if (route.adminPolicy !== undefined) requireAdmin(caller, route.adminPolicy);
    checkContentType(call.contentType);
    const body = parseBody(req.method, typeof req.body === 'string' ? req.body : undefined);
    const r = await route.handler(
      {
        caller,
        version,
        requestId,
        baseUrl: baseUrlOf(req),
        params: req.params as Record<string, string>,
        query: req.query as Record<string, string | string[]>,
        body,
      },
      deps,
    );
    return await send(reply, r, requestId);
  } catch (err) {
    if (err instanceof ApiError) return send(reply, { status: err.status, body: errorBody(err.status, err.message) }, requestId);
    deps.log.error({ err, request_id: requestId }, 'unexpected error');
    return send(
      reply,
      {
        status: 500,
        body: errorBody(
          500,
          'Unexpected API Error. Please report this at http://bugs.launchpad.net/nova/ and attach the Nova API log if possible.',
        ),
      },
      requestId,
    );
  }
}

/** Nova's body size limit message (oslo.middleware sizelimit, which runs before authentication). */
const tooLarge = (limit: number): string => `Request is too large. Larger than max_request_body_size (${limit}).`;

/**
 * A request Node's HTTP parser refused (headers or URL too large, bad framing, a client too
 * slow): answered in Nova's error shape too, then the connection is closed.
 */
function clientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'Request header fields (the URL included) are too large.']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'The request was not received in time.']
        : [400, 'Bad Request', 'The request could not be parsed as HTTP.'];
  const body = JSON.stringify(errorBody(status, message));
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** An unknown path: under /v2.1 the token is checked first (401), as every other request's. */
function notFound(req: FastifyRequest): ApiReply {
  if (req.url.startsWith('/v2.1/')) {
    try {
      callerFromToken(tokenOf(req));
    } catch (err) {
      if (err instanceof ApiError) return { status: err.status, body: errorBody(err.status, err.message) };
    }
  }
  return { status: 404, body: errorBody(404, 'The resource could not be found.') };
}

/** Largest request body read (Nova's is oslo.middleware's `max_request_body_size`, 112 KiB by default). */
export const BODY_LIMIT = 1024 * 1024;

/**
 * Builds the compute API app (not listening): body size (413) → noauth2 (401) → microversion
 * → policy (403) → Content-Type (415) → body (400) → handler; every error is Nova's JSON body
 * (`badRequest`, `itemNotFound`, ...). `/` and `/v2.1` (version discovery) need no token.
 */
export function buildApp(deps: ApiDeps): FastifyInstance {
  const app = Fastify({
    logger: false,
    exposeHeadRoutes: false,
    bodyLimit: BODY_LIMIT,
    routerOptions: { ignoreTrailingSlash: true },
    clientErrorHandler: clientError,
  });
  // NOTE: bodies are kept as text here and judged in handleIn, after the token and the policy;
  // the Content-Type is set aside first, or Fastify would refuse a malformed one before both.
  const declaredContentType = new WeakMap<FastifyRequest, string | undefined>();
  app.addHook('onRequest', async (req) => {
    const type = req.headers['content-type'];
    declaredContentType.set(req, type);
    delete req.headers['content-type'];
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    done(null, body);
  });
  app.get('/', async (req, reply) => send(reply, { status: 200, body: versionsBody(baseUrlOf(req)) }, `req-${randomUUID()}`));
  app.get('/v2.1', async (req, reply) => send(reply, { status: 200, body: versionBody(baseUrlOf(req)) }, `req-${randomUUID()}`));
  for (const route of ROUTES)
    app.route({
      method: route.method,
      url: route.path,
      handler: (req, reply) => handle(deps, route, req, reply, declaredContentType.get(req)),
    });
  app.setNotFoundHandler((req, reply) => send(reply, notFound(req), `req-${randomUUID()}`));
  app.setErrorHandler((err, _req, reply) => {
    const status = err instanceof ApiError ? err.status : ((err as { statusCode?: number }).statusCode ?? 500);
    const message =
      status === 413
        ? tooLarge(BODY_LIMIT)
        : err instanceof ApiError
          ? err.message
          : status < 500
            ? (err as Error).message
            : 'Unexpected API Error.';
    return send(reply, { status, body: errorBody(status, message) }, `req-${randomUUID()}`);
  });
  return app;
}
