#!/usr/bin/env bash
# The same_host and different_host scheduler hints through the real OpenStack client (Debian's
# python3-openstackclient), as a user types them, against a running cellsched:
#   e2e/clients/host-hints.sh [COMPUTE_ENDPOINT] [PLACEMENT_ENDPOINT]
# defaults http://127.0.0.1:8774/v2.1 and http://127.0.0.1:8778. Needs >= 2 enabled hosts.
# Boots a server, then servers with --hint same_host=<it> (each on its host) and
# --hint different_host=<it> (each elsewhere), checks that placement holds each server's
# allocation on the compute node of the host the server shows, and that a same_host naming no
# server ends in ERROR with NoValidHost; deletes what it made. Exits non-zero at the first
# difference, printing it.
set -euo pipefail
. "$(dirname "$0")/lib.sh" "$@"
show() { server_show "$@"; }
MADE=()
cleanup() { [ ${#MADE[@]} -eq 0 ] || os server delete --wait "${MADE[@]}" >/dev/null 2>&1 || true; }
trap cleanup EXIT

ID=
create() { # create NAME [HINT...]: sets ID to the new server's id (not in a subshell: MADE must keep it for the cleanup)
  local name=$1; shift
  local args=()
  for h in "$@"; do args+=(--hint "$h"); done
  ID=$(os server create --flavor 1 --image "$IMAGE" --network none "${args[@]}" -f value -c id "$name")
  MADE+=("$ID")
}

# Placement holds the server's allocation on the compute node the server shows (a compute
# node's resource provider is named after its hypervisor_hostname, as in Nova).
allocated_on_node() { # allocated_on_node SERVER
  local rp
  rp=$(pl_get "/allocations/$1" | python3 -c "import json,sys; a=json.load(sys.stdin)['allocations']; print(' '.join(a))")
  [ -n "$rp" ] || fail "placement holds no allocation of $1"
  local name node
  name=$(pl_get "/resource_providers/$rp" | python3 -c "import json,sys; print(json.load(sys.stdin)['name'])")
  node=$(show "$1" node)
  [ "$name" = "$node" ] || fail "placement holds $1 on $name, the server shows $node"
}

step "a first server"
create hint-first
FIRST=$ID
settle "$FIRST" ACTIVE
HOME_HOST=$(show "$FIRST" host)
echo "on $HOME_HOST"

# hinted NAME HINT WHERE: three servers with --hint HINT=$FIRST, each ACTIVE on $HOME_HOST (WHERE
# on) or elsewhere (WHERE off), placement agreeing
hinted() {
  local i s h
  for i in 1 2 3; do
    create "$1-$i" "$2=$FIRST"
    s=$ID
    settle "$s" ACTIVE
    h=$(show "$s" host)
    if [ "$3" = on ]; then [ "$h" = "$HOME_HOST" ] || fail "$2 server $s on $h, not $HOME_HOST"
    else [ "$h" != "$HOME_HOST" ] || fail "$2 server $s on $HOME_HOST"; fi
    allocated_on_node "$s"
    echo "$s on $h"
  done
}

step "openstack server create --hint same_host=$FIRST (x3)"
hinted hint-same same_host on

step "openstack server create --hint different_host=$FIRST (x3)"
hinted hint-apart different_host off

step "openstack server create --hint same_host=<no such server>: NoValidHost"
create hint-nowhere "same_host=$(python3 -c 'import uuid; print(uuid.uuid4())')"
S=$ID
settle "$S" ERROR
FAULT=$(show "$S" fault)
case "$FAULT" in *"No valid host"*) echo "ERROR: $FAULT" ;; *) fail "fault is '$FAULT', expected No valid host" ;; esac

step "openstack server create --hint different_host=<not a uuid>: refused, nothing made"
if os server create --flavor 1 --image "$IMAGE" --network none --hint different_host=not-a-uuid hint-bad >/tmp/hint-bad.$$ 2>&1; then
  fail "a different_host that is not a uuid was accepted"
fi
grep -q "400" /tmp/hint-bad.$$ || fail "expected HTTP 400, got: $(cat /tmp/hint-bad.$$)"
rm -f /tmp/hint-bad.$$
[ -z "$(os server list --name '^hint-bad$' -f value -c ID)" ] || fail "the refused create left a server"

step "openstack server delete --wait: every server this script made"
os server delete --wait "${MADE[@]}"
MADE=()
[ -z "$(os server list --name '^hint-' -f value -c ID)" ] || fail "servers left after the delete: $(os server list --name '^hint-' -f value -c ID | tr '\n' ' ')"

echo
echo "host-hints: every step passed"
