/**
 * Types of the allocation-candidates search (GET /allocation_candidates and the gRPC
 * GetAllocationCandidates): the parsed request, the read-only snapshot of providers the
 * search runs over, and its result. Pure data, no I/O.
 */
import type { InventoryRecord } from '../capacity';

/** One (suffixed or unsuffixed) request group, as Placement's `lib.RequestGroup`. */
export interface RequestGroup {
  /** "" for the unsuffixed group, else the suffix ("1", "_NET", ...). */
  readonly suffix: string;
  /** True for suffixed groups: all resources and traits from one provider. */
  readonly useSameProvider: boolean;
  /** Resource class name -> amount, in query order. */
  readonly resources: ReadonlyMap<string, number>;
  /** AND of ORs: each inner list is "any of these traits". */
  readonly requiredTraits: readonly (readonly string[])[];
  readonly forbiddenTraits: readonly string[];
  /** AND of ORs of aggregate uuids. */
  readonly memberOf: readonly (readonly string[])[];
  readonly forbiddenAggregates: readonly string[];
  /** Provider uuid whose tree the group must come from, or null. */
  readonly inTree: string | null;
}

/** Request-wide parameters, as Placement's `lib.RequestWideParams`. */
export interface RequestWideParams {
  /** 0 or null: no limit. */
  readonly limit: number | null;
  readonly groupPolicy: 'none' | 'isolate' | null;
  readonly rootRequired: readonly string[];
  readonly rootForbidden: readonly string[];
  /** Each entry: the suffixes of one `same_subtree` parameter. */
  readonly sameSubtrees: readonly (readonly string[])[];
  /** True at microversion >= 1.29: several providers of one tree may serve a group. */
  readonly nestedAware: boolean;
}

/** One inventory of a provider with the amount already allocated against it. */
export interface InventoryUsage extends InventoryRecord {
  readonly used: number;
}

/** A provider as the search sees it: ids are the database's internal ids. */
export interface ProviderNode {
  readonly id: number;
  readonly uuid: string;
  readonly name: string;
  readonly generation: number;
  readonly parentId: number | null;
  readonly rootId: number;
  /** Trait ids. */
  readonly traits: ReadonlySet<number>;
  /** Aggregate ids. */
  readonly aggregates: ReadonlySet<number>;
  /** Resource class id -> inventory and usage. */
  readonly inventories: ReadonlyMap<number, InventoryUsage>;
}

/**
 * A consistent, read-only view of every provider (one database snapshot). The search
 * never mutates it, so one snapshot may serve concurrent searches. Successive snapshots
 * share unchanged node objects, and the six name maps (replaced all together when any
 * name changes; `resourceClassNameById` identifies them), so memos keyed by node and name
 * maps stay valid across snapshots. A node's uuid, parentId and rootId, and the uuids of
 * that parent and root, are fixed for the node object's life: a change replaces the node.
 */
export interface CandidateSnapshot {
  readonly providers: ReadonlyMap<number, ProviderNode>;
  readonly providerIdByUuid: ReadonlyMap<string, number>;
  readonly resourceClassIdByName: ReadonlyMap<string, number>;
  readonly resourceClassNameById: ReadonlyMap<number, string>;
  readonly traitIdByName: ReadonlyMap<string, number>;
  readonly traitNameById: ReadonlyMap<number, string>;
  readonly aggregateIdByUuid: ReadonlyMap<string, number>;
  readonly aggregateUuidById: ReadonlyMap<number, string>;
  /** True when at least one provider has a parent (Placement's `has_trees`). */
  readonly hasTrees: boolean;
  /** How many providers have a parent (kept up to date incrementally). */
  readonly treeNodes: number;
  /** What is derived from this snapshot, kept with it (snapshot-index.ts fills it on first use): `{}` when made. */
  readonly memo: SnapshotMemo;
}

/**
 * What is derived from one snapshot and lives as long as it: its search indexes, built lazily,
 * and the snapshot it was derived from (with the providers that differ), whose indexes the new
 * ones are patched from. Why on the snapshot, not in a module-level map: the cache is the
 * snapshot's own, passed wherever the snapshot is.
 */
export interface SnapshotMemo {
  derivedFrom?: { readonly prev: CandidateSnapshot; readonly changed: readonly number[] };
  indexes?: SnapshotIndexes;
}

/**
 * The providers with an inventory of one class, columns in id order (nodes are looked up
 * by id: a successor shares every column its changes leave equal).
 */
export interface ClassIndex {
  readonly ids: Int32Array;
  readonly rootIds: Int32Array;
  readonly used: Float64Array;
  /** `(total - reserved) * allocation_ratio`, as the capacity rule computes it. */
  readonly capacity: Float64Array;
  readonly minUnit: Float64Array;
  readonly maxUnit: Float64Array;
  readonly stepSize: Float64Array;
}

/** A snapshot's search indexes, per resource class, trait and aggregate id. */
export interface SnapshotIndexes {
  readonly classes: Map<number, ClassIndex>;
  readonly traits: Map<number, readonly number[]>;
  readonly aggregates: Map<number, readonly number[]>;
  /** Key 0: providers whose root is another provider. */
  readonly rooted: Map<number, readonly number[]>;
}

/** One resource class amount taken from one provider. */
export interface ResourceRequest {
  readonly providerId: number;
  readonly resourceClassId: number;
  amount: number;
}

/** One allocation request: what a PUT /allocations body would claim. */
export interface AllocationRequest {
  /** Root of the (non-sharing) tree this request is anchored to. */
  readonly anchorRootId: number;
  readonly useSameProvider: boolean;
  readonly resources: readonly ResourceRequest[];
  /** Suffix -> provider ids that satisfied that group. */
  readonly mappings: ReadonlyMap<string, ReadonlySet<number>>;
}

/** The search result: allocation requests and the ids of the providers to summarize. */
export interface CandidateResult {
  readonly allocationRequests: readonly AllocationRequest[];
  /** Provider ids whose summaries are part of the answer. */
  readonly summaryProviderIds: readonly number[];
}
