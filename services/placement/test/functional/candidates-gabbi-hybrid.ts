/**
 * Development check of the allocation-candidates engine against Placement's own gabbits
 * before the rest of cellsched's REST API exists: an HTTP server that answers
 * GET /allocation_candidates with cellsched's engine reading the REAL Placement's
 * database, and proxies every other request to the real Placement. Run the gabbi files
 * against it: identical data, so any failure is an engine difference.
 *
 *   tsx services/placement/test/functional/candidates-gabbi-hybrid.ts [PORT] [PEER_URL] [PEER_DB_URL]
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { Pool } from 'pg';
import { CandidateQueryError } from '../../src/domain/candidates/errors';
import { parseCandidateQuery } from '../../src/domain/candidates/query-parser';
import { renderCandidatesJson, RenderMemos } from '../../src/domain/candidates/render-json';
import { queryAllocationCandidates } from '../../src/adapters/sql/candidates-query';
import { CandidateSnapshotCache } from '../../src/adapters/sql/candidates-snapshot';

const port = Number(process.argv[2] ?? 18700);
const peer = new URL(process.argv[3] ?? 'http://127.0.0.1:18778');
const pool = new Pool({
  connectionString: process.argv[4] ?? 'postgres://placement_peer:placement_peer@127.0.0.1:5432/placement_peer',
  max: 4,
});
const snapshots = new CandidateSnapshotCache(pool);
const memos = new RenderMemos();

function proxy(req: IncomingMessage, res: ServerResponse): void {
  const up = request({ host: peer.hostname, port: peer.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
    res.writeHead(r.statusCode ?? 502, r.headers);
    r.pipe(res);
  });
  up.on('error', () => res.writeHead(502).end());
  req.pipe(up);
}

function versionOf(req: IncomingMessage): number | null {
  const h = String(req.headers['openstack-api-version'] ?? '');
  const m = /placement\s+(latest|1\.(\d+))/i.exec(h);
  if (!m) return null;
  return m[1] === 'latest' ? 39 : Number(m[2]);
}

async function candidates(req: IncomingMessage, res: ServerResponse, minor: number): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://x');
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'openstack-api-version': `placement 1.${minor}`,
    vary: 'openstack-api-version',
  };
  if (minor >= 15) Object.assign(headers, { 'cache-control': 'no-cache', 'last-modified': new Date().toUTCString() });
  try {
    const { groups, params } = parseCandidateQuery([...url.searchParams], minor);
    const { snapshot, result } = await queryAllocationCandidates(snapshots, groups, params);
    const requested = new Set(groups.flatMap((g) => [...g.resources.keys()]));
    res.writeHead(200, headers).end(renderCandidatesJson(snapshot, result, minor, requested, memos));
  } catch (err) {
    const status = err instanceof CandidateQueryError ? 400 : 500;
    const detail = `The server could not comply with the request since it is either malformed or otherwise incorrect.\n\n ${(err as Error).message}  `;
    res.writeHead(status, headers).end(
      JSON.stringify({
        errors: [
          {
            status,
            title: 'Bad Request',
            detail,
            code: (err as CandidateQueryError).code ?? 'placement.undefined_code',
            request_id: 'req-hybrid',
          },
        ],
      }),
    );
  }
}

createServer((req, res) => {
  const minor = versionOf(req);
  const mine = req.method === 'GET' && (req.url ?? '').startsWith('/allocation_candidates') && req.headers['x-auth-token'] === 'admin';
  if (mine && minor !== null && minor >= 10 && String(req.headers.accept ?? 'application/json').includes('json')) {
    void candidates(req, res, minor);
    return;
  }
  proxy(req, res);
}).listen(port, '127.0.0.1', () => console.log(`hybrid on http://127.0.0.1:${port} -> candidates from cellsched, rest from ${peer.href}`));
