// Builds for `pnpm stack`: `tsc -b` of the services' folders, each at most once per command.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A build function for rows `{ build: DIR, main: FILE }` under `root`. With `noBuild`, nothing
 * is built while every row's `main` exists.
 * NOTE: tsc -b still emits when another engineer's file has a type error; start from dist
 * then, with a warning, rather than refuse to start the whole service.
 */
export function builder(root, noBuild) {
  const built = new Set();
  return function build(rows) {
    if (noBuild && rows.every((s) => existsSync(join(root, s.main)))) return;
    const dirs = [...new Set(rows.map((s) => s.build))].filter((d) => !built.has(d));
    if (dirs.length === 0) return;
    try {
      execFileSync('pnpm', ['exec', 'tsc', '-b', ...dirs], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      const missing = rows.filter((s) => !existsSync(join(root, s.main)));
      if (missing.length) throw new Error(`build of ${dirs.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
      console.warn(`build reported errors, starting the last emitted dist:\n${String(e.stdout ?? '').slice(0, 2000)}`);
    }
    dirs.forEach((d) => built.add(d));
  };
}
