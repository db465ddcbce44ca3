import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Pool } from 'pg';
import { callerFromHeaders, isAllowed, type PolicyMode } from '../../domain/auth';
import { corsHeaders, isPreflight } from './cors';
import { PlacementError } from '../../domain/errors';
import { atLeast, negotiate, versionString, type Microversion } from '../../domain/microversion';
import { CandidateSnapshotCache } from '../sql/candidates-snapshot';
import { CandidateBodies } from './candidate-bodies';
import { renderError } from './errors-render';
import type { MethodSpec, PlacementRequest, RouteDef } from './kit';
import { ROUTES } from './routes';

const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'] as const;

/** Options of the HTTP app: the pool is the objects layer's only dependency. */
export interface AppOptions {
  readonly pool: Pool;
  /** The pool's candidate snapshots, when shared with the gRPC service (default: the app's own). */
  readonly snapshots?: CandidateSnapshotCache;
  /** Policy configuration (default `legacy`, Placement's defaults). */
  readonly policyMode?: PolicyMode;
  /** Origins allowed by the CORS middleware; empty or absent: no CORS handling. */
  readonly corsAllowedOrigins?: readonly string[];
  /** Told about unexpected (500) errors. */
  readonly onError?: (err: unknown, requestId: string) => void;
  /** Told about every answered request (for the request log). */
  readonly onResponse?: (r: { requestId: string; method: string; url: string; status: number; ms: number }) => void;
}

/** The options with every dependency made. */
type AppDeps = AppOptions & { readonly snapshots: CandidateSnapshotCache; readonly candidateBodies: CandidateBodies };

interface Ctx {
  requestId: string;
  version?: Microversion;
}

/**
 * Build the Placement REST app (not listening). Pipeline, as Placement's deploy.py:
 * request id → auth (noauth2, not for `/`) → microversion → content checks → route →
 * policy → handler; every error becomes Placement's JSON error body.
 */
export function buildApp(options: AppOptions): FastifyInstance {
  const opts: AppDeps = {
    ...options,
    snapshots: options.snapshots ?? new CandidateSnapshotCache(options.pool),
    candidateBodies: new CandidateBodies(),
  };
  const app = Fastify({
    logger: false,
    exposeHeadRoutes: false,
    bodyLimit: 16 * 1024 * 1024,
    routerOptions: { maxParamLength: 1000 },
    clientErrorHandler,
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    done(null, body);
  });
  for (const route of ROUTES) {
    app.route({ method: [...METHODS], url: toFastifyPath(route.path), handler: (req, reply) => dispatch(opts, route, req, reply) });
  }
  app.setNotFoundHandler((req, reply) => dispatch(opts, undefined, req, reply));
  app.setErrorHandler((err, req, reply) => {
    const ctx = { requestId: `req-${randomUUID()}` };
    const status = (err as { statusCode?: number }).statusCode ?? 500;
    return sendError(reply, req, ctx, new PlacementError(status >= 400 && status < 500 ? status : 500, (err as Error).message));
  });
  return app;
}

/**
 * Requests Node's HTTP parser rejects (e.g. `content-length: hi mom`) never reach a route;
 * answer them with Placement's JSON error instead of a bare 400.
 */
