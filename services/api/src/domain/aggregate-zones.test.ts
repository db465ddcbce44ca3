import { invalidAggregateAction, zoneMoveRefusal, zoneRefusal, type ZonedAggregate } from './aggregate-zones';

const agg = (id: number, hosts: string[], zone?: string): ZonedAggregate => ({
  id,
  name: `agg${id}`,
  hosts,
  metadata: zone === undefined ? {} : { availability_zone: zone },
});
const A = agg(1, ['h1'], 'az1');
const B = agg(2, ['h2'], 'az2');
const PLAIN = agg(3, ['h1', 'h3']);

describe("Nova's is_safe_to_update_az", () => {
  it.each([
    ['az1 for h1 in A', 'az1', A, { hosts: ['h1'] }, undefined],
    ['az2 for h1 while A holds it in az1', 'az2', B, { hosts: ['h1'] }, "One or more hosts already in availability zone(s) ['az1']"],
    ['a new zone for PLAIN (h1 in az1)', 'az9', PLAIN, {}, "One or more hosts already in availability zone(s) ['az1']"],
    ['an empty zone', '', A, {}, 'Aggregate agg1 does not support empty named availability zone'],
    ['no zone', null, A, {}, 'Aggregate agg1 does not support empty named availability zone'],
  ] as const)('%s', async (_, zone, aggregate, opts, want) => {
    expect(await zoneRefusal(zone, aggregate, [A, B, PLAIN], opts)).toBe(want);
  });

  it('counts instances only when the zone changes and asked to', async () => {
    const busy = async (): Promise<number> => 1;
    expect(await zoneRefusal('az1', A, [A], { checkInstances: true, instancesOnHosts: busy })).toBeUndefined();
    expect(await zoneRefusal('az5', A, [A], { checkInstances: true, instancesOnHosts: busy })).toBe(
      'One or more hosts contain instances in this zone',
    );
    expect(await zoneRefusal('az5', A, [A], { instancesOnHosts: busy })).toBeUndefined();
  });

  it("words the refusal as Nova's InvalidAggregateAction*", () => {
    expect(invalidAggregateAction('update_metadata', 4, 'why')).toBe('Cannot update metadata of aggregate 4. Reason: why.');
    expect(invalidAggregateAction('remove', 4, 'Host aggregate is not empty')).toBe(
      'Cannot remove host from aggregate 4. Reason: Host aggregate is not empty.',
    );
  });
});

describe('instances never change zone through membership', () => {
  it.each([
    ['add to a zone, no instances', 'add', A, [], 0, false],
    ['add to a zone, instances, no zone before', 'add', A, [], 2, true],
    ['add to the zone it is in already', 'add', A, [agg(9, ['h1'], 'az1')], 2, false],
    ['add to a zoneless aggregate', 'add', PLAIN, [A], 2, false],
    ['remove from its only zone', 'remove', A, [A], 1, true],
    ['remove while another aggregate keeps the zone', 'remove', A, [A, agg(9, ['h1'], 'az1')], 1, false],
  ] as const)('%s', (_, change, aggregate, hostAggregates, instances, refused) => {
    expect(zoneMoveRefusal(change, aggregate, hostAggregates, instances) !== undefined).toBe(refused);
  });

  it("says from which zone to which, as Nova ('None' for none)", () => {
    expect(zoneMoveRefusal('add', A, [], 3)).toMatch(
      /^The host cannot be added to the aggregate as the availability zone of the host would change from 'None' to 'az1' but the host already has 3 instance\(s\)\./,
    );
  });
});
