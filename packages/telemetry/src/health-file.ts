import { defineConfig } from '@cellsched/config';
import { rmSync, writeFileSync } from 'node:fs';

/** The health-file option of every bus consumer (spread into its schema), for {@link keepHealthFile}. */
export const healthFileConfigSchema = defineConfig({
  healthFile: {
    type: 'string',
    env: 'CELLSCHED_HEALTH_FILE',
    help: 'A file kept fresh (rewritten every 5 s) while the bus is connected, for container health checks (unset: none).',
  },
});

/**
 * Keeps `file` fresh while `healthy()` holds: it is rewritten every `everyMs`, so its age says
 * whether the process is alive and connected. For processes with no port to probe (the bus
 * consumers) under docker compose, whose health check tests the file's age. Off without a file.
 * Returns a stop function that removes the file.
 */
export function keepHealthFile(file: string | undefined, healthy: () => boolean, everyMs = 5000): () => void {
  if (file === undefined || file === '') return () => undefined;
  const touch = (): void => {
    if (!healthy()) return;
    try {
      writeFileSync(file, `${new Date().toISOString()}\n`);
    } catch {
      /* an unwritable file only makes the process look unhealthy, as it should */
    }
  };
  touch();
  const timer = setInterval(touch, everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    rmSync(file, { force: true });
  };
}
