import { isPublishUnroutable, type CastClient } from '@cellsched/bus';
import type { ComputeServiceService } from '@cellsched/wire';
import type { CastResult, ComputeCaster, StepCaster } from '../ports';

async function castTo(send: () => Promise<unknown>): Promise<CastResult> {
  try {
    await send();
    return 'sent';
  } catch (err) {
    if (isPublishUnroutable(err)) return 'unroutable';
    throw err;
  }
}

/** {@link ComputeCaster} and {@link StepCaster} over the cell bus: casts to `compute.<host>`; the broker's refusal (no queue bound to the key) is `unroutable`. */
export function busComputeCaster(compute: CastClient<typeof ComputeServiceService>): ComputeCaster & StepCaster {
  return {
    buildAndRunInstance: (host, request) => castTo(() => compute.cast('buildAndRunInstance', request, { server: host })),
    terminateInstance: (host, request) => castTo(() => compute.cast('terminateInstance', request, { server: host })),
    instanceStep: (host, request) => castTo(() => compute.cast('instanceStep', request, { server: host })),
  };
}
