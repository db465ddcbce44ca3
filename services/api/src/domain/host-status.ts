/** Nova's `host_status` of a server (2.16+, admin): how its host's compute service is doing. */
export type HostStatus = 'UP' | 'DOWN' | 'MAINTENANCE' | 'UNKNOWN' | '';

/** Nova's `service_down_time` (seconds): a service silent longer than this is not alive. */
export const SERVICE_DOWN_TIME_S = 60;

/** A compute service as the liveness checks read it (the cell's `services` row). */
export interface ServiceLiveness {
  readonly forcedDown: boolean;
  readonly disabled: boolean;
  /** The last heartbeat; null: it never reported. */
  readonly lastSeenUp: Date | null;
}

/** Nova's servicegroup DB driver `is_up`: not forced down, and reported within service_down_time. Pure. */
export function isServiceUp(s: Pick<ServiceLiveness, 'forcedDown' | 'lastSeenUp'>, now: number): boolean {
  return !s.forcedDown && s.lastSeenUp !== null && now - s.lastSeenUp.getTime() <= SERVICE_DOWN_TIME_S * 1000;
}

/**
 * Nova's `get_instance_host_status`: no host (or no nova-compute service for it) is '' (NONE);
 * a forced-down service DOWN; a disabled one MAINTENANCE; otherwise UP while it heartbeats
 * within service_down_time, and UNKNOWN once it stopped (it may be down or only cut off). Pure.
 */
export function hostStatusOf(host: string | null, service: ServiceLiveness | undefined, now: number): HostStatus {
  if (host === null || host === '' || service === undefined) return '';
  if (service.forcedDown) return 'DOWN';
  if (service.disabled) return 'MAINTENANCE';
  return isServiceUp(service, now) ? 'UP' : 'UNKNOWN';
}
