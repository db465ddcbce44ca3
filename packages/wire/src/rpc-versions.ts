/**
 * RPC versions and topics of the cast services, mirroring the `rpc_version` and `topic`
 * service options in `proto/`. A contract test checks that the two agree.
 */
export interface CastServiceInfo {
  /** "major.minor"; a receiver rejects an unknown major. */
  readonly rpcVersion: string;
  /** AMQP topic prefix; compute casts go to `compute.<host>`. */
  readonly topic: string;
}

export const CAST_SERVICES = {
  SuperConductorService: { rpcVersion: '1.6', topic: 'conductor' },
  CellConductorService: { rpcVersion: '1.4', topic: 'conductor' },
  ComputeService: { rpcVersion: '1.3', topic: 'compute' },
  EchoService: { rpcVersion: '1.0', topic: 'echo' },
} as const satisfies Record<string, CastServiceInfo>;
