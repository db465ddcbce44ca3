/** Tallies differences by class and prints them (largest first), with one example each. */
import type { Difference } from './compare';
import type { Operation } from './world';

export interface ClassTally {
  cls: string;
  count: number;
  textOnly: boolean;
  peerBug?: string;
  example: { index: number; op: Operation; peer: string; ours: string };
}

export interface Summary {
  seed: number;
  operations: number;
  /** Operations whose answers differ in status, code, header or body. */
  differingOps: number;
  /** Of those, operations where real Placement is wrong (a 500, or a known bug of it). */
  peerBugOps: number;
  /** Operations that differ in an error's text only. */
  textOnlyOps: number;
  classes: ClassTally[];
}

export class Tally {
  private readonly classes = new Map<string, ClassTally>();
  private differing = 0;
  private peerBugs = 0;
  private textOnly = 0;

  add(index: number, op: Operation, diffs: readonly Difference[]): void {
    if (diffs.length === 0) return;
    if (diffs.every((d) => d.textOnly)) this.textOnly++;
    else if (diffs.some((d) => d.peerBug !== undefined)) this.peerBugs++;
    else this.differing++;
    for (const d of diffs) {
      const t = this.classes.get(d.cls);
      if (t) t.count++;
      else
        this.classes.set(d.cls, {
          cls: d.cls,
          count: 1,
          textOnly: d.textOnly,
          peerBug: d.peerBug,
          example: { index, op, peer: d.peer, ours: d.ours },
        });
    }
  }

  summary(seed: number, operations: number): Summary {
    const classes = [...this.classes.values()].sort((a, b) => b.count - a.count || (a.cls < b.cls ? -1 : 1));
    return {
      seed,
      operations,
      differingOps: this.differing + this.peerBugs,
      peerBugOps: this.peerBugs,
      textOnlyOps: this.textOnly,
      classes,
    };
  }
}

const clip = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n)}…` : s);

export function printSummary(s: Summary, examples: boolean): void {
  const line = (c: ClassTally): string => `${String(c.count).padStart(6)}  ${c.cls}`;
  console.log(
    `\nseed ${s.seed}: ${s.operations} operations, ${s.differingOps} differ (${s.peerBugOps} of them where real Placement is wrong), ${s.textOnlyOps} differ in an error's text only`,
  );
  const groups: Array<[string, ClassTally[]]> = [
    ['differences', s.classes.filter((c) => !c.textOnly && c.peerBug === undefined)],
    ['where real Placement is wrong (we are right)', s.classes.filter((c) => c.peerBug !== undefined && !c.textOnly)],
    ['error text only (status and code agree)', s.classes.filter((c) => c.textOnly)],
  ];
  for (const [title, list] of groups) {
    if (list.length === 0) continue;
    console.log(`\n${title}: ${list.length} class(es)`);
    for (const c of list) {
      console.log(line(c));
      if (!examples) continue;
      const { index, op } = c.example;
      console.log(
        `          #${index} ${op.method} ${op.path} [${op.version ?? 'no version'}]${op.body !== undefined ? ` ${clip(JSON.stringify(op.body), 300)}` : ''}`,
      );
      console.log(`          peer: ${clip(c.example.peer, 300)}`);
      console.log(`          ours: ${clip(c.example.ours, 300)}`);
    }
  }
}
