import { appendFileSync, existsSync, mkdirSync, readdirSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';

/** Size-based rotation: the active file plus rotated ones, at most `keep` files of about `maxBytes` each. */
export interface RotationOptions {
  /** Rotate once the active file reaches this size. 0: never rotate (unbounded). */
  readonly maxBytes: number;
  /** Files kept in all, the active one included (>= 1). */
  readonly keep: number;
}

export const DEFAULT_ROTATION: RotationOptions = { maxBytes: 64 * 1024 * 1024, keep: 4 };

function parts(file: string): { dir: string; stem: string; ext: string } {
  const ext = extname(file);
  return { dir: dirname(file), stem: basename(file, ext), ext };
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The rotated files of `file` (`spans.jsonl` → `spans.20261126T043512345Z-4242-000001.jsonl`), oldest first. */
export function rotatedFiles(file: string): string[] {
  const { dir, stem, ext } = parts(file);
  const pattern = new RegExp(`^${escape(stem)}\\.\\d{8}T\\d{9}Z-\\d+-\\d{6}${escape(ext)}$`);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => pattern.test(n))
    .sort()
    .map((n) => join(dir, n));
}

/** Every file of a span file's set, oldest first: the rotated ones, then the active one (if there is one now). */
export function fileSet(file: string): string[] {
  return existsSync(file) ? [...rotatedFiles(file), file] : rotatedFiles(file);
}

// NOTE: time first so names sort oldest first; pid and a sequence so no two rotations, of
// two processes or of one within a millisecond, pick the same name.
let sequence = 0;
function rotatedName(nowMs: number): string {
  sequence = (sequence + 1) % 1_000_000;
  return `${new Date(nowMs).toISOString().replace(/[-:.]/g, '')}-${process.pid}-${String(sequence).padStart(6, '0')}`;
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/**
 * Appends to a file and rotates it by size. Safe with several writer processes (the stack's
 * services share one span file): each append opens the path, so after a rotation every writer
 * goes on in the new file; a rotated name is unique (time and pid), so two writers rotating at
 * once never overwrite each other's; pruning ignores files another writer already removed.
 */
export class RotatingFile {
  constructor(
    readonly file: string,
    private readonly rotation: RotationOptions = DEFAULT_ROTATION,
    private readonly now: () => number = Date.now,
  ) {
    mkdirSync(dirname(file), { recursive: true });
  }

  /** Appends `data` (one write), then rotates if the file reached its size. */
  append(data: Buffer | string): void {
    appendFileSync(this.file, data);
    if (this.rotation.maxBytes > 0 && sizeOf(this.file) >= this.rotation.maxBytes) this.rotate();
  }

  private rotate(): void {
    const { dir, stem, ext } = parts(this.file);
    try {
      renameSync(this.file, join(dir, `${stem}.${rotatedName(this.now())}${ext}`));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // another writer rotated it first
    }
    const rotated = rotatedFiles(this.file);
    for (const old of rotated.slice(0, Math.max(0, rotated.length - (this.rotation.keep - 1)))) {
      try {
        unlinkSync(old);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
  }
}
