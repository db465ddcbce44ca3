#!/usr/bin/env bash
# Host aggregates and availability zones through the real OpenStack client (Debian's
# python3-openstackclient), as an operator types them, against a running cellsched:
#   e2e/clients/aggregates.sh [COMPUTE_ENDPOINT] [PLACEMENT_ENDPOINT]
# defaults http://127.0.0.1:8774/v2.1 and http://127.0.0.1:8778. Needs >= 2 enabled hosts and
# no aggregate named agg1 (nor zones az1, az2).
# aggregate create --zone, list --long, show, set --property --zone, add host (again: 409; an
# unknown host: 404), availability zone list --long, server create --availability-zone landing
# on the aggregate's host, delete refused while hosts remain, remove host, delete. After each
# aggregate step, placement's aggregates of the host's compute node resource provider must hold
# the aggregate's uuid exactly while the host is a member (Nova's mirroring). Deletes what it
# made. Exits non-zero at the first difference, printing it.
set -euo pipefail
. "$(dirname "$0")/lib.sh" "$@"
SERVER=''
cleanup() {
  for s in $SERVER $(os server list --name '^agg-az-server$' -f value -c ID 2>/dev/null || true); do os server delete --wait "$s" >/dev/null 2>&1 || true; done
  [ -n "${HOST:-}" ] && os aggregate remove host agg1 "$HOST" >/dev/null 2>&1 || true
  os aggregate delete agg1 >/dev/null 2>&1 || true
}
trap cleanup EXIT

# placement_holds yes|no: whether the host's provider lists the aggregate's uuid.
placement_holds() {
  local aggs
  aggs=$(pl_get "/resource_providers/$RP/aggregates" | field aggregates)
  case "$aggs" in
    *"$UUID"*) [ "$1" = yes ] || fail "placement still lists aggregate $UUID on $HOST's provider $RP: $aggs" ;;
    *) [ "$1" = no ] || fail "placement does not list aggregate $UUID on $HOST's provider $RP: $aggs" ;;
  esac
  echo "placement: provider $RP aggregates $aggs"
}
# refused STATUS CMD...: the client command fails, with that HTTP status in its message.
refused() {
  local want=$1 out; shift
  if out=$("$@" 2>&1); then fail "'$*' succeeded, expected HTTP $want"; fi
  case "$out" in *"$want"*) echo "refused: $out" ;; *) fail "'$*' failed without HTTP $want: $out" ;; esac
}
zone_hosts() { # zone_hosts ZONE: the hosts `availability zone list --long` shows in it
  os availability zone list --compute --long -f json | python3 -c "import json,sys; print(' '.join(sorted({z['Host Name'] for z in json.load(sys.stdin) if z['Zone Name'] == sys.argv[1] and z['Host Name']})))" "$1"
}

step "the host: first compute node of the stack"
read -r HOST RP < <(api_get /os-hypervisors/detail | python3 -c "import json,sys; h=sorted(json.load(sys.stdin)['hypervisors'], key=lambda h: h['service']['host'])[0]; print(h['service']['host'], h['id'])")
echo "host $HOST, resource provider $RP"

step "openstack aggregate create --zone az1 agg1"
OUT=$(os aggregate create --zone az1 agg1 -f json)
[ "$(field name <<<"$OUT")" = agg1 ] || fail "created: $OUT"
[ "$(field availability_zone <<<"$OUT")" = az1 ] || fail "created without its zone: $OUT"
UUID=$(os aggregate show agg1 -f json | field uuid)
[[ "$UUID" =~ ^[0-9a-f-]{36}$ ]] || fail "aggregate show gave no uuid: $UUID"
echo "agg1 $UUID"
placement_holds no

step "openstack aggregate list --long"
os aggregate list --long -f json | python3 -c "
import json,sys
rows=[a for a in json.load(sys.stdin) if a['Name'] == 'agg1']
assert len(rows) == 1 and rows[0]['Availability Zone'] == 'az1' and rows[0]['Hosts'] == [], rows
" || fail "aggregate list --long does not show agg1 in az1 without hosts"

