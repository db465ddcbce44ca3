#!/bin/bash
# Drive a live cellsched Placement with Debian's `openstack resource provider ...` client
# (python3-osc-placement) through provider, inventory, trait, aggregate, allocation and
# usage commands. Usage: osc-check.sh [ENDPOINT] (default http://127.0.0.1:8778).
# Exits non-zero at the first command that fails; prints every command it runs.
set -euo pipefail
export OS_AUTH_TYPE=admin_token OS_TOKEN=admin OS_ENDPOINT=${1:-http://127.0.0.1:8778} OS_PLACEMENT_API_VERSION=1.39
run() { echo "+ openstack $*" >&2; openstack "$@"; }
RP=$(python3 -c 'import uuid; print(uuid.uuid4())'); CHILD=$(python3 -c 'import uuid; print(uuid.uuid4())')
AGG=$(python3 -c 'import uuid; print(uuid.uuid4())'); VM=$(python3 -c 'import uuid; print(uuid.uuid4())')
CUSTOM=CUSTOM_OSC_$(python3 -c 'import uuid; print(uuid.uuid4().hex[:8].upper())')
PROJECT=$(python3 -c 'import uuid; print(uuid.uuid4())'); USER_ID=$(python3 -c 'import uuid; print(uuid.uuid4())')
run resource provider create "osc-cn-$RP" --uuid "$RP"
run resource provider create "osc-numa-$CHILD" --uuid "$CHILD" --parent-provider "$RP"
run resource provider list --in-tree "$RP"
run resource provider show "$RP" --allocations
run resource provider set "$RP" --name "osc-renamed-$RP"
run resource provider inventory set "$RP" --resource VCPU=16 --resource VCPU:allocation_ratio=2.0 --resource MEMORY_MB=8192 --resource MEMORY_MB:reserved=512
run resource provider inventory set "$RP" --amend --resource DISK_GB=100 --resource DISK_GB:max_unit=50
run resource provider inventory class set "$RP" VCPU --total 32 --allocation_ratio 2.0
run resource provider inventory list "$RP"
run resource provider inventory show "$RP" VCPU
run resource class create $CUSTOM
run resource class list -f value -c name | grep -q $CUSTOM
run trait create $CUSTOM
run resource provider trait set "$RP" --trait $CUSTOM --trait HW_CPU_X86_AVX2
run resource provider trait list "$RP"
run resource provider list --required $CUSTOM
run resource provider aggregate set "$RP" --aggregate "$AGG" --generation "$(openstack resource provider show "$RP" -f value -c generation)"
run resource provider aggregate list "$RP"
run resource provider list --member-of "$AGG"
run resource provider allocation set "$VM" --allocation "rp=$RP,VCPU=4,MEMORY_MB=2048" --project-id "$PROJECT" --user-id "$USER_ID" --consumer-type INSTANCE
run resource provider allocation show "$VM"
run resource provider usage show "$RP"
run resource usage show "$PROJECT"
run allocation candidate list --resource VCPU=2 --required $CUSTOM
run resource provider allocation delete "$VM"
run resource provider trait delete "$RP"
run resource provider inventory delete "$RP" --resource-class DISK_GB
run resource provider inventory delete "$RP"
run resource provider delete "$CHILD"
run resource provider delete "$RP"
run trait delete $CUSTOM
run resource class delete $CUSTOM
echo "osc-check: all commands succeeded against $OS_ENDPOINT" >&2
