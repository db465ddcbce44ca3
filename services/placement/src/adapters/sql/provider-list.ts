import { badRequest } from '../../domain/errors';
import type { MemberOfFilter, TraitFilter } from '../../domain/query-params';
import { rows, type Db } from './db';
import { selectProviders, type ResourceProvider } from './resource-providers';

/** Filters of GET /resource_providers (already parsed and validated). */
export interface ProviderFilters {
  readonly name?: string;
  readonly uuid?: string;
  readonly inTree?: string;
  readonly memberOf?: MemberOfFilter;
  readonly required?: TraitFilter;
  readonly resources?: ReadonlyMap<string, number>;
}

/** Capacity clause of Placement: room for `amount` and the amount is a legal unit. */
const CAPACITY = (rc: string, amount: string) => `EXISTS (SELECT 1 FROM inventories inv
  WHERE inv.resource_provider_id = rp.id AND inv.resource_class_id = ${rc}
    AND COALESCE((SELECT sum(a.used) FROM allocations a WHERE a.resource_provider_id = rp.id AND a.resource_class_id = ${rc}), 0) + ${amount}
        <= (inv.total - inv.reserved) * inv.allocation_ratio
    AND inv.min_unit <= ${amount} AND inv.max_unit >= ${amount} AND ${amount} % inv.step_size = 0)`;

/**
 * Providers matching every filter, ordered by id. Unknown traits or resource classes in
 * the filters answer 400 with Placement's messages; as in Placement's
 * _get_all_by_filters_from_db, an in_tree provider that does not exist, required traits no
 * provider has or aggregates no provider is in answer an empty list at once, before the
 * later filters are looked at (so before an unknown resource class is noticed).
 */
export async function listProviders(db: Db, f: ProviderFilters): Promise<ResourceProvider[]> {
  const where: string[] = [];
  const values: unknown[] = [];
  const p = (v: unknown): string => {
    values.push(v);
    return `$${values.length}`;
  };
  // NOTE: Placement compares uuid and in_tree as strings: a braced, undashed or upper-case one names no provider.
  if ([f.uuid, f.inTree].some((u) => u !== undefined && !STORED_UUID.test(u))) return [];
  if (f.name !== undefined) where.push(`rp.name = ${p(f.name)}`);
  if (f.uuid !== undefined) where.push(`rp.uuid = ${p(f.uuid)}`);
  if (f.inTree !== undefined) {
    const inTree = f.inTree;
    if (await noProvider(db, (q) => [`rp.uuid = ${q(inTree)}`])) return [];
    where.push(`rp.root_provider_id = (SELECT root_provider_id FROM resource_providers WHERE uuid = ${p(inTree)})`);
  }
  if (f.required && !(await traitClauses(db, f.required, where, p))) return [];
  const anyOf = f.memberOf?.anyOf ?? [];
  if (anyOf.length > 0 && (await noProvider(db, (q) => anyOf.map((set) => inAggregates(set, q))))) return [];
  where.push(...anyOf.map((set) => inAggregates(set, p)));
  if (f.memberOf && f.memberOf.forbidden.size > 0) where.push(`NOT ${inAggregates(f.memberOf.forbidden, p)}`);
  if (f.resources) {
    const ids = await classIds(db, [...f.resources.keys()]);
    for (const [rc, amount] of f.resources) where.push(CAPACITY(p(ids.get(rc)), p(amount)));
  }
  return selectProviders(db, `${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY rp.id`, values);
}

type Param = (v: unknown) => string;

/** A uuid as providers' uuids are stored (and compared by Placement): lower-case, dashed. */
const STORED_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const inAggregates = (set: ReadonlySet<string>, p: Param): string => `EXISTS (SELECT 1 FROM resource_provider_aggregates rpa
    JOIN placement_aggregates ag ON ag.id = rpa.aggregate_id WHERE rpa.resource_provider_id = rp.id AND ag.uuid::text = ANY(${p([...set])}::text[]))`;

const hasTraits = (
  set: ReadonlySet<string>,
  p: Param,
): string => `EXISTS (SELECT 1 FROM resource_provider_traits rpt JOIN traits t ON t.id = rpt.trait_id
    WHERE rpt.resource_provider_id = rp.id AND t.name = ANY(${p([...set])}::text[]))`;

/** True when no provider at all matches the clauses `build` makes (with its own parameters). */
async function noProvider(db: Db, build: (p: Param) => string[]): Promise<boolean> {
  const values: unknown[] = [];
  const clauses = build((v) => {
    values.push(v);
    return `$${values.length}`;
  });
  return (await rows(db, `SELECT 1 FROM resource_providers rp WHERE ${clauses.join(' AND ')} LIMIT 1`, values)).length === 0;
}

async function classIds(db: Db, names: string[]): Promise<Map<string, number>> {
  const found = await rows<{ id: number; name: string }>(db, 'SELECT id, name FROM resource_classes WHERE name = ANY($1::text[])', [names]);
  const map = new Map(found.map((r) => [r.name, r.id]));
  const missing = names.find((n) => !map.has(n));
  if (missing !== undefined) throw badRequest(`Invalid resource class in resources parameter: No such resource class ${missing}.`);
  return map;
}

/**
 * Adds the trait clauses; false (the list is empty) when no provider at all has the required
 * traits. 400 for an unknown trait: the required ones are looked up first, the forbidden after.
 */
async function traitClauses(db: Db, f: TraitFilter, where: string[], p: Param): Promise<boolean> {
  await checkTraits(
    db,
    f.anyOf.flatMap((s) => [...s]),
  );
  if (f.anyOf.length > 0 && (await noProvider(db, (q) => f.anyOf.map((set) => hasTraits(set, q))))) return false;
  where.push(...f.anyOf.map((set) => hasTraits(set, p)));
  await checkTraits(db, [...f.forbidden]);
  if (f.forbidden.size > 0) where.push(`NOT ${hasTraits(f.forbidden, p)}`);
  return true;
}

async function checkTraits(db: Db, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  const found = await rows<{ name: string }>(db, 'SELECT name FROM traits WHERE name = ANY($1::text[])', [[...names]]);
  const known = new Set(found.map((r) => r.name));
  const missing = [...new Set(names)].filter((t) => !known.has(t));
  if (missing.length > 0) throw badRequest(`Invalid trait(s) in "required" parameter: No such trait(s): ${missing.join(', ')}.`);
}
