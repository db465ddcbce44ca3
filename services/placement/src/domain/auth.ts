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
  token: string | undefined, rolesHeader: string | undefined, systemScope: string | undefined,
): Caller | undefined {
  if (token === undefined) return undefined;
  const sep = token.indexOf(':');
  const userId = sep < 0 ? token : token.slice(0, sep);
  const project = sep < 0 ? '' : token.slice(sep + 1);
  let roles: string[];
  if (rolesHeader !== undefined) roles = rolesHeader.split(',').map((r) => r.trim()).filter((r) => r !== '');
  else roles = userId === 'admin' ? ['admin'] : [];
  return { userId, projectId: project || userId, roles, systemScope: systemScope || undefined };
}

/** What a route needs: `read` (admin, or a system-scoped reader) or `write` (admin). */
export type Policy = 'read' | 'write' | 'none';

/**
 * Placement 8.0's default policy with enforce_new_defaults off (the legacy rules):
 * `role:admin` may do everything; a `reader` with system scope `all` may read.
 */
export function isAllowed(caller: Caller, policy: Policy): boolean {
  if (caller.roles.includes('admin')) return true;
  return policy === 'read' && caller.systemScope === 'all' && caller.roles.includes('reader');
}
