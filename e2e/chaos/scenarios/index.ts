// The chaos suite's scenarios, in run order. One line per scenario file
// (`scenarios/<nn>-<name>.ts`, exporting a `Scenario`).
import type { Scenario } from '../scenario';
import { reschedulableFailures } from './01-reschedulable-failures';
import { nonReschedulableFailures } from './02-non-reschedulable-failures';
import { schedulersFillCloud } from './09-schedulers-fill-cloud';
import { deletesRacingBuilds } from './10-deletes-racing-builds';

export const SCENARIOS: readonly Scenario[] = [
  reschedulableFailures,
  nonReschedulableFailures,
  schedulersFillCloud,
  deletesRacingBuilds,
];
