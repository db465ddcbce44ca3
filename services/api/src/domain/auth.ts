import { ApiError } from './errors';

/** Who is calling, from Nova's noauth2 token. */
export interface Caller {
  readonly userId: string;
  readonly projectId: string;
  readonly isAdmin: boolean;
}

/**
 * Nova's NoAuthMiddleware: `X-Auth-Token: user[:project]`; the project defaults to the user;
 * the user `admin` is an administrator. No token → 401. Pure.
 */
export function callerFromToken(token: string | undefined): Caller {
  if (token === undefined || token.trim() === '') throw new ApiError(401, 'The request you have made requires authentication.');
  const [userId = '', project] = token.trim().split(':', 2);
  if (userId === '') throw new ApiError(401, 'The request you have made requires authentication.');
  return { userId, projectId: project === undefined || project === '' ? userId : project, isAdmin: userId === 'admin' };
}

/** Nova's default admin-only policy rule: 403 with Nova's message otherwise. */
export function requireAdmin(caller: Caller, rule: string): void {
  if (!caller.isAdmin) throw new ApiError(403, `Policy doesn't allow ${rule} to be performed.`);
}
