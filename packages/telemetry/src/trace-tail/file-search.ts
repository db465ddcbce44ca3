import { readFileSync } from 'node:fs';
import { fileSet } from '../rotating-file';
import { spanMentions } from './format';
import { byStart, type FoundTrace } from './found-trace';
import { type TailSpan, spansFromRequest } from './otlp-json';

const TRACE_ID = /"traceId":"([0-9a-f]{32})"/g;

function linesOf(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n');
  } catch {
    return []; // rotated away meanwhile
  }
}

function spansOf(line: string): TailSpan[] {
  try {
    return spansFromRequest(JSON.parse(line));
  } catch {
    return [];
  }
}

/**
 * The whole traces, in a span file and its rotated files, where some span mentions `text` (a
 * server uuid, a host, a request id): the last `limit`, oldest first. Two passes over the
 * lines, parsing only those that hold the text, then those that hold a found trace id, so
 * hundreds of MB of spans are searched without holding them.
 */
export function searchSpanFiles(file: string, text: string, limit: number): FoundTrace[] {
  const files = fileSet(file);
  const needle = JSON.stringify(text).slice(1, -1); // as it appears inside the JSON text
  const ids = new Set<string>();
  for (const f of files) {
    for (const line of linesOf(f)) {
      if (line.includes(needle)) for (const s of spansOf(line)) if (spanMentions(s, text)) ids.add(s.traceId);
    }
  }
  const found = new Map<string, TailSpan[]>([...ids].map((id) => [id, []]));
  for (const f of files) {
    for (const line of linesOf(f)) {
      if (![...line.matchAll(TRACE_ID)].some((m) => ids.has(m[1] ?? ''))) continue;
      for (const s of spansOf(line)) found.get(s.traceId)?.push(s);
    }
  }
  return byStart([...found].map(([traceId, spans]) => ({ traceId, spans }))).slice(-limit);
}