function clientErrorHandler(err: Error & { code?: string }, socket: import('node:net').Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const detail = err.code === 'HPE_INVALID_CONTENT_LENGTH' ? 'content-length header must be an integer' : 'Malformed HTTP request';
  const body = renderError(new PlacementError(400, detail), undefined, `req-${randomUUID()}`, undefined).body;
  socket.end(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

const toFastifyPath = (p: string): string => p.replace(/\{(\w+)\}/g, ':$1');

async function dispatch(opts: AppDeps, route: RouteDef | undefined, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const ctx: Ctx = { requestId: `req-${randomUUID()}` };
  const started = performance.now();
  try {
    const cors = corsHeaders(req.headers, opts.corsAllowedOrigins);
    void reply.headers(cors);
    if (isPreflight(req.method, req.headers, opts.corsAllowedOrigins)) return await reply.code(200).send();
    return await dispatchIn(opts, route, req, reply, ctx);
  } finally {
    opts.onResponse?.({
      requestId: ctx.requestId,
      method: req.method,
      url: req.url,
      status: reply.statusCode,
      ms: Math.round(performance.now() - started),
    });
  }
}

async function dispatchIn(
  opts: AppDeps,
  route: RouteDef | undefined,
  req: FastifyRequest,
  reply: FastifyReply,
  ctx: Ctx,
): Promise<FastifyReply> {
  try {
    const path = req.url.split('?')[0] ?? '/';
    const caller = authenticate(req, path);
    ctx.version = negotiate(header(req, 'openstack-api-version'));
    checkContentHeaders(req);
    if (route === undefined) throw new PlacementError(404, '', undefined, {}, true);
    const spec = route.methods[req.method];
    if (spec === undefined) return methodNotAllowed(reply, req, ctx, route);
    checkVersion(spec, ctx.version);
    checkMedia(spec, req, ctx.version);
    const target = new URLSearchParams(req.url.split('?')[1] ?? '').get('project_id') ?? undefined;
    if (!isAllowed(caller, spec.policy, opts.policyMode, target)) {
      throw new PlacementError(403, `Policy does not allow placement:${route.path} ${req.method} to be performed.`, undefined, {}, true);
    }
    const preq = toPlacementRequest(opts, req, ctx.version, caller, ctx.requestId);
    const res = await spec.handler(preq);
    void reply
      .code(res.status)
      .headers(commonHeaders(ctx))
      .headers(res.headers ?? {});
    // NOTE: a Buffer, not a string: Fastify appends "; charset=utf-8" to a string's content-type.
    if (res.rawJson !== undefined) return reply.header('content-type', 'application/json').send(Buffer.from(res.rawJson));
    if (res.body === undefined) return reply.removeHeader('content-type').send();
    return reply.header('content-type', 'application/json').send(Buffer.from(JSON.stringify(res.body)));
  } catch (err) {
    if (err instanceof PlacementError) return sendError(reply, req, ctx, err);
    opts.onError?.(err, ctx.requestId);
    return sendError(
      reply,
      req,
      ctx,
      new PlacementError(500, 'The server has either erred or is incapable of performing the requested operation.'),
    );
  }
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

function authenticate(req: FastifyRequest, path: string) {
  const caller = callerFromHeaders(
    header(req, 'x-auth-token'),
    header(req, 'x-roles'),
    header(req, 'openstack-system-scope'),
    header(req, 'x-project-id'),
  );
  if (caller === undefined) {
    if (path === '/' || path === '') return { userId: '', projectId: '', roles: [], systemScope: undefined };
    throw new PlacementError(401, 'Authentication required');
  }
  return caller;
}

function checkContentHeaders(req: FastifyRequest): void {
  const clen = header(req, 'content-length');
  if (clen === undefined || clen === '') return;
  if (!/^\s*\d+\s*$/.test(clen)) throw new PlacementError(400, 'content-length header must be an integer', undefined, {}, true);
  if (Number(clen) > 0 && !header(req, 'content-type')) {
    throw new PlacementError(400, 'content-type header required when content-length > 0', undefined, {}, true);
  }
}

function checkVersion(spec: MethodSpec, v: Microversion): void {
  const tooLow = spec.minVersion !== undefined && !atLeast(v, spec.minVersion);
  const tooHigh = spec.maxVersion !== undefined && atLeast(v, spec.maxVersion + 1);
  if (tooLow || tooHigh) {
    const status = spec.versionStatus ?? 404;
    // NOTE: webob's bare HTTPNotFound / HTTPMethodNotAllowed of version_handler: no detail.
    throw new PlacementError(status, '');
  }
}

function checkMedia(spec: MethodSpec, req: FastifyRequest, v: Microversion): void {
  if (typeof spec.requireJson === 'function' ? spec.requireJson(v) : spec.requireJson === true) {
    const ct = (header(req, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase();
    if (ct !== 'application/json') throw new PlacementError(415, `The media type ${ct || 'None'} is not supported, use application/json`);
  }
  if (spec.json) {
    const accept = header(req, 'accept');
    if (accept && !acceptsJson(accept)) throw new PlacementError(406, 'Only application/json is provided');
  }
}

/** Accept negotiation like webob's acceptable_offers for a single offer. */
export function acceptsJson(accept: string): boolean {
  return accept.split(',').some((part) => {
    const [range = '', ...params] = part.trim().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q !== undefined && Number(q.slice(2)) === 0) return false;
    const r = range.trim().toLowerCase();
    return r === 'application/json' || r === 'application/*' || r === '*/*';
  });
}

function methodNotAllowed(reply: FastifyReply, req: FastifyRequest, ctx: Ctx, route: RouteDef): FastifyReply {
  const allow = Object.keys(route.methods).join(', ');
  void reply.header('allow', allow);
  return sendError(reply, req, ctx, new PlacementError(405, 'The method specified is not allowed for this resource.'));
}

function commonHeaders(ctx: Ctx, vary = true): Record<string, string> {
  const h: Record<string, string> = { 'openstack-request-id': ctx.requestId, 'x-openstack-request-id': ctx.requestId };
  if (ctx.version !== undefined) {
    h['openstack-api-version'] = `placement ${versionString(ctx.version)}`;
    if (vary) h.vary = 'openstack-api-version';
  }
  return h;
}

function sendError(reply: FastifyReply, req: FastifyRequest, ctx: Ctx, err: PlacementError): FastifyReply {
  const r = renderError(err, ctx.version, ctx.requestId, header(req, 'accept'), {
    method: req.method,
    contentType: header(req, 'content-type'),
  });
  return reply
    .code(err.status)
    .headers(commonHeaders(ctx, !err.escaped))
    .headers(err.headers)
    .header('content-type', r.contentType)
    .send(Buffer.from(r.body));
}

function toPlacementRequest(
  opts: AppDeps,
  req: FastifyRequest,
  version: Microversion,
  caller: PlacementRequest['caller'],
  requestId: string,
): PlacementRequest {
  const qs = req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '';
  const query = new Map<string, string[]>();
  for (const [k, v] of new URLSearchParams(qs)) query.set(k, [...(query.get(k) ?? []), v]);
  return {
    method: req.method,
    params: req.params as Record<string, string>,
    query,
    headers: req.headers,
    rawBody: typeof req.body === 'string' ? req.body : undefined,
    version,
    caller,
    requestId,
    pool: opts.pool,
    snapshots: opts.snapshots,
    candidateBodies: opts.candidateBodies,
    baseUrl: `${req.protocol}://${req.headers.host ?? '127.0.0.1'}`,
  };
}
