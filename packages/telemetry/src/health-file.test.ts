import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keepHealthFile } from './health-file';

const dir = mkdtempSync(join(tmpdir(), 'health-file-'));

test('the file is written while healthy, left to age while not, and removed on stop', async () => {
  const file = join(dir, 'a');
  let healthy = true;
  const stop = keepHealthFile(file, () => healthy, 20);
  expect(readFileSync(file, 'utf8')).toMatch(/^\d{4}-\d\d-\d\dT/);
  await new Promise((r) => setTimeout(r, 60));
  healthy = false;
  const frozen = statSync(file).mtimeMs;
  await new Promise((r) => setTimeout(r, 80));
  expect(statSync(file).mtimeMs).toBe(frozen);
  healthy = true;
  await new Promise((r) => setTimeout(r, 80));
  expect(statSync(file).mtimeMs).toBeGreaterThan(frozen);
  stop();
  expect(existsSync(file)).toBe(false);
});

test('an unhealthy start writes nothing; no file configured is a no-op', () => {
  const file = join(dir, 'b');
  const stop = keepHealthFile(file, () => false, 20);
  expect(existsSync(file)).toBe(false);
  stop();
  expect(() => keepHealthFile(undefined, () => true)()).not.toThrow();
});
