import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { type TailSpan, spansFromRequest } from './otlp-json';

const MAX_BODY = 16 * 1024 * 1024;

function reply(res: ServerResponse, code: number, body: object): void {
  res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function handle(req: IncomingMessage, res: ServerResponse, onSpans: (spans: TailSpan[]) => void): void {
  if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/traces') return reply(res, 404, { error: 'only POST /v1/traces' });
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
    try {
      onSpans(spansFromRequest(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      reply(res, 200, {});
    } catch {
      reply(res, 400, { error: 'body is not JSON' });
    }
  });
}

/** An OTLP/HTTP JSON receiver (`POST /v1/traces`); resolves with the server once listening. */
export function startReceiver(host: string, port: number, onSpans: (spans: TailSpan[]) => void): Promise<Server> {
  const server = createServer((req, res) => handle(req, res, onSpans));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

/**
 * Reads OTLP JSON lines appended to `file` (from its start, or only new ones with
 * `fromEnd`), polling every `everyMs`; starts over if the file shrinks. Returns a stop function.
 * With `once`, reads what is there, calls `onSpans` and returns at once.
 */
export function tailFile(file: string, opts: { fromEnd: boolean; once: boolean; everyMs: number }, onSpans: (spans: TailSpan[]) => void): () => void {
  let offset = opts.fromEnd ? sizeOf(file) : 0;
  let partial = '';
  const readNew = () => {
    const size = sizeOf(file);
    if (size < offset) { offset = 0; partial = ''; }
    if (size === offset) return;
    const fd = openSync(file, 'r');
    const buf = Buffer.alloc(size - offset);
    try { readSync(fd, buf, 0, buf.length, offset); } finally { closeSync(fd); }
    offset = size;
    const lines = (partial + buf.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) onSpans(parseLine(line));
  };
  readNew();
  if (opts.once) return () => undefined;
  const timer = setInterval(readNew, opts.everyMs);
  return () => clearInterval(timer);
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function parseLine(line: string): TailSpan[] {
  if (!line.trim()) return [];
  try {
    return spansFromRequest(JSON.parse(line));
  } catch {
    return [];
  }
}
