#!/usr/bin/env bash
# The lean runtime tree of every cellsched process: each workspace package's package.json,
# dist/ (no tests, declarations or source maps) and SQL migrations, the launcher (the compose
# init), and production dependencies only, installed from the local pnpm store (--offline:
# no registry needed; run `pnpm install` once first so the store holds them).
# Usage: deploy/images/bundle.sh OUT_DIR      (after `pnpm build`)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:?usage: bundle.sh OUT_DIR}
cd "$ROOT"
for d in packages/* services/*; do
  [ -f "$d/dist/main.js" ] || [ -f "$d/dist/index.js" ] || { echo "bundle: $d has no dist/ (run pnpm build first)" >&2; exit 1; }
done
rm -rf "$OUT" && mkdir -p "$OUT"
cp package.json pnpm-workspace.yaml pnpm-lock.yaml .npmrc "$OUT/"
# e2e's manifest only: the lockfile names it, and a frozen install wants every importer present
tar -c --exclude='*.test.js' --exclude='*.d.ts' --exclude='*.map' --exclude='test' \
  packages/*/package.json services/*/package.json e2e/package.json \
  packages/*/dist services/*/dist packages/*/migrations services/*/migrations deploy/launcher | tar -C "$OUT" -x
cd "$OUT"
pnpm install --offline --frozen-lockfile --prod --ignore-scripts --reporter=append-only >/dev/null
rm -rf e2e
echo "bundle: $OUT ($(du -sh . | cut -f1))"
