#!/usr/bin/env bash
# Make sure a Docker engine runs and docker-compose (v1, Debian's) and debootstrap are installed,
# installing Debian's packages when absent (docker.io 20.10, docker-compose 1.29): what the compose
# e2e and deploy/images/build.sh need. Starts dockerd in the background (log /var/log/cellsched-dockerd.log)
# when nothing answers on its socket. Idempotent; needs root (or sudo) only when something is missing.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v docker-compose >/dev/null || missing+=(docker-compose)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if ! $SUDO docker info >/dev/null 2>&1; then
  $SUDO sh -c 'nohup dockerd >/var/log/cellsched-dockerd.log 2>&1 &'
  for _ in $(seq 1 60); do $SUDO docker info >/dev/null 2>&1 && break; sleep 1; done
  $SUDO docker info >/dev/null 2>&1 || { tail -20 /var/log/cellsched-dockerd.log >&2; echo "dockerd did not start" >&2; exit 1; }
fi
echo "docker ready: engine $($SUDO docker version -f '{{.Server.Version}}'), $(docker-compose version --short 2>/dev/null | sed 's/^/docker-compose /')"
