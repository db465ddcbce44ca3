import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RotatingFile, fileSet, rotatedFiles } from './rotating-file';

describe('RotatingFile', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cellsched-rotate-'));
    file = join(dir, 'spans.jsonl');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // exactly 100 bytes a line
  const line = (i: number) => {
    const head = JSON.stringify({ i, pad: '' });
    return `${JSON.stringify({ i, pad: 'x'.repeat(99 - head.length) })}\n`;
  };
  const numbers = (files: string[]) =>
    files.flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { i: number }).i),
    );

  it('rotates at the size and keeps at most `keep` files, the newest, in order', () => {
    let now = Date.UTC(2026, 10, 26, 4, 35, 0);
    const out = new RotatingFile(file, { maxBytes: 1000, keep: 3 }, () => now++);
    for (let i = 0; i < 55; i++) out.append(line(i));
    const rotated = rotatedFiles(file);
    expect(rotated).toHaveLength(2);
    expect(rotated.map((f) => f.slice(dir.length + 1))).toEqual([
      expect.stringMatching(/^spans\.20261126T043500003Z-\d+-\d{6}\.jsonl$/),
      expect.stringMatching(/^spans\.20261126T043500004Z-\d+-\d{6}\.jsonl$/),
    ]);
    // 10 lines per file: the oldest three files were pruned, nothing else lost or reordered
    expect(numbers(fileSet(file))).toEqual(Array.from({ length: 25 }, (_, k) => 30 + k));
    expect(readdirSync(dir)).toHaveLength(3);
  });

  it('never rotates with maxBytes 0', () => {
    const out = new RotatingFile(file, { maxBytes: 0, keep: 1 });
    for (let i = 0; i < 50; i++) out.append(line(i));
    expect(rotatedFiles(file)).toEqual([]);
    expect(numbers([file])).toHaveLength(50);
  });

  it('two writers on one file (two processes of the stack) lose nothing but what rotation prunes, within one millisecond too', () => {
    const a = new RotatingFile(file, { maxBytes: 500, keep: 100 }, () => 0);
    const b = new RotatingFile(file, { maxBytes: 500, keep: 100 }, () => 0);
    for (let i = 0; i < 60; i++) (i % 2 === 0 ? a : b).append(line(i));
    expect(numbers(fileSet(file))).toEqual(Array.from({ length: 60 }, (_, k) => k));
    expect(rotatedFiles(file)).toHaveLength(12);
  });

  it('lists only its own rotated files', () => {
    writeFileSync(join(dir, 'spans.jsonl'), '');
    writeFileSync(join(dir, 'other.20261126T043500003Z-1-000001.jsonl'), '');
    writeFileSync(join(dir, 'spans.backup.jsonl'), '');
    writeFileSync(join(dir, 'spans.20261126T043500003Z-1-000001.jsonl'), '');
    expect(rotatedFiles(file).map((f) => f.slice(dir.length + 1))).toEqual(['spans.20261126T043500003Z-1-000001.jsonl']);
    expect(rotatedFiles(join(dir, 'missing', 'spans.jsonl'))).toEqual([]);
  });
});
