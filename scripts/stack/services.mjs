// The services table of `pnpm stack`: one row per process, in start order (how to build it,
// its database, how to start it, how to tell it is up). The system's rows come from the plan
// (deploy/launcher/system.mjs); the placement profiles are started only when named.
import { placementService, systemServices } from '../../deploy/launcher/system.mjs';

/**
 * Same database and code as `placement` (the system's: its prefix), configured like one of Placement's test fixtures, on
 * `basePort` + the system's port offset; started only when named (`--only placement,placement-secure-rbac`), for gabbi.sh.
 */
const placementProfile = (plan, name, basePort, env) => {
  const port = basePort + plan.options.portOffset;
  return {
    name,
    build: 'services/placement',
    database: plan.placement.role,
    main: 'services/placement/dist/main.js',
    profile: true,
    cmd: ['node', ['services/placement/dist/main.js']],
    env: () => ({
      CELLSCHED_PLACEMENT_DB_URL: plan.placement.dbUrl,
      CELLSCHED_PLACEMENT_PORT: String(port),
      CELLSCHED_PLACEMENT_HOST: '127.0.0.1',
      CELLSCHED_PLACEMENT_MIGRATE: 'false',
      CELLSCHED_PLACEMENT_GRPC_PORT: '0',
      ...env,
    }),
    ready: { http: `http://127.0.0.1:${port}/` },
  };
};

/**
 * The table for `plan`; `common`: env every system process gets (telemetry); `only`: the --only
 * list, if any (placement alone, for gabbi, gets no telemetry). A row's `reset` is the command
 * that empties its database (`stack reset`): the service's own, run with the service's env.
 */
export function servicesTable(plan, common, only) {
  const placement = {
    ...placementService(plan, only === undefined ? common : {}),
    database: plan.placement.role,
    // keeps what a fresh install has: standard classes and traits, and the migration record
    reset: { main: 'services/placement/dist/manage.js', args: ['db', 'reset'] },
  };
  return [
    placement,
    placementProfile(plan, 'placement-secure-rbac', 28778, { CELLSCHED_PLACEMENT_POLICY: 'secure-rbac' }),
    placementProfile(plan, 'placement-open-policy', 28779, { CELLSCHED_PLACEMENT_POLICY: 'open' }),
    placementProfile(plan, 'placement-cors', 28780, { CELLSCHED_PLACEMENT_CORS_ORIGINS: 'http://valid.example.com' }),
    // the computes' fault-control endpoint on a free loopback port (printed in their log), for the chaos suite
    ...systemServices(plan, common).map((r) =>
      r.name.startsWith('compute-') ? { ...r, env: () => ({ CELLSCHED_COMPUTE_CONTROL_PORT: '0', ...r.env() }) } : r,
    ),
  ];
}

/** The rows `--only` names (all, when not given; the profiles then only `withProfiles`); throws on an unknown name. */
export function selectServices(services, only, withProfiles) {
  if (only === undefined) return withProfiles ? services : services.filter((s) => !s.profile);
  const names = only.split(',');
  const unknown = names.filter((n) => !services.some((s) => s.name === n));
  if (unknown.length) throw new Error(`unknown service(s): ${unknown.join(', ')}; known: ${services.map((s) => s.name).join(', ')}`);
  return services.filter((s) => names.includes(s.name));
}
