// The chaos suite's scenario interface. A scenario is one file `scenarios/<nn>-<name>.ts`
// exporting a `Scenario`, listed in `scenarios/index.ts`. It drives a real multi-process
// system (`pnpm stack`) through a `ChaosContext`; the runner (main.ts) brings the stack up,
// runs the scenario within its time bound, waits for quiescence and checks the invariants
// (invariants.ts) from outside — the APIs and the databases — then cleans up for the next.

/** A scenario of the chaos suite. */
export interface Scenario {
  /** Short kebab-case name (`--only` takes it), e.g. `reschedulable-failures`. */
  name: string;
  /** One line: what it does and what it must show. */
  summary: string;
  /** Part of the CI profile (`pnpm chaos --profile ci`, run by `pnpm test`). */
  ci: boolean;
  /** Stack shape it needs, over the profile's (the runner restarts the stack when it differs). */
  stack?: Partial<StackShape>;
  /** false: `--fail-rate` (the soak's baseline of reschedulable failures) is not applied before this scenario (exact outcomes expected). Default true. */
  baselineFaults?: boolean;
  /** It moves servers (issue 13): a soak (`--duration`) interleaves these with the build scenarios, so moves run from the start. */
  moves?: boolean;
  /** Upper bound of `run` in ms at profile scale 1 (default 90 s); the runner aborts it after this. */
  timeoutMs?: number;
  /** Drives the system. Throwing (or `ctx.expect` failing) fails the scenario's own check. */
  run(ctx: ChaosContext): Promise<void>;
}

/** What `pnpm stack up` is given. */
export interface StackShape {
  cells: number;
  hostsPerCell: number;
  schedulers: number;
  /** How long a simulated spawn takes. */
  buildLatencyMs: number;
}

/** The suite's run profile. */
export interface Profile {
  name: 'ci' | 'full' | 'soak';
  /** Default stack shape. */
  stack: StackShape;
  /** Multiplier for build counts (ci: small); scenarios size their loads with `ctx.scale(n)`. */
  scale: number;
}

/** The cell topology `pnpm stack up` writes (<state-dir>/cells.json), with each component's credentials. */
export interface Topology {
  apiDbUrl: string;
  apiTransportUrl: string;
  cell0: { uuid: string; name: string; dbUrl: string };
  cells: { uuid: string; name: string; dbUrl: string; transportUrl: string }[];
}

/** Service kinds of the system (service names: `compute-cell1`, `cell-conductor-cell1`, `scheduler-0`, ...). */
export type ServiceKind = 'placement' | 'cell-conductor' | 'compute' | 'scheduler' | 'super-conductor' | 'api';

export interface HttpResult<T> {
  status: number;
  body: T;
}

/** One running system, as the scenario sees it. Kills and starts are counted in the report. */
export interface StackHandle {
  readonly prefix: string;
  readonly portOffset: number;
  readonly stateDir: string;
  readonly shape: StackShape;
  /** The compute API, `http://127.0.0.1:<port>/v2.1` (the plan's port at this offset: e2e/endpoints.ts) */
  readonly apiUrl: string;
  /** Placement's REST API, `http://127.0.0.1:<port>` */
  readonly placementUrl: string;
  topology(): Topology;
  /** Every service of the system, in start order. */
  services(): string[];
  /** Names of one kind, e.g. `servicesOf('compute')` → `['compute-cell1', 'compute-cell2']`. */
  servicesOf(kind: ServiceKind): string[];
  /** The pid from the service's pid file if that process is alive. */
  pid(name: string): number | undefined;
  isRunning(name: string): boolean;
  /** Sends `signal` (default SIGKILL) to the service and waits (≤ 15 s) until it is gone. Counts a kill. */
  kill(name: string, signal?: NodeJS.Signals): Promise<void>;
  /** Counts a kill of a process the scenario runs itself (an extra compute) in the report, like `kill`. */
  recordKill(name: string, signal: NodeJS.Signals, pid?: number): void;
  /** Starts a stopped service (no rebuild, no bootstrap) and waits until it is ready; re-applies compute faults. */
  start(name: string): Promise<void>;
  /** kill(name, signal, default SIGTERM) then start(name). */
  restart(name: string, signal?: NodeJS.Signals): Promise<void>;
  /** The service's log file (appended across restarts). */
  logFile(name: string): string;
  /** Compute API as admin, microversion 2.62 (`token` overrides `admin`). Never throws on HTTP status; throws on connection errors. */
  api<T = unknown>(method: string, path: string, body?: unknown, token?: string): Promise<HttpResult<T>>;
  /** Placement REST as admin, microversion 1.39. */
  placement<T = unknown>(method: string, path: string, body?: unknown): Promise<HttpResult<T>>;
  /** One query on a database (a topology URL, or `adminUrl(db)` for the superuser). */
  query<T = Record<string, unknown>>(dbUrl: string, sql: string, params?: unknown[]): Promise<T[]>;
  /** The superuser URL of database `db` (for reading any database, e.g. pg_stat_activity). */
  adminUrl(db?: string): string;
  /** The simulated compute's fault-control port of cell `cell` (read from its log; changes on restart). */
  controlPort(cell: string): number;
}

/** A seeded PRNG: a scenario's choices repeat with `--seed`. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max]. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  shuffle<T>(items: T[]): T[];
  /** A child generator with its own stream (for a background loop). */
  fork(): Rng;
}

export interface BootOptions {
  /** Concurrent POSTs at a time (default 10). */
  burst?: number;
  /** flavorRef (default '1', m1.tiny). */
  flavor?: string;
  /** `user:project` token (default a chaos project). */
  token?: string;
  /** Pause between bursts (default 0). */
  pauseMs?: number;
  /** Name prefix of the servers (default `chaos-<scenario>`). */
  name?: string;
  /** Extra fields of the `server` body (availability_zone, ...). */
  extra?: Record<string, unknown>;
  /** Scheduler hints (`os:scheduler_hints`, e.g. `{ group: uuid }`). */
  hints?: Record<string, string>;
}

