import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { callerFromToken } from '../../domain/auth';
import { ApiError, errorBody } from '../../domain/errors';
import { atLeast, negotiate, requestedVersion, versionString, type Microversion } from '../../domain/microversion';
import type { ApiDeps, ApiReply, Route } from './kit';
import { ROUTES } from './routes';
import { versionBody, versionsBody } from './versions';

function baseUrlOf(req: FastifyRequest): string {
  return `${req.protocol}://${req.headers.host ?? '127.0.0.1:8774'}`;
}

function versionHeaders(v: Microversion): Record<string, string> {
  const s = versionString(v);
  return { 'openstack-api-version': `compute ${s}`, 'x-openstack-nova-api-version': s, vary: 'OpenStack-API-Version, X-OpenStack-Nova-API-Version' };
}

async function send(reply: FastifyReply, r: ApiReply, requestId: string): Promise<FastifyReply> {
  void reply.code(r.status).headers({ 'x-openstack-request-id': requestId, 'x-compute-request-id': requestId, ...r.headers });
  if (r.body === undefined) return reply.send();
  return reply.type('application/json').send(JSON.stringify(r.body));
}

async function handle(deps: ApiDeps, route: Route, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const requestId = `req-${randomUUID()}`;
  const started = performance.now();
  try {
    return await handleIn(deps, route, req, reply, requestId);
  } finally {
    deps.log.info({ request_id: requestId, method: req.method, url: req.url, status: reply.statusCode, ms: Math.round(performance.now() - started) }, 'request');
  }
}

async function handleIn(deps: ApiDeps, route: Route, req: FastifyRequest, reply: FastifyReply, requestId: string): Promise<FastifyReply> {
  let version: Microversion | undefined;
  try {
    const token = req.headers['x-auth-token'];
    const caller = callerFromToken(Array.isArray(token) ? token[0] : token);
    version = negotiate(requestedVersion(req.headers));
    void reply.headers(versionHeaders(version));
    if ((route.minVersion !== undefined && !atLeast(version, route.minVersion)) || (route.maxVersion !== undefined && atLeast(version, route.maxVersion + 1))) throw new ApiError(404, 'The resource could not be found.');
    const r = await route.handler({
      caller, version, requestId, baseUrl: baseUrlOf(req), params: req.params as Record<string, string>,
      query: req.query as Record<string, string | string[]>, body: req.body,
    }, deps);
    return await send(reply, r, requestId);
  } catch (err) {
    if (err instanceof ApiError) return send(reply, { status: err.status, body: errorBody(err.status, err.message) }, requestId);
    deps.log.error({ err, request_id: requestId }, 'unexpected error');
    return send(reply, { status: 500, body: errorBody(500, 'Unexpected API Error. Please report this at http://bugs.launchpad.net/nova/ and attach the Nova API log if possible.') }, requestId);
  }
}

function parseJson(_req: FastifyRequest, body: string, done: (err: Error | null, value?: unknown) => void): void {
  if (body === '') { done(null, undefined); return; }
  try {
    done(null, JSON.parse(body));
  } catch {
    done(new ApiError(400, 'Malformed request body'));
  }
}

/**
 * Builds the compute API app (not listening): noauth2 → microversion → route → handler;
 * every error is Nova's JSON body (`badRequest`, `itemNotFound`, ...). `/` and `/v2.1`
 * (version discovery) need no token.
 */
export function buildApp(deps: ApiDeps): FastifyInstance {
  const app = Fastify({ logger: false, exposeHeadRoutes: false, bodyLimit: 1024 * 1024, routerOptions: { ignoreTrailingSlash: true } });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, parseJson);
  app.get('/', async (req, reply) => send(reply, { status: 200, body: versionsBody(baseUrlOf(req)) }, `req-${randomUUID()}`));
  app.get('/v2.1', async (req, reply) => send(reply, { status: 200, body: versionBody(baseUrlOf(req)) }, `req-${randomUUID()}`));
  for (const route of ROUTES) app.route({ method: route.method, url: route.path, handler: (req, reply) => handle(deps, route, req, reply) });
  app.setNotFoundHandler((_req, reply) => send(reply, { status: 404, body: errorBody(404, 'The resource could not be found.') }, `req-${randomUUID()}`));
  app.setErrorHandler((err, _req, reply) => {
    const status = err instanceof ApiError ? err.status : ((err as { statusCode?: number }).statusCode ?? 500);
    const message = err instanceof ApiError ? err.message : status < 500 ? (err as Error).message : 'Unexpected API Error.';
    return send(reply, { status, body: errorBody(status, message) }, `req-${randomUUID()}`);
  });
  return app;
}
