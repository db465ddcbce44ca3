// The one way the jest e2e files run the OpenStack-client scripts (e2e/clients, e2e/moves):
// bash, the script's output as the result, and on failure an error holding all of it.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const E2E = join(__dirname, '..');

/**
 * Runs `e2e/<script>` with `args` (the endpoints it takes) within `timeoutMs`; resolves its
 * stdout. Throws when it exits non-zero or runs out of time, with its stdout and stderr.
 */
export function runClientScript(script: string, args: readonly string[], timeoutMs: number): string {
  try {
    return execFileSync('bash', [join(E2E, script), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    throw new Error(`${script} failed:\n${err.stdout ?? ''}\n${err.stderr ?? ''}`);
  }
}
