const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;

/**
 * Parses a duration such as `"30s"`, `"250ms"`, `"1h30m"` or `"0"` into milliseconds
 * (rounded to an integer). Returns `undefined` for anything else: a bare number other
 * than 0 is refused because its unit would be a guess.
 */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (t === '0') return 0;
  if (!WHOLE.test(t)) return undefined;
  let ms = 0;
  for (const m of t.matchAll(PART)) ms += Number(m[1]) * (UNIT_MS[m[2] ?? ''] ?? NaN);
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/** Formats milliseconds the way `parseDuration` reads them (`90000` -> `"1m30s"`). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0';
  let rest = ms;
  let out = '';
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
    ['ms', 1],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      out += `${n}${unit}`;
      rest -= n * size;
    }
  }
  return out;
}
