/**
 * Renders rows as a PrettyTable-style box (what nova-manage prints), cells centred.
 * `null`/`undefined` print as `None` (Python's rendering). Pure.
 */
export function renderTable(headers: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const text = (v: unknown): string =>
    v === null || v === undefined ? 'None' : typeof v === 'boolean' ? (v ? 'True' : 'False') : String(v);
  const cells = rows.map((r) => headers.map((_, i) => text(r[i])));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const centre = (s: string, w: number): string => {
    const pad = w - s.length;
    // NOTE: Python's str.center (which PrettyTable uses): the odd space goes left when the width is odd too.
    const left = Math.floor(pad / 2) + (pad & w & 1);
    return ' '.repeat(left) + s + ' '.repeat(pad - left);
  };
  const line = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
  const row = (r: readonly string[]): string => `|${r.map((c, i) => ` ${centre(c, widths[i] ?? 0)} `).join('|')}|`;
  return [line, row(headers), line, ...cells.map(row), line].join('\n');
}

/**
 * Masks the password of a URL as nova-manage does (`user:****@host`); URLs without a
 * password (or not URLs at all) are returned unchanged. Pure.
 */
export function maskPassword(url: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/i.exec(url);
  if (m === null) return url;
  const [, scheme = '', netloc = '', rest = ''] = m;
  const at = netloc.lastIndexOf('@');
  const colon = netloc.indexOf(':');
  if (at === -1 || colon === -1 || colon > at) return url;
  return `${scheme}${netloc.slice(0, colon)}:****${netloc.slice(at)}${rest}`;
}
