#!/bin/sh
# First start: a cluster in $PGDATA whose superuser `postgres` has $POSTGRES_PASSWORD, reachable
# from the compose network with a password (scram). Then PostgreSQL in the foreground with the
# command's options (compose passes `-c max_connections=N`, sized to the services' pools).
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}" > "$pwfile"
  initdb -D "$PGDATA" -U postgres --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  echo 'host all all all scram-sha-256' >> "$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
  echo "cellsched-postgres: initialized $PGDATA"
fi
exec "$@"
