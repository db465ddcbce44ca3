import { RenderMemos } from '../../domain/candidates/render-json';
import type { CandidateSnapshot } from '../../domain/candidates/types';

const MAX_BODIES_PER_SNAPSHOT = 16;
const MAX_CACHED_BODY = 16 * 1024 * 1024;

/**
 * The rendered answers of GET /allocation_candidates: bodies per snapshot, keyed by microversion
 * and query, and the renderer's memos. A snapshot is immutable and the search pure, so an
 * identical query on an unchanged database has an identical answer; any committed change makes a
 * new snapshot and drops these with the old one. One per app (buildApp makes it), never module-level.
 */
export class CandidateBodies {
  private readonly bodies = new WeakMap<CandidateSnapshot, Map<string, string>>();
  /** The renderer's memos (name tables and provider nodes shared by successive snapshots). */
  readonly memos = new RenderMemos();

  /** The body of `key` on `snapshot`: the cached one, else `render()`'s (kept unless too large or too many). */
  answer(snapshot: CandidateSnapshot, key: string, render: () => string): string {
    let perSnapshot = this.bodies.get(snapshot);
    if (!perSnapshot) this.bodies.set(snapshot, (perSnapshot = new Map()));
    const hit = perSnapshot.get(key);
    if (hit !== undefined) return hit;
    const body = render();
    if (body.length <= MAX_CACHED_BODY && perSnapshot.size < MAX_BODIES_PER_SNAPSHOT) perSnapshot.set(key, body);
    return body;
  }
}
