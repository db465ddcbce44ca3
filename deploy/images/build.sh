#!/usr/bin/env bash
# Builds every image of the compose deployment on a machine without a registry, from Debian's
# packages and the host's pnpm store only:
#   cellsched/base:bookworm  debootstrap --variant=minbase bookworm, imported (made once, reused)
#   cellsched/postgres:dev   PostgreSQL 15 (apt, inside docker build)
#   cellsched/rabbitmq:dev   RabbitMQ 3.10 with the management API (apt, inside docker build)
#   cellsched/app:dev        the host's node + bundle.sh's lean tree (dist/ + production deps)
# Needs root (debootstrap), docker, and a built tree (`pnpm install && pnpm build`; --build runs
# the build). --app: only the app image (from the current tree; the others must exist);
# --infra: all but the app image (needs no built tree: CI makes these while its tests run).
# Usage: deploy/images/build.sh [--build] [--app | --infra] [--rebuild-base]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/deploy/images"
BASE=cellsched/base:bookworm
MIRROR=${CELLSCHED_DEBIAN_MIRROR:-http://deb.debian.org/debian}
build=0; rebuild_base=0; app_only=0; infra_only=0
for a in "$@"; do
  case "$a" in
    --build) build=1 ;; --app) app_only=1 ;; --infra) infra_only=1 ;; --rebuild-base) rebuild_base=1 ;;
    *) echo "usage: $0 [--build] [--app | --infra] [--rebuild-base]" >&2; exit 2 ;;
  esac
done
step() { printf '\n### %s (%s)\n' "$*" "$(date -u +%T)"; }
LOG=$(mktemp /tmp/cellsched-images.XXXXXX.log)
# docker build, its output kept in $LOG and shown when it fails
dbuild() { docker build "$@" >"$LOG" 2>&1 || { tail -40 "$LOG" >&2; echo "docker build $* failed; whole log: $LOG" >&2; exit 1; }; }
t0=$(date +%s)

base_image() {
  if [ $rebuild_base = 0 ] && docker image inspect "$BASE" >/dev/null 2>&1; then echo "$BASE: present"; return; fi
  command -v debootstrap >/dev/null || { echo "debootstrap is missing: apt-get install debootstrap" >&2; exit 1; }
  local dir; dir=$(mktemp -d /var/tmp/cellsched-rootfs.XXXXXX)
  debootstrap --variant=minbase bookworm "$dir" "$MIRROR" >"$dir.log" 2>&1 || { tail -20 "$dir.log" >&2; exit 1; }
  # what a container never needs: downloaded packages, package lists, docs, man pages, locales
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/* "$dir"/usr/share/doc/* "$dir"/usr/share/man/* "$dir"/usr/share/locale/*
  tar --numeric-owner -C "$dir" -c . | docker import -c 'CMD ["bash"]' - "$BASE" >/dev/null
  rm -rf "$dir" "$dir.log"
  echo "$BASE: imported ($(docker image inspect -f '{{.Size}}' "$BASE" | awk '{printf "%d MB", $1/1e6}'))"
}

app_image() {
  local node_bin version ctx
  node_bin=$(command -v node); version=$("$node_bin" --version)
  case "$version" in v2[0-9].*) ;; *) echo "node $version on the host; cellsched needs >= 20.19" >&2; exit 1 ;; esac
  if [ $build = 1 ]; then (cd "$ROOT" && pnpm install --offline --frozen-lockfile && pnpm build); fi
  ctx=$(mktemp -d /var/tmp/cellsched-app.XXXXXX)
  "$HERE/bundle.sh" "$ctx/bundle"
  tar -C "$ctx/bundle" -cf "$ctx/bundle.tar" . && rm -rf "$ctx/bundle"
  cp "$node_bin" "$ctx/node"
  dbuild -f "$HERE/app/Dockerfile" --build-arg BASE="$BASE" -t cellsched/app:dev "$ctx"
  rm -rf "$ctx"
  echo "cellsched/app:dev: node $version ($(docker image inspect -f '{{.Size}}' cellsched/app:dev | awk '{printf "%d MB", $1/1e6}'))"
}

if [ $app_only = 1 ]; then step "app image"; app_image; rm -f "$LOG"; echo "app image built in $(( $(date +%s) - t0 )) s"; exit 0; fi
step "base image"; base_image
step "postgres image"; dbuild --build-arg BASE="$BASE" -t cellsched/postgres:dev "$HERE/postgres"; echo "cellsched/postgres:dev: built"
step "rabbitmq image"; dbuild --build-arg BASE="$BASE" -t cellsched/rabbitmq:dev "$HERE/rabbitmq"; echo "cellsched/rabbitmq:dev: built"
[ $infra_only = 1 ] || { step "app image"; app_image; }
rm -f "$LOG"
echo "images built in $(( $(date +%s) - t0 )) s"
