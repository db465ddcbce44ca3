/**
 * Generated wire types and gRPC service definitions (`proto/` is the source of truth;
 * regenerate with `pnpm gen`; CI fails when this output is stale), plus the hand-written wire
 * constants: cast services' RPC versions and the registry of published failure codes.
 */
export * from './gen/cellsched/v1/options';
export * from './gen/cellsched/v1/failure';
export * from './gen/cellsched/v1/compute';
export * from './gen/cellsched/v1/scheduler';
export * from './gen/cellsched/v1/placement';
export * from './gen/cellsched/v1/casts';
export * from './gen/cellsched/v1/test_echo';
export * from './rpc-versions';
export * from './failure-codes';
