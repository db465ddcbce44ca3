/**
 * @cellsched/placement-client: placement for every service that calls it. The one typed gRPC
 * client of `PlacementService` (claims as outcomes, not exceptions; concurrent claims batched
 * into ClaimMany for the scheduler) and a REST report client like Nova's (provider, inventory,
 * traits with generation-conflict retries).
 */
export { PlacementClient, type PlacementClientOptions, type PlacementGrpc } from './placement-client';
export {
  claimOutcome,
  PLACEMENT_CAPACITY_EXCEEDED,
  PLACEMENT_CONCURRENT_UPDATE,
  PLACEMENT_GROUP_POLICY,
  type ClaimOutcome,
} from './claim-outcome';
export {
  ClaimBatcher,
  DEFAULT_CLAIM_CALLS_IN_FLIGHT,
  DEFAULT_CLAIMS_PER_CALL,
  type ClaimBatcherOptions,
  type ClaimTransport,
  type SettledClaim,
} from './claim-batcher';
export {
  ReportClient,
  PlacementRestError,
  PlacementUnreachableError,
  type ConsumerAllocationsView,
  type ReportClientOptions,
  type ResourceProviderRef,
} from './report-client';
export { computeNodeInventory, withDisabledTrait, COMPUTE_STATUS_DISABLED, type ComputeResources, type InventoryRecord } from './inventory';
export { parseAllocationRequest, instanceConsumer, AllocationRequestError } from './allocation-request';
