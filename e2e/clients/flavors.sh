#!/usr/bin/env bash
# The flavor commands of the real OpenStack client (Debian's python3-openstackclient), as an
# operator types them, against a running cellsched compute API (issue 16):
#   e2e/clients/flavors.sh [COMPUTE_ENDPOINT]        default http://127.0.0.1:8774/v2.1
# create (public with every option, private with an id), list (--long, --all, --private), show,
# set/unset --property and --no-property, set --description (2.55+), set/unset --project and
# create --private --project (flavor access), delete; and what Nova refuses (a name in use: 409,
# an extra spec of a flavor that has none). Each step checks what the client printed. The
# --project steps need Keystone (the client looks the project up there first), so they go through
# e2e/clients/keystone-standin.py, whose catalog points at the same compute endpoint. Flavor names
# carry this run's id and are deleted at the end, so the script can run against any stack, again.
# Exits non-zero at the first difference, printing it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" "$@"
RUN=${CELLSCHED_FLAVORS_RUN:-$$}
# show_field FLAVOR FIELD: one field of `flavor show -f json`, as JSON (dicts and lists sorted).
show_field() { os flavor show -f json "$1" | python3 -c "import json,sys; print(json.dumps(json.load(sys.stdin)[sys.argv[1]], sort_keys=True))" "$2"; }
# listed ARGS...: the names `flavor list ARGS` prints, sorted, space-separated.
listed() { os flavor list -f json "$@" | python3 -c "import json,sys; print(' '.join(sorted(f['Name'] for f in json.load(sys.stdin))))"; }
has() { case " $1 " in *" $2 "*) return 0 ;; *) return 1 ;; esac; }

PUB=f-pub-$RUN PRIV=f-priv-$RUN PRIV2=f-priv2-$RUN PRIV_ID=fp-$RUN
KS_DIR=$(mktemp -d)
KS_PID=
cleanup() {
  [ -n "$KS_PID" ] && kill "$KS_PID" 2>/dev/null || true
  rm -rf "$KS_DIR"
  for f in "$PUB" "$PRIV" "$PRIV2"; do os flavor delete "$f" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT

step "flavor create (public, every option) $PUB"
os flavor create --ram 512 --vcpus 2 --disk 1 --ephemeral 3 --swap 128 --rxtx-factor 2.0 --description "made by flavors.sh" "$PUB"
expect_eq "$(show_field "$PUB" ram) $(show_field "$PUB" vcpus) $(show_field "$PUB" disk) $(show_field "$PUB" OS-FLV-EXT-DATA:ephemeral) $(show_field "$PUB" swap)" "512 2 1 3 128" "ram vcpus disk ephemeral swap"
expect_eq "$(show_field "$PUB" rxtx_factor) $(show_field "$PUB" os-flavor-access:is_public)" "2.0 true" "rxtx_factor is_public"
expect_eq "$(show_field "$PUB" description)" '"made by flavors.sh"' "description"
PUB_ID=$(show_field "$PUB" id | tr -d '"')
python3 -c "import sys, uuid; uuid.UUID(sys.argv[1])" "$PUB_ID" || fail "a flavor created without --id should have a uuid, got $PUB_ID"
echo "id: $PUB_ID (generated)"

step "flavor create: a name in use is Nova's 409"
if out=$(os flavor create --ram 64 "$PUB" 2>&1); then fail "a second $PUB was created"; fi
case "$out" in *409*"Flavor with name $PUB already exists."*) echo "refused: $out" ;; *) fail "unexpected answer: $out" ;; esac

step "flavor list / --long"
has "$(listed)" "$PUB" || fail "flavor list does not show $PUB"
os flavor list --long | grep -F " $PUB " || fail "flavor list --long does not show $PUB"

