import { FAILURE_CODES } from '@cellsched/wire';
import { withDisabledTrait, type InventoryRecord } from './inventory';

/** A REST error from placement, with Placement's error code (`placement.concurrent_update`, ...). */
export class PlacementRestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Placement did not answer at all (connection refused, reset, DNS, the per-request timeout):
 * `placement_client.placement.unreachable`, retryable. A wrong URL looks the same, so the message names it.
 */
export class PlacementUnreachableError extends Error {
  readonly code = FAILURE_CODES.placementClient.placementUnreachable;
  readonly retryable = true;
  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    const why =
      cause instanceof Error ? `${cause.message}${cause.cause instanceof Error ? ` (${cause.cause.message})` : ''}` : String(cause);
    super(`placement at ${url} is unreachable: ${why}`);
    this.name = 'PlacementUnreachableError';
  }
}

export interface ReportClientOptions {
  /** Placement's REST endpoint, e.g. `http://127.0.0.1:8778`. */
  readonly baseUrl: string;
  /** noauth2 token (default `admin`: providers are admin-only in Placement). */
  readonly token?: string;
  /** Attempts of a generation-guarded write before giving up (default 5). */
  readonly maxConflictRetries?: number;
  /** Per-request timeout (default 10 s). */
  readonly timeoutMs?: number;
}

const MICROVERSION = 'placement 1.39';

/** A resource provider as listed (the audit walks them). */
export interface ResourceProviderRef {
  readonly uuid: string;
  readonly name: string;
  readonly generation: number;
  readonly rootProviderUuid: string;
}

/** One consumer's allocations as placement shows them (1.38+): resources by provider uuid, and what a guarded rewrite needs. */
export interface ConsumerAllocationsView {
  readonly allocations: Readonly<Record<string, Readonly<Record<string, number>>>>;
  readonly projectId: string | undefined;
  readonly userId: string | undefined;
  /** Null or absent: the consumer does not exist (holds nothing). */
  readonly consumerGeneration: number | null | undefined;
  readonly consumerType: string | undefined;
}
type Json = Record<string, unknown>;

/**
 * The compute side of placement, like Nova's SchedulerReportClient: ensure the compute
 * node's resource provider (named after the hypervisor hostname, uuid = compute node uuid),
 * set its inventory and its traits. Every method is idempotent and converges: a
 * generation conflict (`placement.concurrent_update`, someone else wrote the provider)
 * refreshes the generation and retries, up to `maxConflictRetries`. Also the reads and the
 * guarded rewrite an allocation audit needs (Nova's report client serves nova-manage too).
 * Placement not answering at all is a {@link PlacementUnreachableError}.
 */
export class ReportClient {
  private readonly generations = new Map<string, number>();

  constructor(private readonly opts: ReportClientOptions) {}