/** What the load generator got from the API: every 202 is in the ledger and must never be lost. */
export interface BootOutcome {
  /** ids the API answered 202 for. */
  accepted: string[];
  /** Requests the API refused or failed (status, or 0 for a connection error), by status. */
  refused: Record<string, number>;
}

/**
 * A server action (`POST /servers/{id}/action`), by the request body's key: Nova's os-stop,
 * os-start, reboot, rebuild, migrate, resize, confirmResize, revertResize, os-migrateLive,
 * evacuate, shelve, shelveOffload, unshelve.
 */
export type ServerActionName =
  | 'os-stop'
  | 'os-start'
  | 'reboot'
  | 'rebuild'
  | 'migrate'
  | 'resize'
  | 'confirmResize'
  | 'revertResize'
  | 'os-migrateLive'
  | 'evacuate'
  | 'shelve'
  | 'shelveOffload'
  | 'unshelve';

export interface LoadOptions {
  /** Creates per second. */
  rate: number;
  flavor?: string;
  /** Share of accepted servers the loop deletes again soon after (0..1, default 0). */
  deleteShare?: number;
}

export interface LoadGenerator {
  /** Starts the background create loop (one at a time per generator). */
  start(opts: LoadOptions): void;
  /** Stops it and waits for in-flight requests; returns the ids it got a 202 for. */
  stop(): Promise<string[]>;
  readonly running: boolean;
}

/** A compute fault plan, mapped to the simulated compute's `PUT /faults`. */
export interface FaultPlan {
  /** Share of builds failing reschedulably (0..1). */
  failRate?: number;
  /** Share of builds failing non-reschedulably (0..1). */
  nonReschedulableRate?: number;
  /** New builds hang (unacked) until cleared. */
  hang?: boolean;
  /** Share of builds during which the compute process SIGKILLs itself half-way (0..1). */
  crashMidBuild?: number;
  /**
   * Faults of instance steps (moves, lifecycle actions), by step name (`prep_resize`,
   * `finish_resize`, `pre_live_migration`, ...) or `*` for every step; replaced whole when given
   * (`{}`: none). The simulated compute's `PUT /faults` `steps`.
   */
  steps?: Record<string, StepFault>;
}

/** The faults of one instance step (or of every step: key `*`). */
export interface StepFault {
  /** Share of these steps that fail (reported with a failure), 0..1. */
  failRate?: number;
  /** Share of these steps during which the compute process SIGKILLs itself, 0..1. */
  crashRate?: number;
  /** These steps hang (never finish, never acked) until cleared. */
  hang?: boolean;
  /** Only on these hosts (default: every host of the process). */
  hosts?: string[];
}

export interface FaultControl {
  /** Applies `plan` (merged over the current one) to the compute of `cell` ('cell1', ...) or of every cell ('all'). Remembered and re-applied when a compute restarts. */
  set(cell: string, plan: FaultPlan): Promise<void>;
  /** Every fault off, every cell. */
  clear(): Promise<void>;
  /** The compute's own record: host → instance uuids running there (live processes only). */
  guests(cell: string): Promise<Record<string, string[]>>;
}

/** Everything a scenario may use. */
export interface ChaosContext {
  readonly scenario: string;
  readonly stack: StackHandle;
  readonly profile: Profile;
  /** The scenario's seed (printed in the report). */
  readonly seed: number;
  readonly rng: Rng;
  /** Epoch ms by which `run` must return (the runner aborts it after). */
  readonly deadline: number;
  /** An AbortSignal that fires at the deadline (pass it to long waits). */
  readonly signal: AbortSignal;
  /** `n` scaled by the profile (at least 1). */
  scale(n: number): number;
  /** Creates `n` servers (single-instance POSTs, `burst` at a time); every 202 goes into the ledger. */
  boot(n: number, opts?: BootOptions): Promise<string[]>;
  /** Same as boot, with the refusals. */
  bootDetailed(n: number, opts?: BootOptions): Promise<BootOutcome>;
  /** DELETE /servers/{id}; records the delete in the ledger (a deleted server must be gone, with no allocation). */
  deleteServer(id: string): Promise<number>;
  /**
   * POST /servers/{id}/action with `{[action]: args}` (args default: Nova's minimal body — `null`,
   * `{type: 'SOFT'}` for reboot, `{imageRef}` for rebuild, `{flavorRef: '2'}` for resize,
   * `{host: null, block_migration: 'auto'}` for os-migrateLive, `{}` for evacuate); the answer is
   * counted in the ledger per action and status (status 0: connection error). Never throws.
   */
  act(id: string, action: ServerActionName, args?: unknown): Promise<HttpResult<unknown>>;
  /** The ids of the ledger so far (every 202 of this scenario) whose delete did not go through. */
  liveServers(): string[];
  /** Background create loop. */
  readonly load: LoadGenerator;
  readonly faults: FaultControl;
  log(message: string): void;
  wait(ms: number): Promise<void>;
  /** Polls `check` every 500 ms until it returns non-undefined; throws after `timeoutMs` or at the deadline. */
  waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs?: number): Promise<T>;
  /** Waits until no server is in BUILD and no build request is left (bounded); returns the ids still building. */
  quiesce(timeoutMs?: number): Promise<string[]>;
  /** A scenario-level check: recorded in the report; a false one fails the scenario. */
  expect(ok: boolean, message: string): void;
  /** A figure for the report (e.g. `ctx.note('conflicts', 3)`). */
  note(key: string, value: unknown): void;
}
