#!/usr/bin/env bash
# Reproduce every measurement of FINDINGS.md in one go:
#   1. sdk_algorithm_check.py   - the ARMPolling algorithm, against a scripted stub (no npm needed)
#   2. run_autorest_sdk.py      - the SDK on all 81 autorest /lro routes, with and without cookies
#   3. run_spector_sdk.py       - the SDK on the 6 Spector ARM LROs
#
#   tests/third_party/run_all.sh [AUTOREST_PORT [SPECTOR_PORT]]     (defaults 3111 3112)
#
# Needs python3 with azure-mgmt-core (pip install azure-mgmt-core), node >= 20, npm, git.
# PYTHON selects the interpreter (default python3). Servers this script starts are stopped at the
# end; servers that were already running on those ports are reused and left running.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ap="${1:-3111}"
sp="${2:-3112}"
py="${PYTHON:-python3}"

"$py" -c "import azure.mgmt.core" 2>/dev/null || { echo "error: $py has no azure-mgmt-core (pip install azure-mgmt-core)" >&2; exit 1; }

answers() { node -e 'fetch(process.argv[1],{signal:AbortSignal.timeout(2000)}).then(r=>process.exit(r.status===200?0:1)).catch(()=>process.exit(1))' "$1"; }
started=()
cleanup() { for s in "${started[@]+"${started[@]}"}"; do "$here/${s%:*}" "${s#*:}" --stop >/dev/null || true; done; }
trap cleanup EXIT

answers "http://127.0.0.1:$ap/lro/put/201/creating/succeeded/200" || started+=("start_autorest.sh:$ap")
"$here/start_autorest.sh" "$ap"
answers "http://127.0.0.1:$sp/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/test-rg/providers/Azure.ResourceManager.Resources/topLevelTrackedResources/top?api-version=2023-12-01-preview" \
  || started+=("start_spector.sh:$sp")
"$here/start_spector.sh" "$sp"

status=0
echo "== ARMPolling algorithm (stub server)"
"$py" "$here/sdk_algorithm_check.py" --python "$py" | tail -1 || status=1
echo "== autorest /lro routes, cookies kept"
"$py" "$here/run_autorest_sdk.py" "http://127.0.0.1:$ap" --python "$py" 2>&1 | grep -v '^ok ' || status=1
echo "== autorest /lro routes, cookies refused"
"$py" "$here/run_autorest_sdk.py" "http://127.0.0.1:$ap" --python "$py" --no-cookies 2>&1 | grep -v '^ok ' || status=1
echo "== Spector ARM LROs"
"$py" "$here/run_spector_sdk.py" "http://127.0.0.1:$sp" --python "$py" 2>&1 | grep -v '^ok ' || status=1
exit $status
