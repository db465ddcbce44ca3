#!/usr/bin/env node
// `pnpm chaos [...]`: the e2e chaos suite (e2e/chaos/main.ts, run with tsx). See e2e/chaos/README.md.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const child = spawn(
  join(root, 'node_modules/.bin/tsx'),
  [join(root, 'e2e/chaos/main.ts'), ...process.argv.slice(2).filter((a) => a !== '--')],
  { cwd: root, stdio: 'inherit' },
);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
