import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..', '..');
const MAIN = join(ROOT, 'services', 'manage', 'dist', 'main.js');

/** Builds cellsched-manage and the libraries it uses (a no-op when dist is fresh). */
export function buildManage(): void {
  execFileSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-b', join(ROOT, 'services', 'manage')], { stdio: 'inherit' });
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node services/manage/dist/main.js ...args` as a child process with exactly `env`
 * (nothing inherited, so an ambient CELLSCHED_API_DB_URL cannot leak in).
 */
export function manage(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { env, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}
