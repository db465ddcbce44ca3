import type { Clock } from '../ports';

/** The system clock. */
export const systemClock: Clock = { now: () => new Date() };
