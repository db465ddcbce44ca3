// Golden envelopes: fixed values whose encodings are committed in contract.test.ts.
import { Failure, BuildAndRunInstanceRequest, VmState } from '../src';

export const goldenFailure = (): Failure => ({
  code: 'scheduler.no_valid_host',
  message: 'No valid host was found.',
  retryable: false,
  expected: true,
  metadata: { request_id: 'req-1' },
  diagnosis: [{ filter: 'ComputeFilter', hostsBefore: 4, hostsAfter: 0, reason: 'service disabled or down' }],
});

export const goldenBuild = (): BuildAndRunInstanceRequest =>
  BuildAndRunInstanceRequest.fromPartial({
    instance: {
      uuid: '6e1bc7a5-3b8e-4b0e-9a55-0f2f8c1c0a01',
      projectId: 'p1',
      vmState: VmState.VM_STATE_BUILDING,
      host: 'host-1',
      launchIndex: 0,
    },
    hostList: [
      {
        computeNodeUuid: 'cn-1',
        serviceHost: 'host-1',
        nodename: 'host-1',
        cellUuid: 'cell-1',
        allocationRequest: { json: '{"allocations":{}}', version: '1.36' },
      },
      { computeNodeUuid: 'cn-2', serviceHost: 'host-2', nodename: 'host-2', cellUuid: 'cell-1' },
    ],
    attempt: 1,
    requestId: 'req-1',
  });
