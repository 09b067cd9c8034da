#!/usr/bin/env bash
# Figures of the rpconform runner, from one invocation, printed as ratios (127.0.0.1 only):
#   (1) real time: wall / longest test, full suites against the embedded RP at time scale 1;
#   (2) CPU µs per checked request against a local reference RP (`rpconform serve`, its own
#       process), and the ratio to Hurl 8.0.1 doing the same requests and checks, both reusing
#       connections (when `hurl` is installed; the bench says when it is not);
#   (3) scale: CPU ms per scenario and peak RSS at 500, 5 000 and 50 000 scenarios (a create
#       and a read each, waits scaled to ~0), and the growth of CPU per scenario;
#   (4) cost: `plan`'s PUTs and requests against what the README run sends (its HAR),
#       `--coverage min` against the full run (tests, PUTs, requests, rules judged), and the
#       accelerated run's wall (×0.05) against the certification run's (time scale 1, the same
#       `--hold-reads 3`) × 0.05 — when (1) runs, it is the certification run.
# Builds --release once (BENCH_SKIP_BUILD=1 reuses the binary). Every run is bounded.
#
# Usage: bench/bench.sh   (needs python3; GNU time at /usr/bin/time for CPU and RSS)
#   BENCH_SIZES="500 5000"   scales to measure (default "500 5000 50000")
#   BENCH_SKIP_REAL=1        skip (1), which takes as long as the longest test (~1 min)
#   BENCH_INSTALL_HURL=1     `cargo install hurl --version 8.0.1` when hurl is missing (it builds
#                            against libcurl4-openssl-dev, libxml2-dev and libclang-dev)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
RUN_LIMIT=${RUN_LIMIT:-3600}
SIZES=${BENCH_SIZES:-"500 5000 50000"}
REQS=${BENCH_REQUESTS:-2000}
command -v python3 >/dev/null || { echo "bench.sh needs python3 to read the reports" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench.sh needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 2; }

