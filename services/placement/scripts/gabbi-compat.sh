#!/bin/bash
# Compatibility run for CI: Placement 8.0's own gabbi tests (all 1,232, secure-RBAC,
# open-policy and CORS files included) against cellsched Placement started by
# `pnpm stack`, each file on a freshly reset database. Exit 1 if any test fails.
# Needs PostgreSQL up and python3-gabbi (gabbi.sh installs it if missing).
# Usage: gabbi-compat.sh [GABBIT...]   (default: every file)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
PEERS=${PLACEMENT_PEERS_DIR:-$ROOT/../shared/peers/placement}
PROFILES=placement,placement-secure-rbac,placement-open-policy,placement-cors
started=0
status=$(pnpm --dir "$ROOT" stack status)
grep -q '^placement: running' <<<"$status" || started=1
pnpm --dir "$ROOT" stack up --only "$PROFILES"   # idempotent: running services are left alone
trap '[ "$started" = 1 ] && pnpm --dir "$ROOT" stack down' EXIT
# the reset runs before each of ~80 files: node, not pnpm (0.7-0.8 s a reset instead of 0.9)
GABBI_RESET_CMD="node $ROOT/scripts/stack.mjs reset --only placement" \
SECURE_RBAC_URL=http://127.0.0.1:28778 OPEN_POLICY_URL=http://127.0.0.1:28779 CORS_URL=http://127.0.0.1:28780 \
  "$PEERS/gabbi.sh" http://127.0.0.1:8778 "$@"