step "flavor set --property (two) / unset --property (one) / set --no-property"
os flavor set --property hw:cpu_policy=dedicated --property hw:mem_page_size=large "$PUB"
expect_eq "$(show_field "$PUB" properties)" '{"hw:cpu_policy": "dedicated", "hw:mem_page_size": "large"}' "properties"
os flavor unset --property hw:mem_page_size "$PUB"
expect_eq "$(show_field "$PUB" properties)" '{"hw:cpu_policy": "dedicated"}' "properties"
os flavor set --no-property "$PUB"
expect_eq "$(show_field "$PUB" properties)" '{}' "properties"
if out=$(os flavor unset --property hw:nothing "$PUB" 2>&1); then fail "unset of a property the flavor does not have succeeded"; fi
case "$out" in *"has no extra specs with key hw:nothing"*) echo "refused: $out" ;; *) fail "unexpected answer: $out" ;; esac

step "flavor set --description (2.55+)"
os flavor set --description "changed" "$PUB"
expect_eq "$(show_field "$PUB" description)" '"changed"' "description"

step "flavor create --private --id $PRIV_ID $PRIV"
os flavor create --private --id "$PRIV_ID" --ram 256 --vcpus 1 --disk 0 "$PRIV"
expect_eq "$(show_field "$PRIV" id) $(show_field "$PRIV" os-flavor-access:is_public)" "\"$PRIV_ID\" false" "id is_public"
expect_eq "$(show_field "$PRIV" access_project_ids)" '[]' "access_project_ids"
if has "$(listed)" "$PRIV"; then fail "flavor list (public only) shows the private $PRIV"; fi
has "$(listed --private)" "$PRIV" || fail "flavor list --private does not show $PRIV"
if has "$(listed --private)" "$PUB"; then fail "flavor list --private shows the public $PUB"; fi
has "$(listed --all)" "$PRIV" || fail "flavor list --all does not show $PRIV"
has "$(listed --all)" "$PUB" || fail "flavor list --all does not show $PUB"
echo "listed as Nova lists them: public by default, --private, --all"

step "flavor set/unset --project, create --private --project (through the Keystone stand-in)"
python3 "$HERE/keystone-standin.py" "$COMPUTE" "$KS_DIR/port" & KS_PID=$!
for _ in $(seq 50); do [ -s "$KS_DIR/port" ] && break; sleep 0.1; done
[ -s "$KS_DIR/port" ] || fail "the Keystone stand-in did not start"
kos() {
  openstack --os-auth-type v3password --os-auth-url "http://127.0.0.1:$(cat "$KS_DIR/port")/v3" --os-username admin --os-password admin \
    --os-project-name admin --os-user-domain-name Default --os-project-domain-name Default --os-compute-api-version 2.60 "$@"
}
kos flavor set --project demo "$PRIV"
expect_eq "$(show_field "$PRIV" access_project_ids)" '["demo"]' "access_project_ids"
kos flavor set --project other "$PRIV"
expect_eq "$(show_field "$PRIV" access_project_ids)" '["demo", "other"]' "access_project_ids"
kos flavor unset --project demo "$PRIV"
expect_eq "$(show_field "$PRIV" access_project_ids)" '["other"]' "access_project_ids"
if out=$(kos flavor unset --project demo "$PRIV" 2>&1); then fail "a second unset --project demo succeeded"; fi
case "$out" in *"Flavor access not found for $PRIV_ID / demo combination."*) echo "refused: $out" ;; *) fail "unexpected answer: $out" ;; esac
kos flavor create --private --project demo --ram 128 "$PRIV2"
expect_eq "$(show_field "$PRIV2" access_project_ids)" '["demo"]' "access_project_ids"

step "flavor delete $PUB $PRIV $PRIV2"
os flavor delete "$PUB" "$PRIV" "$PRIV2"
all=$(listed --all)
for f in "$PUB" "$PRIV" "$PRIV2"; do if has "$all" "$f"; then fail "$f is still listed"; fi; done
if os flavor show "$PUB" >/dev/null 2>&1; then fail "flavor show $PUB still finds it"; fi
echo "gone"

printf '\nopenstack-flavors: every step passed\n'
