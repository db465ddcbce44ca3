/**
 * @cellsched/placement-client: placement for the conductors and computes. A typed gRPC
 * client of `PlacementService` (claims as outcomes, not exceptions) and a REST report
 * client like Nova's (provider, inventory, traits with generation-conflict retries).
 */
export { PlacementClient, PLACEMENT_CAPACITY_EXCEEDED, PLACEMENT_CONCURRENT_UPDATE, PLACEMENT_GROUP_POLICY, type ClaimOutcome, type PlacementClientOptions } from './placement-client';
export { ReportClient, PlacementRestError, PlacementUnreachableError, type ConsumerAllocationsView, type ReportClientOptions, type ResourceProviderRef } from './report-client';
export { computeNodeInventory, withDisabledTrait, COMPUTE_STATUS_DISABLED, type ComputeResources, type InventoryRecord } from './inventory';
export { parseAllocationRequest, instanceConsumer, AllocationRequestError } from './allocation-request';
