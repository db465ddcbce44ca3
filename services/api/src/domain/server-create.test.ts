import { ApiError } from './errors';
import { displayNames, parseCreateServer } from './server-create';

const V21 = { major: 2, minor: 1 };
const V237 = { major: 2, minor: 37 };
const IMAGE = '155d900f-4e14-4e4c-a73d-069cbf4541e6';
const server = (extra: Record<string, unknown> = {}): unknown => ({ server: { name: 'vm', imageRef: IMAGE, flavorRef: '1', ...extra } });

function messageOf(fn: () => unknown): string {
  try { fn(); } catch (e) { expect(e).toBeInstanceOf(ApiError); expect((e as ApiError).status).toBe(400); return (e as ApiError).message; }
  throw new Error('expected a 400');
}

describe('parseCreateServer', () => {
  it('takes refs as ids or URLs, counts as ints or digit strings, hints as strings or lists', () => {
    const input = parseCreateServer({
      server: { name: 'vm', imageRef: `http://glance/images/${IMAGE}`, flavorRef: 'http://nova/flavors/42', min_count: '2', max_count: 3 },
      'os:scheduler_hints': { group: IMAGE.toUpperCase(), same_host: ['a', 'b'] },
    }, V21);
    expect(input).toMatchObject({ imageRef: IMAGE, flavorRef: '42', minCount: 2, maxCount: 3, group: IMAGE, schedulerHints: { same_host: 'a,b' } });
    expect(parseCreateServer(server({ flavorRef: 7 }), V21).flavorRef).toBe('7');
    expect(parseCreateServer(server(), V21)).toMatchObject({ minCount: 1, maxCount: 1, networks: undefined, returnReservationId: false });
  });

  it.each([
    [{}, "'server' is a required property"],
    [server({ name: ' x' }), 'leading or trailing whitespace'],
    [server({ name: 5 }), "is not of type 'string'"],
    [server({ imageRef: 'abc' }), 'Invalid imageRef provided.'],
    [server({ max_count: 1.5 }), "is not of type 'integer'"],
    [server({ min_count: 2, max_count: 1 }), 'min_count must be <= max_count'],
    [server({ return_reservation_id: 'yes' }), "is not of type 'boolean'"],
    [server({ networks: [{ uuid: IMAGE }] }), 'no Neutron'],
    [{ ...(server() as object), 'os:scheduler_hints': { group: 'g1' } }, "is not a 'uuid'"],
    [{ ...(server() as object), 'os:scheduler_hints': { x: 1 } }, "is not of type 'string', 'array'"],
  ])('rejects %j', (body, message) => { expect(messageOf(() => parseCreateServer(body, V21))).toContain(message); });

  it('requires networks "none" or "auto" from 2.37 only', () => {
    expect(messageOf(() => parseCreateServer(server(), V237))).toContain("'networks' is a required property");
    expect(parseCreateServer(server({ networks: 'auto' }), V237).networks).toBe('auto');
    expect(messageOf(() => parseCreateServer(server({ networks: 'none' }), V21))).toContain("is not of type 'array'");
  });
});

it('names multi-create servers name-1..n', () => {
  expect(displayNames('web', 1)).toEqual(['web']);
  expect(displayNames('web', 3)).toEqual(['web-1', 'web-2', 'web-3']);
});