step "openstack aggregate show agg1"
OUT=$(os aggregate show agg1 -f json)
[ "$(field hosts <<<"$OUT")" = '[]' ] && [ "$(field availability_zone <<<"$OUT")" = az1 ] || fail "show: $OUT"

step "openstack aggregate set --property foo=bar --zone az2 agg1"
os aggregate set --property foo=bar --zone az2 agg1
OUT=$(os aggregate show agg1 -f json)
[ "$(field availability_zone <<<"$OUT")" = az2 ] || fail "zone not az2: $OUT"
[ "$(field properties <<<"$OUT")" = '{"foo": "bar"}' ] || fail "properties: $OUT"
placement_holds no

step "openstack aggregate add host agg1 $HOST"
OUT=$(os aggregate add host agg1 "$HOST" -f json)
[ "$(field hosts <<<"$OUT")" = "[\"$HOST\"]" ] || fail "add host answered: $OUT"
[ "$(os aggregate show agg1 -f json | field hosts)" = "[\"$HOST\"]" ] || fail "agg1 does not hold $HOST"
placement_holds yes

step "openstack aggregate add host agg1 $HOST again: 409; an unknown host: 404"
refused 409 os aggregate add host agg1 "$HOST"
refused 404 os aggregate add host agg1 no-such-host
[ "$(os aggregate show agg1 -f json | field hosts)" = "[\"$HOST\"]" ] || fail "a refused add changed agg1's hosts"
placement_holds yes

step "openstack availability zone list --long"
[ "$(zone_hosts az2)" = "$HOST" ] || fail "az2 holds '$(zone_hosts az2)', expected $HOST"
case " $(zone_hosts nova) " in *" $HOST "*) fail "$HOST still listed in nova" ;; esac
[ -n "$(zone_hosts nova)" ] || fail "no host left in the default zone nova"
ZONES=$(os availability zone list --compute -f value -c 'Zone Name' -c 'Zone Status')
grep -qx 'az2 available' <<<"$ZONES" || fail "az2 is not listed as available: $ZONES"

step "openstack server create --availability-zone az2: on $HOST"
SERVER=$(os server create --flavor 1 --image "$IMAGE" --network none --availability-zone az2 -f value -c id agg-az-server)
settle "$SERVER" ACTIVE
OUT=$(api_get "/servers/$SERVER" | field server)
[ "$(field OS-EXT-SRV-ATTR:host <<<"$OUT")" = "$HOST" ] || fail "server on $(field OS-EXT-SRV-ATTR:host <<<"$OUT"), not $HOST"
[ "$(field OS-EXT-AZ:availability_zone <<<"$OUT")" = az2 ] || fail "server zone: $OUT"
ALLOC=$(pl_get "/allocations/$SERVER" | field allocations)
grep -q "$RP" <<<"$ALLOC" || fail "placement holds no allocation of $SERVER on $RP"
echo "$SERVER on $HOST in az2"

step "openstack aggregate delete agg1 while it has a host: 400"
refused 400 os aggregate delete agg1
placement_holds yes

step "openstack server delete"
os server delete --wait "$SERVER" >/dev/null
SERVER=''

step "openstack aggregate remove host agg1 $HOST"
OUT=$(os aggregate remove host agg1 "$HOST" -f json)
[ "$(field hosts <<<"$OUT")" = '[]' ] || fail "remove host answered: $OUT"
placement_holds no
[ -z "$(zone_hosts az2)" ] || fail "az2 still lists $(zone_hosts az2)"

step "openstack aggregate delete agg1"
os aggregate delete agg1
[ -z "$(os aggregate list -f value -c Name | grep -x agg1 || true)" ] || fail "agg1 still listed"
placement_holds no

echo
echo "aggregates: every step passed"
