/** Who is calling, as Placement's noauth2 middleware derives it from the request. */
export interface Caller {
  readonly userId: string;
  readonly projectId: string;
  readonly roles: readonly string[];
  readonly systemScope: string | undefined;
}

/**
 * noauth2: the token is `user[:project]`; roles come from `X-Roles` when sent, else the
 * user `admin` is an administrator and everyone else has no role. Returns undefined when
 * there is no token (the caller answers 401).
 */
export function callerFromHeaders(
  token: string | undefined,
  rolesHeader: string | undefined,
  systemScope: string | undefined,
  projectHeader?: string,
): Caller | undefined {
  if (token === undefined) return undefined;
  const sep = token.indexOf(':');
  const userId = sep < 0 ? token : token.slice(0, sep);
  const project = sep < 0 ? '' : token.slice(sep + 1);
  let roles: string[];
  if (rolesHeader !== undefined)
    roles = rolesHeader
      .split(',')
      .map((r) => r.trim())
      .filter((r) => r !== '');
  else roles = userId === 'admin' ? ['admin'] : [];
  return { userId, projectId: projectHeader || project || userId, roles, systemScope: systemScope || undefined };
}

/**
 * What a route needs: `read` (system reader), `write` (system admin), `project-read`
 * (a system reader, or a reader of the project the request targets: GET /usages) or
 * `none` (version discovery).
 */
export type Policy = 'read' | 'write' | 'project-read' | 'none';

/**
 * Which of Placement 8.0's policy configurations to enforce:
 * `legacy` — the defaults (enforce_new_defaults off): `role:admin` may do everything, a
 * system-scoped reader may read; `secure-rbac` — enforce_scope and new defaults: only
 * system-scoped admins write, system-scoped readers read, project readers see their own
 * project's usages; `open` — every rule is `@` (any authenticated caller).
 */
export type PolicyMode = 'legacy' | 'secure-rbac' | 'open';
export const POLICY_MODES: readonly PolicyMode[] = ['legacy', 'secure-rbac', 'open'];

const systemReader = (c: Caller) => c.systemScope === 'all' && (c.roles.includes('reader') || c.roles.includes('admin'));
const systemAdmin = (c: Caller) => c.systemScope === 'all' && c.roles.includes('admin');

/** Does `caller` pass `policy` under `mode`? `targetProject` is the project a `project-read` asks about. */
export function isAllowed(caller: Caller, policy: Policy, mode: PolicyMode = 'legacy', targetProject?: string): boolean {
  if (policy === 'none' || mode === 'open') return true;
  if (mode === 'legacy') return caller.roles.includes('admin') || (policy !== 'write' && systemReader(caller));
  if (policy === 'write') return systemAdmin(caller);
  if (policy === 'read') return systemReader(caller);
  return (
    systemReader(caller) ||
    (caller.roles.includes('reader') &&
      caller.systemScope === undefined &&
      targetProject !== undefined &&
      caller.projectId === targetProject)
  );
}
