/**
 * `pnpm placement-diff [--profile ci|long] [--ops N] [--seed N] [--peer URL] [--ours URL]
 *  [--peer-reset CMD] [--ours-reset CMD] [--peer-db URL | --no-peer-repair] [--out FILE.json] [--log FILE.jsonl]
 *  [--no-examples]`
 *
 * The differential test of issue 16: one seeded random sequence of Placement operations
 * (valid and invalid, random microversions) sent to the real OpenStack Placement 8.0 (the
 * peer) and to ours, in lock step, from emptied databases; each pair of answers is compared
 * (status, error code, kept headers, normalised body) and the differences are printed
 * grouped by class. Exit 1 when any difference other than an error's text or a 500 of the
 * peer is found.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compare } from './compare';
import { Target } from './http';
import { ALLOCATION_OPS } from './ops-allocations';
import { PROVIDER_OPS } from './ops-providers';
import { defaultPeerDb, PeerRepair } from './peer-repair';
import { printSummary, Tally } from './report';
import { Rng } from './rng';
import { makeWorld, type Operation } from './world';

const ROOT = join(__dirname, '..', '..');
const PEERS = process.env.PLACEMENT_PEERS_DIR ?? join(ROOT, '..', 'shared', 'peers', 'placement');
const PROFILES = { ci: { ops: 400, seed: 16 }, long: { ops: 10_000, seed: 1616 } } as const;

interface Args {
  ops: number;
  seed: number;
  peer: string;
  ours: string;
  peerReset: string;
  oursReset: string;
  peerDb?: string;
  out?: string;
  log?: string;
  examples: boolean;
}

function parseArgs(argv: readonly string[]): Args {
  const a: Args = {
    ...PROFILES.ci,
    peer: 'http://127.0.0.1:18778',
    ours: 'http://127.0.0.1:8778',
    peerReset: join(PEERS, 'reset.sh'),
    oursReset: `node ${join(ROOT, 'scripts/stack.mjs')} reset --only placement`,
    peerDb: defaultPeerDb(),
    examples: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const [k, v] = [argv[i], argv[i + 1] ?? ''];
    if (k === '--profile') {
      if (v !== 'ci' && v !== 'long') throw new Error('--profile is ci or long');
      Object.assign(a, PROFILES[v]);
    } else if (k === '--ops') a.ops = Number(v);
    else if (k === '--seed') a.seed = Number(v);
    else if (k === '--peer') a.peer = v;
    else if (k === '--ours') a.ours = v;
    else if (k === '--peer-reset') a.peerReset = v;
    else if (k === '--ours-reset') a.oursReset = v;
    else if (k === '--peer-db') a.peerDb = v;
    else if (k === '--no-peer-repair') {
      a.peerDb = undefined;
      continue;
    } else if (k === '--out') a.out = v;
    else if (k === '--log') a.log = v;
    else if (k === '--no-examples') {
      a.examples = false;
      continue;
    } else throw new Error(`unknown argument ${k}`);
    i++;
  }
  return a;
}

function reset(cmd: string): void {
  const r = spawnSync('bash', ['-c', cmd], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`reset failed: ${cmd}`);
}

/** The operation sequence of a seed: the same for every run and both targets. */
export function* operations(seed: number, count: number): Generator<{ op: Operation; known: ReadonlySet<string> }> {
  const rng = new Rng(seed);
  const world = makeWorld(rng);
  const known = new Set([...world.rps, ...world.aggs, ...world.consumers, ...world.projects, ...world.users]);
  const table = [...PROVIDER_OPS, ...ALLOCATION_OPS];
  for (let i = 0; i < count; i++) yield { op: rng.weighted(table)(rng, world), known };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  console.log(`placement-diff: seed ${args.seed}, ${args.ops} operations; peer ${args.peer}, ours ${args.ours}`);
  reset(args.peerReset);
  reset(args.oursReset);
  const [peer, ours] = [new Target('peer', args.peer), new Target('ours', args.ours)];
  const tally = new Tally();
  const repair = args.peerDb === undefined ? undefined : await PeerRepair.connect(args.peerDb);
  let i = 0;
  for (const { op, known } of operations(args.seed, args.ops)) {
    const p = await peer.send(op);
    await repair?.afterPeerAnswer(op, p);
    const o = await ours.send(op);
    const diffs = compare(op, p, o, known);
    tally.add(i, op, diffs);
    if (args.log)
      appendFileSync(args.log, `${JSON.stringify({ i, op, peer: p.status, ours: o.status, diffs: diffs.map((d) => d.cls) })}\n`);
    if (++i % 1000 === 0) console.log(`  ${i} operations`);
  }
  await repair?.close();
  const summary = tally.summary(args.seed, args.ops);
  if (repair) console.log(`deleted ${repair.repairs} consumer(s) the peer leaked (its bug: README)`);
  printSummary(summary, args.examples);
  if (args.out) writeFileSync(args.out, `${JSON.stringify(summary, null, 2)}\n`);
  process.exitCode = summary.differingOps - summary.peerBugOps > 0 ? 1 : 0;
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 2;
  });
}
