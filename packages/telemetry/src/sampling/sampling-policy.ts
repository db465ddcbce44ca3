/**
 * Which spans are recorded: the decision of the story sampler, free of OpenTelemetry types
 * (the `StorySampler` adapts it). In order:
 * 1. a database span (`pg.query`, `pg-pool.connect`) is kept only inside a kept trace, and
 *    at most `dbSpansPerTrace` of them per trace in this process (0: none at all);
 * 2. any other span with a parent follows its parent, local or remote (AMQP headers, gRPC
 *    metadata, a saved traceparent): a trace is kept or dropped whole;
 * 3. a root is kept when it is an API request of a server's story (`storyRequests`: the
 *    create, an action, a delete), or in mode `all`; any other root (a read, placement's REST
 *    API, a heartbeat, a sweeper, an audit, a periodic refresh) only within
 *    `otherTracesPerMinute`.
 */
import { TokenBucket, PerTraceCap } from './budgets';
import { type RequestPattern, parseRequestPatterns, requestMatches } from './request-patterns';

/** `story`: the rules above; `all`: every root too (debugging, the old behaviour but for the database cap). */
export type SamplerMode = 'story' | 'all';

/** The sampler's knobs; services take them from their config (`telemetrySampler`, ...). */
export interface SamplingOptions {
  readonly mode: SamplerMode;
  /** `METHOD /path` patterns (`*` = one segment) of the API requests whose traces are always kept. */
  readonly storyRequests: readonly string[];
  /** Traces per minute, per process, kept among all other roots. 0: none. */
  readonly otherTracesPerMinute: number;
  /** Database spans kept per kept trace, per process. 0: none (the pg instrumentation is not even loaded). */
  readonly dbSpansPerTrace: number;
}

/** The requests that make or change a server: each one's trace is its scheduling story. */
export const DEFAULT_STORY_REQUESTS: readonly string[] = ['POST /v2.1/servers', 'POST /v2.1/servers/*/action', 'DELETE /v2.1/servers/*'];

export const DEFAULT_SAMPLING: SamplingOptions = {
  mode: 'story',
  storyRequests: DEFAULT_STORY_REQUESTS,
  otherTracesPerMinute: 0,
  dbSpansPerTrace: 0,
};

/** What the sampler knows about a span when it starts. */
export interface SpanFacts {
  readonly traceId: string;
  readonly name: string;
  readonly kind: 'internal' | 'server' | 'client' | 'producer' | 'consumer';
  readonly attributes: Readonly<Record<string, unknown>>;
  /** `none` for a root; else whether the parent span was sampled. */
  readonly parent: 'none' | 'sampled' | 'unsampled';
}

/** Which rule decided (recorded on kept roots as `cellsched.sampled_by`). */
export type SamplingRule = 'db-span' | 'db-outside-kept-trace' | 'db-cap' | 'parent' | 'all' | 'story-request' | 'other-budget' | 'other';

export interface SamplingVerdict {
  readonly keep: boolean;
  readonly rule: SamplingRule;
}

/** Every problem with the options, empty when valid. */
export function samplingProblems(options: SamplingOptions): string[] {
  const problems = parseRequestPatterns(options.storyRequests).problems;
  if (options.mode !== 'story' && options.mode !== 'all') problems.push(`sampler mode must be story or all, got '${String(options.mode)}'`);
  if (!(options.otherTracesPerMinute >= 0)) problems.push('otherTracesPerMinute must be >= 0');
  if (!(options.dbSpansPerTrace >= 0)) problems.push('dbSpansPerTrace must be >= 0');
  return problems;
}

/** Whether a span is a database client span of the pg instrumentation. */
export function isDbSpan(facts: Pick<SpanFacts, 'name' | 'attributes'>): boolean {
  return (
    facts.name.startsWith('pg.') ||
    facts.name.startsWith('pg-pool.') ||
    facts.attributes['db.system.name'] === 'postgresql' ||
    facts.attributes['db.system'] === 'postgresql'
  );
}

function requestOf(facts: SpanFacts): { method: string; path: string } | undefined {
  const a = facts.attributes;
  const method = a['http.request.method'] ?? a['http.method'];
  const path = a['url.path'] ?? a['http.target'];
  return facts.kind === 'server' && typeof method === 'string' && typeof path === 'string' ? { method, path } : undefined;
}

/** The decisions of one process: stateful only in its two budgets. */
export class SamplingPolicy {
  private readonly patterns: readonly RequestPattern[];
  private readonly other: TokenBucket;
  private readonly db: PerTraceCap;

  constructor(
    readonly options: SamplingOptions,
    private readonly now: () => number = Date.now,
  ) {
    const { patterns, problems } = parseRequestPatterns(options.storyRequests);
    if (problems.length > 0) throw new Error(problems.join('; '));
    this.patterns = patterns;
    this.other = new TokenBucket(options.otherTracesPerMinute);
    this.db = new PerTraceCap(options.dbSpansPerTrace);
  }

  decide(facts: SpanFacts): SamplingVerdict {
    if (isDbSpan(facts)) {
      if (facts.parent !== 'sampled') return { keep: false, rule: 'db-outside-kept-trace' };
      return this.db.take(facts.traceId) ? { keep: true, rule: 'db-span' } : { keep: false, rule: 'db-cap' };
    }
    if (facts.parent !== 'none') return { keep: facts.parent === 'sampled', rule: 'parent' };
    if (this.options.mode === 'all') return { keep: true, rule: 'all' };
    if (this.isStoryRequest(facts)) return { keep: true, rule: 'story-request' };
    return this.other.take(this.now()) ? { keep: true, rule: 'other-budget' } : { keep: false, rule: 'other' };
  }

  private isStoryRequest(facts: SpanFacts): boolean {
    const request = requestOf(facts);
    return request !== undefined && this.patterns.some((p) => requestMatches(p, request.method, request.path));
  }
}
