#!/bin/bash
# The differential test's CI run: the fixed-seed short profile (400 operations) against the
# real OpenStack Placement 8.0 (the peer of ../shared/peers/placement, started with its up.sh
# when not answering, stopped again after) and our placement (`pnpm stack ... --only
# placement`, started when not running, stopped after). Exit 1 on any difference other than
# an error's text or a known bug of the peer (main.ts).
# Usage: e2e/placement-diff/ci.sh [main.ts arguments...]
# Environment: PDIFF_STACK_ARGS  pnpm stack flags of the system to use (default: the default
#              stack), e.g. "--prefix hplace --port-offset 2000 --state-dir /tmp/hplace-stack";
#              PLACEMENT_PEERS_DIR  the peer scripts; PLACEMENT_PORT  the peer's port (18778).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PEERS=${PLACEMENT_PEERS_DIR:-$ROOT/../shared/peers/placement}
PEER_URL=http://127.0.0.1:${PLACEMENT_PORT:-18778}
read -r -a STACK <<<"${PDIFF_STACK_ARGS:-}"
stack() { node "$ROOT/scripts/stack.mjs" "$@" "${STACK[@]}"; }

started=0; peer_started=0
cleanup() {
  if [ "$started" = 1 ]; then stack down; fi
  if [ "$peer_started" = 1 ]; then "$PEERS/down.sh"; fi
}
trap cleanup EXIT
stack status | grep -q '^placement: running' || started=1
stack up --only placement
if ! curl -fsS -o /dev/null "$PEER_URL/"; then peer_started=1; "$PEERS/up.sh"; fi
OURS=$(stack endpoints | node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>console.log(JSON.parse(s).placement))')
"$ROOT/node_modules/.bin/tsx" "$ROOT/e2e/placement-diff/main.ts" --profile ci --peer "$PEER_URL" --ours "$OURS" \
  --ours-reset "node $ROOT/scripts/stack.mjs reset --only placement ${PDIFF_STACK_ARGS:-}" \
  --peer-reset "$PEERS/reset.sh" "$@"
