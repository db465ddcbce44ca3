// The chaos suite's scenarios, in run order. One line per scenario file
// (`scenarios/<nn>-<name>.ts`, exporting a `Scenario`).
import type { Scenario } from '../scenario';
import { reschedulableFailures } from './01-reschedulable-failures';

export const SCENARIOS: readonly Scenario[] = [
  reschedulableFailures,
];