  private async request(
    method: string,
    path: string,
    body?: unknown,
    microversion = MICROVERSION,
  ): Promise<{ status: number; json: Json }> {
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${this.opts.baseUrl}${path}`, {
        method,
        signal: AbortSignal.timeout(this.opts.timeoutMs ?? 10_000),
        headers: {
          'x-auth-token': this.opts.token ?? 'admin',
          'openstack-api-version': microversion,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      text = await res.text();
    } catch (err) {
      throw new PlacementUnreachableError(this.opts.baseUrl, err);
    }
    const json = text === '' ? {} : (JSON.parse(text) as Json);
    if (res.status >= 400) {
      const err = (json.errors as { code?: string; detail?: string }[] | undefined)?.[0];
      throw new PlacementRestError(
        res.status,
        err?.code ?? FAILURE_CODES.placement.undefinedCode,
        `${method} ${path}: ${res.status} ${err?.detail ?? text}`,
      );
    }
    return { status: res.status, json };
  }

  private async refreshGeneration(uuid: string): Promise<number> {
    const { json } = await this.request('GET', `/resource_providers/${uuid}`);
    const generation = json.generation as number;
    this.generations.set(uuid, generation);
    return generation;
  }

  /**
   * Makes sure the provider exists (GET, else POST with this name and uuid). A concurrent
   * creation of the same uuid is not an error. Returns its generation. A different provider
   * already holding the name is `placement.duplicate_name` (409), as in Nova.
   */
  async ensureResourceProvider(uuid: string, name: string): Promise<number> {
    try {
      return await this.refreshGeneration(uuid);
    } catch (err) {
      if (!(err instanceof PlacementRestError) || err.status !== 404) throw err;
    }
    try {
      const { json } = await this.request('POST', '/resource_providers', { uuid, name });
      this.generations.set(uuid, json.generation as number);
      return json.generation as number;
    } catch (err) {
      if (err instanceof PlacementRestError && err.status === 409 && err.code !== FAILURE_CODES.placement.duplicateName)
        return this.refreshGeneration(uuid);
      throw err;
    }
  }

  private async guardedWrite(uuid: string, write: (generation: number) => Promise<{ json: Json }>): Promise<void> {
    const attempts = this.opts.maxConflictRetries ?? 5;
    for (let i = 1; ; i++) {
      const generation = this.generations.get(uuid) ?? (await this.refreshGeneration(uuid));
      try {
        const { json } = await write(generation);
        this.generations.set(uuid, json.resource_provider_generation as number);
        return;
      } catch (err) {
        if (!(err instanceof PlacementRestError && err.code === FAILURE_CODES.placement.concurrentUpdate) || i >= attempts) throw err;
        await this.refreshGeneration(uuid);
      }
    }
  }

  /** Replaces the provider's whole inventory (PUT .../inventories). Idempotent. */
  async setInventory(uuid: string, inventories: Readonly<Record<string, InventoryRecord>>): Promise<void> {
    await this.guardedWrite(uuid, (g) =>
      this.request('PUT', `/resource_providers/${uuid}/inventories`, { resource_provider_generation: g, inventories }),
    );
  }

  /** The provider's traits. Read-only. */
  async getTraits(uuid: string): Promise<string[]> {
    const { json } = await this.request('GET', `/resource_providers/${uuid}/traits`);
    this.generations.set(uuid, json.resource_provider_generation as number);
    return json.traits as string[];
  }

  /** The provider's allocations by consumer uuid (GET .../allocations). Read-only; a missing provider is 404. */
  async providerAllocations(uuid: string): Promise<Record<string, Record<string, number>>> {
    const { json } = await this.request('GET', `/resource_providers/${uuid}/allocations`);
    const out: Record<string, Record<string, number>> = {};
    for (const [consumer, body] of Object.entries(json.allocations as Record<string, { resources: Record<string, number> }>))
      out[consumer] = body.resources;
    return out;
  }

  /** Resource providers (GET /resource_providers, or `?uuid=` for one: an empty list when it does not exist). Read-only. */
  async listResourceProviders(opts: { uuid?: string } = {}): Promise<ResourceProviderRef[]> {
    const query = opts.uuid === undefined ? '' : `?uuid=${encodeURIComponent(opts.uuid)}`;
    const { json } = await this.request('GET', `/resource_providers${query}`);
    return (json.resource_providers as { uuid: string; name: string; generation: number; root_provider_uuid: string }[]).map((p) => ({
      uuid: p.uuid,
      name: p.name,
      generation: p.generation,
      rootProviderUuid: p.root_provider_uuid,
    }));
  }

  /** A consumer's allocations (GET /allocations/{uuid}); `allocations` is empty when it holds nothing. Read-only. */
  async getConsumerAllocations(consumerUuid: string): Promise<ConsumerAllocationsView> {
    const { json } = await this.request('GET', `/allocations/${consumerUuid}`);
    const allocations: Record<string, Record<string, number>> = {};
    for (const [rp, a] of Object.entries(json.allocations as Record<string, { resources: Record<string, number> }>))
      allocations[rp] = a.resources;
    return {
      allocations,
      projectId: json.project_id as string | undefined,
      userId: json.user_id as string | undefined,
      consumerGeneration: json.consumer_generation as number | null | undefined,
      consumerType: json.consumer_type as string | undefined,
    };
  }

  /**
   * Rewrites a consumer's allocations as read in `seen` but without `providerUuid` (PUT
   * /allocations/{uuid}); with nothing left the consumer's allocations are deleted. Guarded
   * by the consumer generation read in `seen`: a consumer written since fails with
   * `placement.concurrent_update` (409) and is left as it is. Not retried.
   */
  async removeProviderFromConsumer(consumerUuid: string, seen: ConsumerAllocationsView, providerUuid: string): Promise<void> {
    const allocations: Record<string, { resources: Record<string, number> }> = {};
    for (const [rp, resources] of Object.entries(seen.allocations)) if (rp !== providerUuid) allocations[rp] = { resources };
    // NOTE: 1.28 (consumer generations, empty allocations allowed) and not 1.38+: the consumer keeps its type untouched
    await this.request(
      'PUT',
      `/allocations/${consumerUuid}`,
      { allocations, project_id: seen.projectId, user_id: seen.userId, consumer_generation: seen.consumerGeneration ?? null },
      'placement 1.28',
    );
  }

  /** The provider's placement aggregates (GET .../aggregates, 1.19+: with its generation). Read-only; a missing provider is 404. */
  async getProviderAggregates(uuid: string): Promise<string[]> {
    const { json } = await this.request('GET', `/resource_providers/${uuid}/aggregates`);
    this.generations.set(uuid, json.resource_provider_generation as number);
    return json.aggregates as string[];
  }

  /**
   * Adds `aggregateUuid` to the provider's aggregates, keeping the others (Nova's
   * `aggregate_add_host`). Read-modify-write guarded by the provider generation: a concurrent
   * writer (`placement.concurrent_update`) makes it read again and retry. Idempotent.
   */
  async addProviderAggregate(uuid: string, aggregateUuid: string): Promise<void> {
    await this.changeProviderAggregates(uuid, (current) => (current.includes(aggregateUuid) ? undefined : [...current, aggregateUuid]));
  }

  /** Removes `aggregateUuid` from the provider's aggregates (Nova's `aggregate_remove_host`). Same guard; idempotent. */
  async removeProviderAggregate(uuid: string, aggregateUuid: string): Promise<void> {
    await this.changeProviderAggregates(uuid, (current) =>
      current.includes(aggregateUuid) ? current.filter((a) => a !== aggregateUuid) : undefined,
    );
  }

  /** `change` answers the new list, or undefined when nothing is to be written. */
  private async changeProviderAggregates(uuid: string, change: (current: readonly string[]) => string[] | undefined): Promise<void> {
    await this.guardedWrite(uuid, async (g) => {
      const current = await this.getProviderAggregates(uuid);
      const next = change(current);
      const generation = this.generations.get(uuid) ?? g;
      if (next === undefined) return { json: { resource_provider_generation: generation } };
      return this.request('PUT', `/resource_providers/${uuid}/aggregates`, { resource_provider_generation: generation, aggregates: next });
    });
  }

  /** Replaces the provider's traits, creating CUSTOM_* traits first (PUT /traits/{name}). Idempotent. */
  async setTraits(uuid: string, traits: readonly string[]): Promise<void> {
    for (const t of traits) if (t.startsWith('CUSTOM_')) await this.request('PUT', `/traits/${t}`);
    await this.guardedWrite(uuid, (g) =>
      this.request('PUT', `/resource_providers/${uuid}/traits`, { resource_provider_generation: g, traits: [...traits] }),
    );
  }

  /**
   * Sets or clears COMPUTE_STATUS_DISABLED on the provider (Nova does this when the compute
   * service is disabled, so the scheduler's pre-filter forbids the trait). Keeps the other traits.
   */
  async setComputeStatusDisabled(uuid: string, disabled: boolean): Promise<void> {
    await this.guardedWrite(uuid, async (g) => {
      const traits = withDisabledTrait(await this.getTraits(uuid), disabled);
      return this.request('PUT', `/resource_providers/${uuid}/traits`, {
        resource_provider_generation: this.generations.get(uuid) ?? g,
        traits,
      });
    });
  }

  /**
   * Deletes the provider and its descendants, children first (Nova's `delete_resource_provider`),
   * and forgets their generations. `absent`: it was already gone. `in_use`: placement refused
   * because allocations are still on one of them (`placement.resource_provider.inuse`); what
   * could go went, nothing else changed, and the caller decides (allocations are never deleted
   * here: they belong to their consumers). Idempotent.
   */
  async deleteResourceProvider(uuid: string): Promise<'deleted' | 'absent' | 'in_use'> {
    let tree: { uuid: string; parent_provider_uuid: string | null }[];
    try {
      tree = (await this.request('GET', `/resource_providers?in_tree=${uuid}`)).json.resource_providers as typeof tree;
    } catch (err) {
      if (err instanceof PlacementRestError && err.status === 404) return 'absent';
      throw err;
    }
    if (tree.length === 0) return 'absent';
    const depth = (p: string | null, d = 0): number =>
      p === null || d > tree.length ? d : depth(tree.find((t) => t.uuid === p)?.parent_provider_uuid ?? null, d + 1);
    for (const rp of [...tree].sort((a, b) => depth(b.parent_provider_uuid) - depth(a.parent_provider_uuid))) {
      try {
        await this.request('DELETE', `/resource_providers/${rp.uuid}`);
      } catch (err) {
        if (err instanceof PlacementRestError && err.status === 404) continue;
        if (err instanceof PlacementRestError && err.code === FAILURE_CODES.placement.providerInUse) return 'in_use';
        throw err;
      }
      this.generations.delete(rp.uuid);
    }
    return 'deleted';
  }
}
