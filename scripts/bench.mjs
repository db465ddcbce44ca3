#!/usr/bin/env node
// `pnpm bench NAME [args]`: builds what the benchmark runs, then runs e2e/bench/NAME/main.ts
// (with tsx) passing the arguments through. NAME: placement (scheduler and e2e when they exist).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const [name, ...args] = process.argv.slice(2);
const entry = name ? join(root, 'e2e/bench', name, 'main.ts') : '';
if (!name || !existsSync(entry)) {
  console.error(`usage: pnpm bench NAME [--out FILE.json] [...]; NAME: one of the folders of e2e/bench with a main.ts`);
  process.exit(2);
}
const bin = join(root, 'node_modules/.bin');
const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
const build = spawnSync('tsc', ['-b', 'services/placement', 'services/scheduler'], { cwd: root, env, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const r = spawnSync('tsx', [entry, ...args], { cwd: root, env, stdio: 'inherit' });
process.exit(r.status ?? 1);
