import { type Attributes, type Context, type Link, SpanKind, TraceFlags, trace } from '@opentelemetry/api';
import { type Sampler, type SamplingResult, SamplingDecision } from '@opentelemetry/sdk-trace-base';
import { type SamplingOptions, type SpanFacts, SamplingPolicy } from './sampling-policy';

const KINDS: Record<SpanKind, SpanFacts['kind']> = {
  [SpanKind.INTERNAL]: 'internal',
  [SpanKind.SERVER]: 'server',
  [SpanKind.CLIENT]: 'client',
  [SpanKind.PRODUCER]: 'producer',
  [SpanKind.CONSUMER]: 'consumer',
};

/**
 * The OpenTelemetry sampler of every cellsched process: keeps a server's scheduling story
 * whole and bounds the rest ({@link SamplingPolicy} has the rules). A kept root records
 * which rule kept it in `cellsched.sampled_by`.
 */
export class StorySampler implements Sampler {
  private readonly policy: SamplingPolicy;

  constructor(options: SamplingOptions, now?: () => number) {
    this.policy = new SamplingPolicy(options, now);
  }

  shouldSample(ctx: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes, _links: Link[]): SamplingResult {
    const parentContext = trace.getSpanContext(ctx);
    const parent =
      parentContext === undefined || !trace.isSpanContextValid(parentContext)
        ? 'none'
        : (parentContext.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED
          ? 'sampled'
          : 'unsampled';
    const verdict = this.policy.decide({ traceId, name, kind: KINDS[kind] ?? 'internal', attributes, parent });
    if (!verdict.keep) return { decision: SamplingDecision.NOT_RECORD };
    return parent === 'none'
      ? { decision: SamplingDecision.RECORD_AND_SAMPLED, attributes: { 'cellsched.sampled_by': verdict.rule } }
      : { decision: SamplingDecision.RECORD_AND_SAMPLED };
  }

  toString(): string {
    const o = this.policy.options;
    return `StorySampler{mode=${o.mode}, storyRequests=${o.storyRequests.join('|')}, otherTracesPerMinute=${o.otherTracesPerMinute}, dbSpansPerTrace=${o.dbSpansPerTrace}}`;
  }
}