if [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
    echo "building rpconform --release (once)..." >&2
    cargo build --release --quiet --bin rpconform >&2
fi
BIN=$TARGET_DIR/release/rpconform
[ -x "$BIN" ] || { echo "no binary at $BIN" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rpconform-bench.XXXXXX")
SERVE_PID=
cleanup() {
    [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# measure NAME CMD...: run bounded by RUN_LIMIT; sets WALL_S, CPU_S, PEAK_KB, CODE.
measure() {
    local name=$1
    shift
    local start end
    start=$(date +%s.%N)
    CODE=0
    /usr/bin/time -f '%U %S %M' -o "$WORK/$name.time" timeout "$RUN_LIMIT" "$@" >"$WORK/$name.out" 2>&1 || CODE=$?
    end=$(date +%s.%N)
    read -r U S PEAK_KB <"$WORK/$name.time" || true
    CPU_S=$(python3 -c "print(f'{$U + $S:.3f}')")
    WALL_S=$(python3 -c "print(f'{$end - $start:.3f}')")
    if [ "$CODE" -eq 124 ] || [ "$CODE" -eq 2 ]; then
        echo "run $name did not complete (exit $CODE):" >&2
        tail -20 "$WORK/$name.out" >&2
        exit 1
    fi
}

# report DIR EXPR: a Python expression over report.json (`r`) and its results (`res`).
report() {
    python3 - "$1/report.json" "$2" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
res = r["results"]
print(eval(sys.argv[2]))
EOF
}

# (1) Real time, default settings.
if [ "${BENCH_SKIP_REAL:-0}" != 1 ]; then
    measure real "$BIN" run suites -q --report-dir "$WORK/real"
    R=$(report "$WORK/real" '"%.1f %s %d %s" % (max(x["duration_ms"] for x in res) / 1000, max(res, key=lambda x: x["duration_ms"])["name"], len(res), ",".join(f"{v}_{k}" for k, v in r["counts"].items() if v and isinstance(v, int)))')
    read -r LONGEST LNAME NTESTS RCOUNTS <<<"$R"
    python3 -c "print(f'(1) real time, full suites, embedded RP, time scale 1, default settings: wall {$WALL_S:.1f} s / longest test {$LONGEST:.1f} s ($LNAME) = {$WALL_S / $LONGEST:.3f}  [$NTESTS tests: $RCOUNTS]')"
fi

# (2) CPU per checked request: the same requests and checks from rpconform and from Hurl,
# against one reference RP in its own process (so each client's CPU is its own).
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$BIN" serve --port "$PORT" --op-duration 0 --write-target "$WORK/served.yaml" >"$WORK/serve.out" 2>&1 &
SERVE_PID=$!
for _ in $(seq 100); do [ -s "$WORK/served.yaml" ] && break; sleep 0.1; done
BASE="http://127.0.0.1:$PORT"
SUB=00000000-0000-0000-0000-00000000c0de
RG=bench-rg
W="$BASE/subscriptions/$SUB/resourceGroups/$RG/providers/Microsoft.Contoso/widgets/w1?api-version=2024-05-01"
curl -s -X PUT -H 'content-type: application/json' -d '{"location":"eastus"}' \
    "$BASE/subscriptions/$SUB/resourceGroups/$RG?api-version=2021-04-01" >/dev/null
curl -s -X PUT -H 'content-type: application/json' -d '{"location":"eastus","properties":{"size":3}}' "$W" >/dev/null
sed -i "s/^  name: rpconform$/  name: $RG/; s/^  create: true .*$/  create: false/" "$WORK/served.yaml"
{
    echo "suite: bench-cpu"
    echo "scenarios:"
    echo "  - name: reads"
    echo "    steps:"
    for _ in $(seq "$REQS"); do
        echo "      - request: {url: \"\${target.provider_url}/widgets/w1\"}"
        echo "        expect:"
        echo "          - {status: 200, rule: PUT-04}"
        echo "          - {header: x-ms-request-id, present: true, rule: HDR-01}"
        echo "          - {pointer: /properties/provisioningState, equals: Succeeded, rule: PUT-04}"
    done
} >"$WORK/cpu.yaml"
measure cpu "$BIN" run "$WORK/cpu.yaml" --target "$WORK/served.yaml" -q --report-dir "$WORK/cpu" --schemas "$ROOT/schemas"
CPU_REQS=$(report "$WORK/cpu" 'r["run"]["requests"]')
CPU_OK=$(report "$WORK/cpu" 'r["counts"]["passed"]')
RPC_US=$(python3 -c "print(f'{$CPU_S / $CPU_REQS * 1e6:.0f}')")
HURL=$(command -v hurl || true)
if [ -z "$HURL" ] && [ "${BENCH_INSTALL_HURL:-0}" = 1 ]; then
    echo "installing hurl 8.0.1 (cargo install)..." >&2
    cargo install hurl --version 8.0.1 --locked >&2 && HURL=$(command -v hurl || true)
fi
if [ -n "$HURL" ]; then
    {
        for _ in $(seq "$REQS"); do
            echo "GET $W"
            echo "HTTP 200"
            echo "[Asserts]"
            echo "header \"x-ms-request-id\" exists"
            echo "jsonpath \"\$.properties.provisioningState\" == \"Succeeded\""
            echo
        done
    } >"$WORK/cpu.hurl"
    measure hurl "$HURL" --test "$WORK/cpu.hurl"
    HURL_US=$(python3 -c "print(f'{$CPU_S / $REQS * 1e6:.0f}')")
    echo "(2) CPU per checked request: rpconform $RPC_US µs ($CPU_REQS requests, $CPU_OK test passed; every ambient rule judged too), hurl $HURL_US µs; rpconform / hurl = $(python3 -c "print(f'{$RPC_US / $HURL_US:.2f}')")"
else
    echo "(2) CPU per checked request: rpconform $RPC_US µs ($CPU_REQS requests; every ambient rule judged too); hurl is not installed, no ratio (cargo install hurl --version 8.0.1, or BENCH_INSTALL_HURL=1)"
fi
kill "$SERVE_PID" 2>/dev/null || true
SERVE_PID=

# (3) Scale: N scenarios (a table of N rows), each creates a widget, waits for it and reads it.
FIRST_MS=
for n in $SIZES; do
    python3 - "$WORK/scale$n.yaml" "$n" <<'EOF'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    f.write("suite: bench-scale\nscenarios:\n  - name: s\n    table:\n")
    for i in range(n):
        f.write(f"      - {{name: r{i:06d}}}\n")
    f.write("""    steps:
      - create: {as: r, type: widgets}
      - request: {url: "${r.url}"}
        expect:
          - {status: 200, rule: PUT-04}
""")
EOF
    measure "scale$n" "$BIN" run "$WORK/scale$n.yaml" --op-duration 1 --time-scale 0.001 -q --report-dir "$WORK/scale$n" --schemas "$ROOT/schemas"
    S=$(report "$WORK/scale$n" '"%d %d %s" % (len(res), r["run"]["requests"], ",".join(f"{v}_{k}" for k, v in r["counts"].items() if v and isinstance(v, int)))')
    read -r SN SREQ SCOUNTS <<<"$S"
    MS=$(python3 -c "print(f'{$CPU_S / $SN * 1000:.2f}')")
    [ -z "$FIRST_MS" ] && FIRST_MS=$MS
    echo "(3) $n scenarios: CPU $MS ms per scenario ($(python3 -c "print(f'{$MS / $FIRST_MS:.2f}')")x the first size), $(python3 -c "print(f'{$CPU_S / $SREQ * 1e6:.0f}')") µs per request (runner + in-process RP), peak RSS $(python3 -c "print(f'{$PEAK_KB / 1024:.0f}')") MiB, wall ${WALL_S} s [$SREQ requests; $SCOUNTS]"
    rm -rf "$WORK/scale$n" "$WORK/scale$n.yaml"
done

# (4) Cost: the plan against what the run sends; the minimal run against the full one.
# har_counts FILE: the PUTs and the requests a HAR holds.
har_counts() {
    python3 -c 'import json, sys; e = json.load(open(sys.argv[1]))["log"]["entries"]; print(sum(1 for x in e if x["request"]["method"] == "PUT"), len(e))' "$1"
}
for mode in full min; do
    "$BIN" plan suites --time-scale 0.05 --hold-reads 3 --coverage "$mode" --format json >"$WORK/plan-$mode.json" 2>/dev/null
    measure "acc-$mode" "$BIN" run suites -q --time-scale 0.05 --hold-reads 3 --coverage "$mode" --har "$WORK/$mode.har" --report-dir "$WORK/acc-$mode"
    eval "ACC_WALL_$mode=$WALL_S"
    read -r SENT_PUTS SENT_REQS <<<"$(har_counts "$WORK/$mode.har")"
    read -r PLAN_PUTS PLAN_REQS PLAN_TESTS <<<"$(python3 -c "import json; p=json.load(open('$WORK/plan-$mode.json')); print(p['puts'], p['requests'], p['tests'])")"
    JUDGED=$(report "$WORK/acc-$mode" 'sum(1 for x in r["conformance"]["rules"] if x["verdict"] in ("passed", "failed", "warned"))')
    eval "PUTS_$mode=$SENT_PUTS REQS_$mode=$SENT_REQS JUDGED_$mode=$JUDGED TESTS_$mode=$PLAN_TESTS"
    echo "(4) plan, --coverage $mode: $PLAN_PUTS PUTs planned / $SENT_PUTS sent = $(python3 -c "print(f'{$PLAN_PUTS / $SENT_PUTS:.3f}')"), $PLAN_REQS requests planned / $SENT_REQS sent = $(python3 -c "print(f'{$PLAN_REQS / $SENT_REQS:.3f}')") [$PLAN_TESTS tests planned, $JUDGED rules judged, wall $WALL_S s]"
done
echo "(4) --coverage min / full: tests $TESTS_min / $TESTS_full = $(python3 -c "print(f'{$TESTS_min / $TESTS_full:.3f}')"), PUTs $PUTS_min / $PUTS_full = $(python3 -c "print(f'{$PUTS_min / $PUTS_full:.3f}')"), requests $REQS_min / $REQS_full = $(python3 -c "print(f'{$REQS_min / $REQS_full:.3f}')"), rules judged $JUDGED_min / $JUDGED_full"
if [ "${BENCH_SKIP_REAL:-0}" != 1 ]; then
    measure cert "$BIN" run suites -q --hold-reads 3 --report-dir "$WORK/cert"
    echo "(4) accelerated wall / (certification wall × 0.05): $ACC_WALL_full s / ($WALL_S s × 0.05) = $(python3 -c "print(f'{$ACC_WALL_full / ($WALL_S * 0.05):.2f}')") (at most 4 is the target)"
fi
