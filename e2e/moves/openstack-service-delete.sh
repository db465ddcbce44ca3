#!/usr/bin/env bash
# `openstack compute service delete` as Nova answers it, with the real OpenStack client (Debian's
# python3-openstackclient and osc-placement), against a running cellsched that it may shrink:
#   e2e/moves/openstack-service-delete.sh [COMPUTE_ENDPOINT] [PLACEMENT_ENDPOINT]
# defaults http://127.0.0.1:8774/v2.1 and http://127.0.0.1:8778. Needs >= 2 compute hosts in one
# cell, and DELETES TWO OF THEM (run it on a throwaway stack). Nova deletes the host's resource
# providers before it answers: the moment the command returns, neither `compute service list`
# nor `resource provider show` may find the host; a host with a server is refused (409).
set -euo pipefail
. "$(dirname "$0")/../clients/lib.sh" "$@"
# host -> "<service uuid> <compute node uuid = resource provider uuid>"
ids_of() {
  api_get /os-hypervisors/detail | python3 -c "
import json, sys
for h in json.load(sys.stdin)['hypervisors']:
    if h['service']['host'] == sys.argv[1]: print(h['service']['id'], h['id'])" "$1" | head -1
}
listed() { os compute service list --service nova-compute -f value -c Host | grep -cx "$1" || true; }
provider_exists() { if osp resource provider show "$1" >/dev/null 2>&1; then echo yes; else echo no; fi; }

step "server create --wait"
SERVER=$(os server create --flavor 1 --image "$IMAGE" --network none --wait -f value -c id "svcdel-$$-$RANDOM" | tr -d "\r" | grep -Eo "[0-9a-f-]{36}" | tail -1)
BUSY=$(api_get "/servers/$SERVER" | python3 -c "import json,sys; print(json.load(sys.stdin)['server']['OS-EXT-SRV-ATTR:host'])")
read -r BUSY_SVC BUSY_RP <<<"$(ids_of "$BUSY")"
# An idle host: one no server is on (any status), as the API's delete check sees it
idle_host() { api_get /os-hypervisors/detail | python3 -c "
import json, sys
busy = set(sys.argv[2].split())
print(next((h['service']['host'] for h in json.load(sys.stdin)['hypervisors'] if h['service']['host'] != sys.argv[1] and h['service']['host'] not in busy), ''))" "$BUSY" "$(api_get '/servers/detail?all_tenants=1' | python3 -c "import json,sys; print(' '.join(s.get('OS-EXT-SRV-ATTR:host') or '' for s in json.load(sys.stdin)['servers']))")"; }
IDLE=
for _ in $(seq 30); do IDLE=$(idle_host); [ -n "$IDLE" ] && break; sleep 1; done
[ -n "$IDLE" ] || fail "no host other than $BUSY without instances"
read -r IDLE_SVC IDLE_RP <<<"$(ids_of "$IDLE")"
echo "server $SERVER on $BUSY (service $BUSY_SVC, provider $BUSY_RP); idle host $IDLE (service $IDLE_SVC, provider $IDLE_RP)"

step "compute service delete $BUSY (hosting the server): Nova's 409, nothing deleted"
if out=$(os compute service delete "$BUSY_SVC" 2>&1); then fail "deleting $BUSY's service succeeded while it hosts $SERVER"; fi
case "$out" in *"Unable to delete compute service that is hosting instances"*) echo "refused: $out";; *) fail "unexpected answer: $out";; esac
[ "$(listed "$BUSY")" = 1 ] || fail "$BUSY's service is gone after the refusal"
[ "$(provider_exists "$BUSY_RP")" = yes ] || fail "$BUSY's provider is gone after the refusal"

step "compute service delete $IDLE: when it returns, the service and its resource provider are gone"
os compute service delete "$IDLE_SVC"
[ "$(listed "$IDLE")" = 0 ] || fail "$IDLE still in compute service list"
[ "$(provider_exists "$IDLE_RP")" = no ] || fail "$IDLE's resource provider $IDLE_RP still in placement right after the delete"
echo "service and provider of $IDLE gone"

step "server delete --wait, then compute service delete $BUSY"
os server delete --wait "$SERVER"
os compute service delete "$BUSY_SVC"
[ "$(listed "$BUSY")" = 0 ] || fail "$BUSY still in compute service list"
[ "$(provider_exists "$BUSY_RP")" = no ] || fail "$BUSY's resource provider still in placement right after the delete"
echo; echo "openstack-service-delete: every step passed"
