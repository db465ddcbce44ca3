import type { RequestSpec } from '@cellsched/wire';
import type { MoveContext } from './validate-request';

/**
 * The spec a move is scheduled with (Nova's conductor sets `ignore_hosts = [instance.host]` for a
 * migrate, resize, live migration or evacuation unless allow_resize_to_same_host): the source host
 * joins ignore_hosts unless the move may stay there. The instance's cell and a requested host
 * travel in `requested_destination`, set by the caller. Pure; the input spec is not changed.
 */
export function moveSpec(spec: RequestSpec, move: MoveContext): RequestSpec {
  if (move.allowSameHost || spec.ignoreHosts.includes(move.sourceHost)) return spec;
  return { ...spec, ignoreHosts: [...spec.ignoreHosts, move.sourceHost] };
}
