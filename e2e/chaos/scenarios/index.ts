// The chaos suite's scenarios, in run order. One line per scenario file
// (`scenarios/<nn>-<name>.ts`, exporting a `Scenario`).
import type { Scenario } from '../scenario';
import { reschedulableFailures } from './01-reschedulable-failures';
import { nonReschedulableFailures } from './02-non-reschedulable-failures';
import { computeKilledForGood, computeKillRestart } from './03-compute-kill';
import { cellConductorKill } from './04-cell-conductor-kill';
import { schedulerKill } from './05-scheduler-kill';
import { superConductorKill } from './06-super-conductor-kill';
import { placementRestart } from './07-placement-restart';
import { rabbitmqRestart } from './08-rabbitmq-restart';
import { schedulersFillCloud } from './09-schedulers-fill-cloud';
import { deletesRacingBuilds } from './10-deletes-racing-builds';
import { postgresRestart } from './11-postgres-restart';
import { cellCutOff } from './12-cell-cut-off';
import { brokerRefuses } from './13-broker-refuses';
import { serverGroups } from './14-server-groups';
import { hostRemoved } from './15-host-removed';
import { resizeDestKilled } from './16-resize-dest-killed';
import { cellConductorKillMoves } from './17-cell-conductor-kill-moves';
import { revertRacingConfirm } from './18-revert-racing-confirm';
import { deletesRacingMoves } from './19-deletes-racing-moves';
import { evacuateKilledCompute } from './20-evacuate-killed-compute';
import { movesMixed } from './21-moves-mixed';

export const SCENARIOS: readonly Scenario[] = [
  reschedulableFailures,
  nonReschedulableFailures,
  computeKillRestart,
  computeKilledForGood,
  cellConductorKill,
  schedulerKill,
  superConductorKill,
  placementRestart,
  rabbitmqRestart,
  schedulersFillCloud,
  deletesRacingBuilds,
  postgresRestart,
  cellCutOff,
  brokerRefuses,
  serverGroups,
  hostRemoved,
  resizeDestKilled,
  cellConductorKillMoves,
  revertRacingConfirm,
  deletesRacingMoves,
  evacuateKilledCompute,
  movesMixed,
];
