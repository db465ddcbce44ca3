import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { rotatedFiles } from '../rotating-file';
import { type TailSpan, spansFromRequest } from './otlp-json';

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function readRange(file: string, from: number, to: number): string {
  if (to <= from) return '';
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(to - from);
  try {
    readSync(fd, buf, 0, buf.length, from);
  } finally {
    closeSync(fd);
  }
  return buf.toString('utf8');
}

function parseLine(line: string): TailSpan[] {
  if (!line.trim()) return [];
  try {
    return spansFromRequest(JSON.parse(line));
  } catch {
    return [];
  }
}

/**
 * Reads OTLP JSON lines appended to `file` (from the start of its rotated files, or only new
 * ones with `fromEnd`), polling every `everyMs`. When the file shrinks it was rotated: the
 * rest of the newest rotated file is read first, then the new file from its start. Returns a
 * stop function. With `once`, reads what is there, calls `onSpans` and returns at once.
 */
export function tailFile(
  file: string,
  opts: { fromEnd: boolean; once: boolean; everyMs: number },
  onSpans: (spans: TailSpan[]) => void,
): () => void {
  let offset = opts.fromEnd ? sizeOf(file) : 0;
  let partial = '';
  const emit = (text: string) => {
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) onSpans(parseLine(line));
  };
  if (!opts.fromEnd) for (const old of rotatedFiles(file)) emit(`${readRange(old, 0, sizeOf(old))}\n`);
  const readNew = () => {
    const size = sizeOf(file);
    if (size < offset) {
      const previous = rotatedFiles(file).at(-1);
      if (previous !== undefined) emit(readRange(previous, offset, sizeOf(previous)));
      offset = 0;
      partial = '';
    }
    if (size === offset) return;
    emit(readRange(file, offset, size));
    offset = size;
  };
  readNew();
  if (opts.once) return () => undefined;
  const timer = setInterval(readNew, opts.everyMs);
  return () => clearInterval(timer);
}
