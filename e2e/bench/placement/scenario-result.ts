/**
 * What a placement benchmark run records (main.ts measures it, report.ts prints it, the
 * JSON under results/ keeps it).
 */
import type { Comparison } from './compare';
import type { Stats } from './measure';

/** What one target measured in one scenario. */
export interface TargetResult {
  target: string;
  load_seconds: number;
  providers_per_second: number;
  query: Stats;
  query_uncached: Stats;
  query_limit5: Stats;
  concurrent_rps: number;
  concurrent: Stats;
  claims_per_second: number;
  claims_ok: number;
  claims_conflict: number;
  claim: Stats;
  candidates: number;
  response_bytes: number;
}

/** One scenario: a data set, its query, and every target's results. */
export interface ScenarioResult {
  scenario: string;
  providers: number;
  query: string;
  targets: TargetResult[];
  equal_fresh?: Comparison;
  equal_after_claims?: Comparison;
}
