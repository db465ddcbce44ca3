#!/usr/bin/env bash
# What the e2e scripts that drive a running cellsched with the real OpenStack client share
# (e2e/clients/*.sh, e2e/moves/*.sh). Each sources it first, with its own arguments:
#   . "$(dirname "$0")/../clients/lib.sh" "$@"
# $1 the compute API (default http://127.0.0.1:8774/v2.1), $2 placement (default
# http://127.0.0.1:8778); CELLSCHED_IMAGE the image servers boot, CELLSCHED_CLIENT_WAIT_S how
# long a server may take to settle (default 120 s). Sets no shell option: the scripts do.
COMPUTE=${1:-http://127.0.0.1:8774/v2.1}
PLACEMENT=${2:-http://127.0.0.1:8778}
IMAGE=${CELLSCHED_IMAGE:-155d900f-4e14-4e4c-a73d-069cbf4541e6}
WAIT_S=${CELLSCHED_CLIENT_WAIT_S:-120}

# The clients as an administrator (noauth2's token): compute at 2.60, placement (osc-placement) at 1.28.
os() { openstack --os-auth-type admin_token --os-token admin --os-endpoint "$COMPUTE" --os-compute-api-version 2.60 "$@"; }
osp() { openstack --os-auth-type admin_token --os-token admin --os-placement-api-version 1.28 --os-endpoint "$PLACEMENT" "$@"; }
step() { printf '\n== %s\n' "$*"; }
fail() { printf 'FAILED: %s\n' "$*" >&2; exit 1; }
expect_eq() { [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"; echo "$3: $1"; }
expect_ne() { [ "$1" != "$2" ] || fail "$3: expected other than '$2'"; echo "$3: $1 (was $2)"; }

# The checks read the APIs directly (one HTTP call each, not a client start-up per value).
api_get() { curl -sf -H 'X-Auth-Token: admin' -H 'OpenStack-API-Version: compute 2.60' "$COMPUTE$1"; }
# api_post VERSION PATH BODY: a request the client has no command for.
api_post() { curl -sf -X POST -H 'X-Auth-Token: admin' -H "OpenStack-API-Version: compute $1" -H 'Content-Type: application/json' -d "$3" "$COMPUTE$2"; }
pl_get() { curl -sf -H 'X-Auth-Token: admin' -H 'OpenStack-API-Version: placement 1.28' "$PLACEMENT$1"; }
# field KEY: one key of the JSON object on stdin (an object or a list as JSON, keys sorted).
field() { python3 -c "import json,sys; v=json.load(sys.stdin)[sys.argv[1]]; print(json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v)" "$1"; }

# server_show SERVER WHAT: what the API shows of the server: status, host, node (hypervisor
# hostname), flavor (its original_name), fault (its message) or host_status; None for no host.
server_show() {
  api_get "/servers/$1" | python3 -c "
import json, sys
s = json.load(sys.stdin)['server']
print({'status': s['status'], 'host': s.get('OS-EXT-SRV-ATTR:host') or 'None', 'node': s.get('OS-EXT-SRV-ATTR:hypervisor_hostname') or 'None',
       'flavor': s['flavor'].get('original_name', ''), 'fault': (s.get('fault') or {}).get('message', ''), 'host_status': s.get('host_status', '-')}[sys.argv[1]])" "$2"
}

# settle SERVER WANT: waits (WAIT_S at most) until the server is ACTIVE or ERROR; fails unless it is WANT.
settle() {
  local deadline=$((SECONDS + WAIT_S)) s
  while :; do
    s=$(server_show "$1" status)
    [ "$s" = ACTIVE ] || [ "$s" = ERROR ] && break
    [ $SECONDS -ge $deadline ] && fail "server $1 still $s after ${WAIT_S}s"
    sleep 1
  done
  [ "$s" = "$2" ] || fail "server $1 is $s, expected $2 ($(server_show "$1" fault))"
}
