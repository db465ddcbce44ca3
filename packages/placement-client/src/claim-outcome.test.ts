import { FAILURE_CODES, makeFailure, type Failure } from '@cellsched/wire';
import { claimOutcome, type ClaimOutcome } from './claim-outcome';

const full = makeFailure(FAILURE_CODES.placement.capacityExceeded, 'VCPU does not fit', {
  metadata: { resource_class: 'VCPU', resource_provider_uuid: 'rp1' },
});

test.each<[string, Failure | undefined, ClaimOutcome | undefined]>([
  ['no failure: claimed, with the consumer generation', undefined, { kind: 'claimed', consumerGeneration: 7 }],
  [
    'a lost generation race: conflict',
    makeFailure(FAILURE_CODES.placement.concurrentUpdate, 'moved'),
    { kind: 'conflict', message: 'moved' },
  ],
  [
    'no room: no_capacity with the class and provider',
    full,
    { kind: 'no_capacity', message: 'VCPU does not fit', resourceClass: 'VCPU', providerUuid: 'rp1' },
  ],
  [
    'the server group forbids that host: group_policy with the group and the node',
    makeFailure(FAILURE_CODES.placement.claimGroupPolicy, 'another member is there', {
      metadata: { group_uuid: 'g1', resource_provider_uuid: 'rp2' },
    }),
    { kind: 'group_policy', message: 'another member is there', groupUuid: 'g1', providerUuid: 'rp2' },
  ],
  ['anything else is not an outcome (the caller throws it)', makeFailure(FAILURE_CODES.placement.providerNotFound, 'gone'), undefined],
  ['a transport failure neither', makeFailure(FAILURE_CODES.grpc.unavailable, 'down', { retryable: true }), undefined],
])('claimOutcome: %s', (_name, failure, expected) => {
  expect(claimOutcome(failure, 7)).toEqual(expected);
});
