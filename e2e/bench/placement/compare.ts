/**
 * Candidate-set equality between two answers of GET /allocation_candidates: the same
 * allocation requests (as sets, order ignored) and the same provider summaries.
 */

interface Body {
  allocation_requests: { allocations: Record<string, { resources: Record<string, number> }>; mappings?: Record<string, string[]> }[];
  provider_summaries: Record<string, unknown>;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function requestKey(ar: Body['allocation_requests'][number]): string {
  const mappings = Object.fromEntries(Object.entries(ar.mappings ?? {}).map(([k, v]) => [k, [...v].sort()]));
  return canonical({ a: ar.allocations, m: mappings });
}

/** Result of a comparison: equal, or what differs. */
export interface Comparison {
  readonly equal: boolean;
  readonly candidates: [number, number];
  readonly summaries: [number, number];
  readonly detail: string;
}

/** Compares two JSON bodies; summaries' trait lists are compared as sets. */
export function compareCandidates(aText: string, bText: string): Comparison {
  const a = JSON.parse(aText) as Body;
  const b = JSON.parse(bText) as Body;
  const ka = a.allocation_requests.map(requestKey).sort();
  const kb = b.allocation_requests.map(requestKey).sort();
  const norm = (s: Record<string, unknown>): string[] =>
    Object.entries(s)
      .map(([u, v]) => canonical({ u, ...(v as object), traits: [...((v as { traits?: string[] }).traits ?? [])].sort() }))
      .sort();
  const sa = norm(a.provider_summaries);
  const sb = norm(b.provider_summaries);
  const sameReqs = ka.length === kb.length && ka.every((k, i) => k === kb[i]);
  const sameSums = sa.length === sb.length && sa.every((k, i) => k === sb[i]);
  const detail =
    sameReqs && sameSums ? 'identical' : `${sameReqs ? '' : 'allocation_requests differ; '}${sameSums ? '' : 'provider_summaries differ'}`;
  return { equal: sameReqs && sameSums, candidates: [ka.length, kb.length], summaries: [sa.length, sb.length], detail };
}
