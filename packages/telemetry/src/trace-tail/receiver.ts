import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { type FoundTrace, tracesToJson } from './found-trace';
import { type TailSpan, spansFromRequest } from './otlp-json';

const MAX_BODY = 16 * 1024 * 1024;
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 1000;

/** What the receiver does with what it is sent and asked. */
export interface ReceiverHandlers {
  /** Spans of one `POST /v1/traces`, with the request as parsed (to write it to a file). */
  onSpans(spans: TailSpan[], request: unknown): void;
  /** `GET /v1/traces?match=TEXT&limit=N`: the last `limit` traces that mention `match` (the latest without it). */
  find(match: string | undefined, limit: number): FoundTrace[];
}

function reply(res: ServerResponse, code: number, body: object): void {
  res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function receive(req: IncomingMessage, res: ServerResponse, handlers: ReceiverHandlers): void {
  if (!(req.headers['content-type'] ?? '').includes('json')) {
    return reply(res, 415, { error: 'only OTLP/HTTP JSON: set OTEL_EXPORTER_OTLP_PROTOCOL=http/json' });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size <= MAX_BODY) chunks.push(c);
  });
  req.on('end', () => {
    if (size > MAX_BODY) return reply(res, 413, { error: 'body too large' });
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return reply(res, 400, { error: 'body is not JSON' });
    }
    handlers.onSpans(spansFromRequest(body), body);
    reply(res, 200, {});
  });
}

function query(url: URL, res: ServerResponse, handlers: ReceiverHandlers): void {
  const limit = Number(url.searchParams.get('limit') ?? DEFAULT_LIMIT);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    return reply(res, 400, { error: `limit must be a whole number in [1, ${MAX_LIMIT}]` });
  const match = url.searchParams.get('match') ?? undefined;
  if (match === '') return reply(res, 400, { error: 'match must not be empty' });
  reply(res, 200, tracesToJson(handlers.find(match, limit)));
}

function handle(req: IncomingMessage, res: ServerResponse, handlers: ReceiverHandlers): void {
  const url = new URL(req.url ?? '/', 'http://trace-tail');
  if (url.pathname === '/v1/traces' && req.method === 'POST') return receive(req, res, handlers);
  if (url.pathname === '/v1/traces' && req.method === 'GET') return query(url, res, handlers);
  if (url.pathname === '/healthz' && req.method === 'GET') return reply(res, 200, { status: 'ok' });
  reply(res, 404, { error: 'POST /v1/traces (OTLP/HTTP JSON), GET /v1/traces?match=TEXT&limit=N, GET /healthz' });
}

/**
 * trace-tail's HTTP server: an OTLP/HTTP JSON receiver (`POST /v1/traces`), a query endpoint
 * over what it received (`GET /v1/traces?match=`) and a health check (`GET /healthz`).
 * Resolves with the server once listening.
 */
export function startReceiver(host: string, port: number, handlers: ReceiverHandlers): Promise<Server> {
  const server = createServer((req, res) => handle(req, res, handlers));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
