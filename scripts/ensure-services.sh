#!/usr/bin/env bash
# Make sure PostgreSQL and RabbitMQ run on 127.0.0.1 with the admin accounts that
# cellsched's tests and launcher use (install them with apt on a fresh Debian machine).
# Idempotent; needs root (or sudo) only when something is missing.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
apt_updated=0
apt_install() {
  [ $apt_updated = 1 ] || { $SUDO apt-get update -q; apt_updated=1; }
  $SUDO apt-get install -y -q --no-install-recommends "$@"
}

# PostgreSQL
command -v pg_ctlcluster >/dev/null || apt_install postgresql postgresql-contrib
if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  ver=$(ls /etc/postgresql | sort -n | tail -1)
  $SUDO pg_ctlcluster --skip-systemctl-redirect "$ver" main start
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi
# An admin role with a password works whatever pg_hba.conf says (trust or scram).
$SUDO su postgres -c "psql -q -v ON_ERROR_STOP=1" <<'SQL'
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'cellsched') THEN
    CREATE ROLE cellsched LOGIN SUPERUSER CREATEDB CREATEROLE PASSWORD 'cellsched';
  END IF;
END $$;
SQL
# max_connections: many services and parallel tests share one server.
cur=$($SUDO su postgres -c "psql -tAc 'show max_connections'")
if [ "$cur" -lt 500 ]; then
  $SUDO su postgres -c "psql -qc 'ALTER SYSTEM SET max_connections = 500'"
  ver=$(ls /etc/postgresql | sort -n | tail -1)
  $SUDO pg_ctlcluster --skip-systemctl-redirect "$ver" main restart
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi

# RabbitMQ
command -v rabbitmq-server >/dev/null || apt_install rabbitmq-server
if ! $SUDO rabbitmqctl -q status >/dev/null 2>&1; then
  $SUDO rabbitmq-server -detached
fi
$SUDO rabbitmqctl -q await_startup --timeout 120
# A running-but-stopped app (rabbitmqctl stop_app) is started too.
$SUDO rabbitmqctl -q start_app >/dev/null 2>&1 || true
# add_user directly (a list_users that fails transiently must not make us add it twice);
# "already exists" is success.
if ! out=$($SUDO rabbitmqctl -q add_user cellsched cellsched 2>&1); then
  grep -q 'already exists' <<<"$out" || { echo "$out" >&2; exit 1; }
fi
$SUDO rabbitmqctl -q set_user_tags cellsched administrator
$SUDO rabbitmqctl -q set_permissions -p / cellsched '.*' '.*' '.*'

# python3-gabbi runs Placement's own functional tests against our placement.
command -v gabbi-run >/dev/null || apt_install python3-gabbi python3-yaml
# The real OpenStack client: the e2e suite drives some commands with it (os-services delete).
command -v openstack >/dev/null || apt_install python3-openstackclient
echo "services ready: postgresql 127.0.0.1:5432 (cellsched/cellsched), rabbitmq 127.0.0.1:5672 (cellsched/cellsched)"
