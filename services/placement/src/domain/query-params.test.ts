import { negotiate } from './microversion';
import { canonicalUuid, parseMemberOf, parseRequired, parseResources, type QueryParams } from './query-params';

const q = (pairs: Array<[string, string]>): QueryParams => {
  const m = new Map<string, string[]>();
  for (const [k, v] of pairs) m.set(k, [...(m.get(k) ?? []), v]);
  return m;
};
const A = 'f7f5c5a2-6e43-4c71-a0d9-0e1b2a8f2b11';
const B = '0a9b2f6e-3c5d-4e7f-8a1b-2c3d4e5f6a7b';

describe('query parameter parsing', () => {
  it('parses resources and rejects malformed amounts with Placement wording', () => {
    expect(parseResources('VCPU:2,MEMORY_MB:1024')).toEqual(
      new Map([
        ['VCPU', 2],
        ['MEMORY_MB', 1024],
      ]),
    );
    expect(() => parseResources('VCPU')).toThrow('Badly formed resources parameter');
    expect(() => parseResources('VCPU:x')).toThrow('Requested resource VCPU expected positive integer amount. Got: x.');
    expect(() => parseResources('VCPU:0')).toThrow('requires amount >= 1');
    expect(() => parseResources(' ')).toThrow('Got: empty string.');
  });
  it('parses required traits by microversion (! from 1.22, in: and repeats from 1.39)', () => {
    expect(() => parseRequired(q([['required', 'A,!B']]), negotiate('placement 1.21'))).toThrow(
      "Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC",
    );
    const f = parseRequired(q([['required', 'A,!B']]), negotiate('placement 1.22'));
    expect(f.anyOf).toEqual([new Set(['A'])]);
    expect(f.forbidden).toEqual(new Set(['B']));
    expect(() => parseRequired(q([['required', 'in:A,B']]), negotiate('placement 1.38'))).toThrow('only supported since microversion 1.39');
    const any = parseRequired(
      q([
        ['required', 'in:A,B'],
        ['required', 'C'],
      ]),
      negotiate('placement 1.39'),
    );
    expect(any.anyOf).toEqual([new Set(['A', 'B']), new Set(['C'])]);
    const lastOnly = parseRequired(
      q([
        ['required', 'A'],
        ['required', 'C'],
      ]),
      negotiate('placement 1.38'),
    );
    expect(lastOnly.anyOf).toEqual([new Set(['C'])]);
  });
  it('parses member_of (in: from 1.21, repeats from 1.24, ! from 1.32)', () => {
    expect(parseMemberOf(q([['member_of', `in:${A},${B}`]]), negotiate('placement 1.21')).anyOf).toEqual([new Set([A, B])]);
    expect(() =>
      parseMemberOf(
        q([
          ['member_of', A],
          ['member_of', B],
        ]),
        negotiate('placement 1.23'),
      ),
    ).toThrow('Multiple member_of parameters are not supported');
    expect(() => parseMemberOf(q([['member_of', `!${A}`]]), negotiate('placement 1.31'))).toThrow('Forbidden member_of parameters');
    expect(parseMemberOf(q([['member_of', `!in:${A},${B}`]]), negotiate('placement 1.32')).forbidden).toEqual(new Set([A, B]));
    expect(() => parseMemberOf(q([['member_of', `${A},${B}`]]), negotiate('placement 1.32'))).toThrow("must be prefixed with the 'in:'");
    expect(() => parseMemberOf(q([['member_of', 'nope']]), negotiate('placement 1.32'))).toThrow(
      "Expected 'member_of' parameter to contain valid UUID(s). Got: nope",
    );
  });
  it('canonicalizes uuids', () => {
    expect(canonicalUuid('F7F5C5A26E434C71A0D90E1B2A8F2B11')).toBe(A);
  });
});
