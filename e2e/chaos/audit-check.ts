// The allocation audits, seen from outside: what the cell conductors' own periodic audits logged
// during a scenario (passes, failures, heals), and `cellsched-manage placement audit` run at
// quiescence as an operator would (every cell, cell0 included, and placement).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { AUDIT_INTERVAL_MS, ROOT, type ChaosStack } from './stack';

const run = promisify(execFile);

interface AuditLine {
  msg?: string;
  time?: string | number;
  healed?: unknown[];
  err?: { message?: string; code?: string } | string;
}

/** One cell conductor's audit passes in its log since `from`: completed ones (with the time of the last) and failed ones. */
export interface AuditPasses {
  readonly service: string;
  readonly passes: number;
  readonly lastPassAt: number | undefined;
  readonly failures: string[];
  readonly healed: unknown[];
}

function parse(line: string): AuditLine | undefined {
  if (!line.includes('allocation audit')) return undefined;
  try {
    return JSON.parse(line) as AuditLine;
  } catch {
    return undefined;
  }
}

/** One cell conductor's audit passes in these log lines (pino JSON: `allocation audit`, `allocation audit failed`). Pure. */
export function parseAuditLog(service: string, lines: readonly string[]): AuditPasses {
  const p = { service, passes: 0, lastPassAt: undefined as number | undefined, failures: [] as string[], healed: [] as unknown[] };
  for (const rec of lines.map(parse)) {
    if (rec?.msg === 'allocation audit') {
      p.passes++;
      p.lastPassAt = new Date(rec.time ?? 0).getTime();
      p.healed.push(...(rec.healed ?? []));
    } else if (rec?.msg === 'allocation audit failed') {
      p.failures.push(typeof rec.err === 'string' ? rec.err : `${rec.err?.code ?? ''} ${rec.err?.message ?? 'no message'}`.trim());
    }
  }
  return p;
}

/** Every cell conductor's audit passes since the scenario began (its log offset in `logsFrom`). */
export function auditPasses(stack: ChaosStack, logsFrom: ReadonlyMap<string, number>): AuditPasses[] {
  return stack.servicesOf('cell-conductor').map((service) => parseAuditLog(service, stack.logSince(service, logsFrom.get(service) ?? 0)));
}

/** What the cell conductors' own audits healed during the scenario: a leak that existed, even if healed before the check. */
export function auditFindings(passes: readonly AuditPasses[]): string[] {
  // NOTE: the audit's `missing` list is not used: during a placement outage the audit reports every instance as missing
  // (294 in one soak) while the allocations were intact; a missing allocation is caught per consumer at quiescence.
  return passes.flatMap((p) => p.healed.map((h) => `${p.service}'s allocation audit healed a leak during the run: ${JSON.stringify(h)}`));
}

/**
 * Waits (≤ two audit periods plus a pass's retry budget) until every running cell conductor has
 * completed an audit pass after `since`, then returns the passes since the scenario began.
 */
export async function passesAfter(stack: ChaosStack, logsFrom: ReadonlyMap<string, number>, since: number): Promise<AuditPasses[]> {
  const until = Date.now() + 2 * AUDIT_INTERVAL_MS + 35_000;
  for (;;) {
    const passes = auditPasses(stack, logsFrom);
    const waiting = passes.filter((p) => stack.isRunning(p.service) && !((p.lastPassAt ?? 0) >= since));
    if (waiting.length === 0 || Date.now() > until) return passes;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** `cellsched-manage placement audit --verbose` against the stack: its exit code and output. */
export async function manageAudit(stack: ChaosStack): Promise<{ code: number; out: string }> {
  const args = [
    'services/manage/dist/main.js',
    '--api-db-url',
    stack.topology().apiDbUrl,
    '--placement-url',
    stack.placementUrl,
    'placement',
    'audit',
    '--verbose',
  ];
  try {
    const r = await run('node', args, { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    return { code: 0, out: `${r.stdout}${r.stderr}` };
  } catch (e) {
    const x = e as { code?: number | string; stdout?: string; stderr?: string; message: string };
    return { code: typeof x.code === 'number' ? x.code : -1, out: `${x.stdout ?? ''}${x.stderr ?? ''}` || x.message };
  }
}

/**
 * The `audit` invariant's problems: a cell conductor whose audit pass failed during the scenario
 * (it could not read its placement or its cell, past its retry budget), or that completed no
 * pass after quiescence; and the operator's audit finding orphaned allocations (exit 3) or not
 * running at all (any exit but 0 and 3).
 */
export async function auditProblems(
  stack: ChaosStack,
  logsFrom: ReadonlyMap<string, number>,
  quiescedAt: number,
): Promise<{ problems: string[]; passes: AuditPasses[] }> {
  const passes = await passesAfter(stack, logsFrom, quiescedAt);
  const problems: string[] = [];
  for (const p of passes) {
    if (p.failures.length > 0)
      problems.push(
        `${p.service}: ${p.failures.length} allocation audit pass(es) failed: ${[...new Set(p.failures)].slice(0, 3).join(' | ')}`,
      );
    if (stack.isRunning(p.service) && !((p.lastPassAt ?? 0) >= quiescedAt))
      problems.push(`${p.service}: no allocation audit pass completed after quiescence (${p.passes} during the scenario)`);
  }
  const m = await manageAudit(stack);
  if (m.code === 3) {
    for (const l of m.out.split('\n').filter((x) => x.startsWith('Allocations were set against')))
      problems.push(`cellsched-manage placement audit: ${l.trim()}`);
  } else if (m.code !== 0) {
    problems.push(`cellsched-manage placement audit could not run (exit ${m.code}): ${m.out.trim().split('\n').slice(0, 3).join(' | ')}`);
  }
  return { problems, passes };
}
