// Contract tests of the wire: every method says how it crosses the wire, cast services
// agree with CAST_SERVICES, and committed encodings still decode to the same values.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { BuildAndRunInstanceRequest, CAST_SERVICES, Failure } from '../src';
import { goldenBuild, goldenFailure } from './golden';

const root = join(__dirname, '../../..');

interface MethodDesc {
  name: string;
  options?: Record<string, string>;
}
interface ServiceDesc {
  name: string;
  options?: Record<string, string>;
  method: MethodDesc[];
}

function services(): ServiceDesc[] {
  const buf = join(root, 'node_modules/.bin/buf');
  const image = JSON.parse(execFileSync(buf, ['build', '-o', '-#format=json'], { cwd: root, encoding: 'utf8' }));
  return image.file.flatMap((f: { service?: ServiceDesc[] }) => f.service ?? []);
}

describe('proto service declarations', () => {
  const all = services();

  it('declares a kind on every method and an rpc_version on every service', () => {
    expect(all.length).toBeGreaterThan(0);
    for (const s of all) {
      expect(s.options?.['[cellsched.v1.rpc_version]']).toMatch(/^\d+\.\d+$/);
      for (const m of s.method) {
        expect([`${s.name}.${m.name}`, m.options?.['[cellsched.v1.kind]']]).toEqual([
          `${s.name}.${m.name}`,
          expect.stringMatching(/^RPC_KIND_(CALL|CAST)$/),
        ]);
      }
    }
  });

  it('lists every service with casts in CAST_SERVICES, with the same version and topic', () => {
    const withCasts = all.filter((s) => s.method.some((m) => m.options?.['[cellsched.v1.kind]'] === 'RPC_KIND_CAST'));
    expect(withCasts.map((s) => s.name).sort()).toEqual(Object.keys(CAST_SERVICES).sort());
    for (const s of withCasts) {
      const info = CAST_SERVICES[s.name as keyof typeof CAST_SERVICES];
      expect({ rpcVersion: s.options?.['[cellsched.v1.rpc_version]'], topic: s.options?.['[cellsched.v1.topic]'] }).toEqual(info);
    }
  });
});

describe('golden envelopes', () => {
  // Encodings committed when the message was first shipped: a change here means an old
  // sender's bytes no longer decode to the same values (a breaking wire change).
  const FAILURE_HEX =
    '0a177363686564756c65722e6e6f5f76616c69645f686f737412184e6f2076616c696420686f73742077617320666f756e642e20012a130a0a726571756573745f696412057265712d31322b0a0d436f6d7075746546696c74657210042218736572766963652064697361626c6564206f7220646f776e';
  const BUILD_HEX =
    '0a340a2436653162633761352d336238652d346230652d396135352d3066326638633163306130311202703138014a06686f73742d311a3a0a04636e2d311206686f73742d311a06686f73742d31220663656c6c2d31321a0a127b22616c6c6f636174696f6e73223a7b7d7d1204312e33361a1e0a04636e2d321206686f73742d321a06686f73742d32220663656c6c2d3120012a057265712d31';

  it('decodes a committed Failure to the same value and re-encodes identically', () => {
    expect(Failure.decode(Buffer.from(FAILURE_HEX, 'hex'))).toEqual(goldenFailure());
    expect(Buffer.from(Failure.encode(goldenFailure()).finish()).toString('hex')).toBe(FAILURE_HEX);
  });

  it('decodes a committed build_and_run_instance payload', () => {
    const decoded = BuildAndRunInstanceRequest.decode(Buffer.from(BUILD_HEX, 'hex'));
    expect(decoded).toEqual(goldenBuild());
    expect(decoded.hostList.map((s) => s.serviceHost)).toEqual(['host-1', 'host-2']);
  });
});
