import { MAX_RETRIES, NO_VALID_HOST, serverViews } from '../checks';
import type { ChaosContext, Scenario } from '../scenario';

interface GroupPlan {
  name: string;
  policy: string;
  maxServerPerHost?: number;
  members: number;
}

/** POST /os-server-groups at 2.64 (`policy` + `rules`); the group's id. */
async function createGroup(ctx: ChaosContext, g: GroupPlan): Promise<string> {
  const rules = g.maxServerPerHost === undefined ? {} : { rules: { max_server_per_host: g.maxServerPerHost } };
  const r = await fetch(`${ctx.stack.apiUrl}/os-server-groups`, {
    method: 'POST',
    headers: { 'x-auth-token': 'admin', 'openstack-api-version': 'compute 2.64', 'content-type': 'application/json' },
    body: JSON.stringify({ server_group: { name: g.name, policy: g.policy, ...rules } }),
  });
  const body = (await r.json()) as { server_group?: { id: string } };
  if (r.status !== 200 || body.server_group === undefined)
    throw new Error(`POST /os-server-groups ${g.name}: ${r.status} ${JSON.stringify(body)}`);
  return body.server_group.id;
}

/** SIGKILLs a random cell conductor after a short delay (its reschedules in flight are redelivered), then starts it again. */
async function killConductorMidRun(ctx: ChaosContext): Promise<void> {
  await ctx.wait(ctx.rng.int(300, 1500));
  const victim = ctx.rng.pick(ctx.stack.servicesOf('cell-conductor'));
  ctx.log(`SIGKILL ${victim} while the groups' builds and reschedules run`);
  await ctx.stack.kill(victim);
  await ctx.wait(ctx.rng.int(500, 2000));
  await ctx.stack.start(victim);
  ctx.log(`${victim} started again`);
}

/**
 * Parallel boots into anti-affinity groups (each as large as the cloud, so a reschedule finds
 * other members on its alternates; one with max_server_per_host 2) and affinity groups (whose
 * first member's alternates lie off the group's host), with 30-50% of builds failing
 * reschedulably per cell and a cell conductor SIGKILLed mid-run. The global invariant
 * `server-groups` checks every group from the API afterwards; this scenario checks that the
 * failures happened and that every ERROR says why.
 */
export const serverGroups: Scenario = {
  name: 'server-groups',
  summary:
    'parallel boots into anti-affinity (max 1 and 2) and affinity groups, 30-50% reschedulable failures, a cell conductor killed: no policy broken across reschedules',
  ci: true,
  timeoutMs: 120_000,
  async run(ctx) {
    for (const cell of ctx.stack.topology().cells) {
      const rate = Math.round((0.3 + ctx.rng.next() * 0.2) * 100) / 100;
      await ctx.faults.set(cell.name, { failRate: rate });
      ctx.note(`failRate.${cell.name}`, rate);
    }
    const hosts = ctx.stack.shape.cells * ctx.stack.shape.hostsPerCell;
    const tag = `${ctx.seed}`.slice(-6);
    const plans: GroupPlan[] = [
      { name: `anti-a-${tag}`, policy: 'anti-affinity', members: hosts },
      { name: `anti-b-${tag}`, policy: 'anti-affinity', members: hosts },
      { name: `anti-2-${tag}`, policy: 'anti-affinity', maxServerPerHost: 2, members: 2 * hosts },
      { name: `aff-a-${tag}`, policy: 'affinity', members: ctx.rng.int(3, 6) },
      { name: `aff-b-${tag}`, policy: 'affinity', members: ctx.rng.int(3, 6) },
      { name: `soft-${tag}`, policy: 'soft-anti-affinity', members: 4 },
    ];
    const groups = await Promise.all(plans.map(async (p) => ({ ...p, id: await createGroup(ctx, p) })));
    ctx.log(
      `${groups.length} groups (${plans.map((p) => `${p.policy}${p.maxServerPerHost ? `/${p.maxServerPerHost}` : ''}×${p.members}`).join(', ')}) over ${hosts} hosts`,
    );

    const killing = killConductorMidRun(ctx);
    const booted = await Promise.all(groups.map((g) => ctx.boot(g.members, { burst: g.members, hints: { group: g.id }, name: g.name })));
    await killing;
    const ids = booted.flat();
    const wanted = plans.reduce((n, p) => n + p.members, 0);
    ctx.expect(ids.length === wanted, `every create accepted (${ids.length}/${wanted})`);
    const left = await ctx.quiesce(90_000);
    ctx.expect(left.length === 0, `all settled (${left.length} still building)`);

    const views = await serverViews(ctx, ids);
    const errors = ids.map((id) => views.get(id)).filter((s) => s?.status === 'ERROR');
    const unexplained = errors.filter(
      (s) => !(s?.fault?.message ?? '').includes(MAX_RETRIES) && !(s?.fault?.message ?? '').includes(NO_VALID_HOST),
    );
    ctx.expect(
      unexplained.length === 0,
      `every ERROR is max retries or NoValidHost (${unexplained.length} other: ${unexplained
        .slice(0, 3)
        .map((s) => `${s?.id}: ${s?.fault?.message ?? ''}`)
        .join('; ')})`,
    );
    const byPolicy = errors.filter((s) => /server group \S+ has the (anti-)?affinity policy/.test(s?.fault?.details ?? '')).length;
    ctx.note('errorsNamingGroupPolicy', byPolicy);
    ctx.note('active', ids.length - errors.length);
    ctx.log(`${ids.length - errors.length} ACTIVE, ${errors.length} ERROR (${byPolicy} with an alternate refused for the group's policy)`);
  },
};
