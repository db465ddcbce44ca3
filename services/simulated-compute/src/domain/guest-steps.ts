/**
 * What each instance step does to this host's guests (the fake driver's part of Nova's compute
 * manager methods). Every effect sets a state, so a redelivered step finds it done and repeats
 * nothing: steps are idempotent. A guest missing where a step expects one (the process restarted,
 * as a rebooted hypervisor) is adopted: the step puts it there.
 */
import type { GuestPower, Guests } from './hosts';

/** A step's effect on the guest of the instance on the host it runs on. */
export type GuestEffect =
  /** The guest is there with this power (created if missing). */
  | { readonly kind: 'place'; readonly power: GuestPower }
  /** The guest is gone from this host. */
  | { readonly kind: 'drop' }
  /** Nothing changes here (a check, a copy, a claim the conductor already made). */
  | { readonly kind: 'none' };

const PLACE_RUNNING: GuestEffect = { kind: 'place', power: 'running' };
const DROP: GuestEffect = { kind: 'drop' };

const EFFECTS: Readonly<Record<string, GuestEffect>> = {
  power_off: { kind: 'place', power: 'shutdown' },
  power_on: PLACE_RUNNING,
  reboot_soft: PLACE_RUNNING,
  reboot_hard: PLACE_RUNNING,
  rebuild: PLACE_RUNNING,
  shelve_offload: DROP,
  unshelve: PLACE_RUNNING,
  // NOTE: the destination checks and claims nothing here: the conductor claimed it in placement
  prep_resize: { kind: 'none' },
  // NOTE: the source powers its guest off and sends the disk; the guest stays until confirm (a revert powers it on)
  resize_instance: { kind: 'place', power: 'shutdown' },
  finish_resize: PLACE_RUNNING,
  confirm_resize: DROP,
  revert_resize: DROP,
  finish_revert_resize: PLACE_RUNNING,
  pre_live_migration: PLACE_RUNNING,
  live_migration: { kind: 'none' },
  post_live_migration: DROP,
  rollback_live_migration: DROP,
  rebuild_evacuated: PLACE_RUNNING,
  destroy_evacuated: DROP,
};

/** The effect of a step, or undefined for a step this compute does not know. Pure. */
export function guestEffectOf(step: string): GuestEffect | undefined {
  return Object.hasOwn(EFFECTS, step) ? EFFECTS[step] : undefined;
}

/**
 * Applies a step's effect to the instance's guest on `host`; a guest a live migration places
 * (pre_live_migration) notes the step's `blockMigration` ('' for none). Idempotent.
 */
export function applyGuestEffect(guests: Guests, host: string, uuid: string, effect: GuestEffect, blockMigration = ''): void {
  if (effect.kind === 'place') guests.place(host, uuid, effect.power, blockMigration === '' ? undefined : blockMigration);
  else if (effect.kind === 'drop') guests.drop(host, uuid);
}
