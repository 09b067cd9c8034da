#!/usr/bin/env bash
# Figures for the rpconform runner against its embedded reference RP (127.0.0.1 only):
#   (a) requests/second and per-request cost with every wait at (nearly) zero;
#   (b) how well polls overlap: wall time / longest test for 20 tests that each poll ~2 s;
#   (c) peak memory of runs of 50 and 500 small scenarios (--test-threads 64).
# Builds --release once, then prints one line per figure. Every run is bounded (RUN_LIMIT s).
#
# Usage: bench/bench.sh            (honours CARGO_TARGET_DIR; needs python3;
#                                   BENCH_SKIP_BUILD=1 reuses the release binary as it is)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
RUN_LIMIT=${RUN_LIMIT:-120}
command -v python3 >/dev/null || { echo "bench.sh needs python3 to read report.json" >&2; exit 2; }

if [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
    echo "building rpconform --release (once)..." >&2
    cargo build --release --quiet --bin rpconform >&2
fi
BIN=$TARGET_DIR/release/rpconform
[ -x "$BIN" ] || { echo "no binary at $BIN" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rpconform-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# measure NAME ARGS...: run the binary bounded by RUN_LIMIT; sets WALL_S, CPU_S, PEAK_KB, CODE.
measure() {
    local name=$1
    shift
    local start end
    start=$(date +%s.%N)
    CODE=0
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -v -o "$WORK/$name.time" timeout "$RUN_LIMIT" "$BIN" "$@" >"$WORK/$name.out" 2>&1 || CODE=$?
        end=$(date +%s.%N)
        PEAK_KB=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/$name.time")
        CPU_S=$(awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {printf "%.3f", u+s}' "$WORK/$name.time")
    else
        # No GNU time: sample VmHWM (peak RSS so far) from /proc until the process exits.
        "$BIN" "$@" >"$WORK/$name.out" 2>&1 &
        local pid=$! hwm=0 v waited=0
        while kill -0 "$pid" 2>/dev/null; do
            v=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
            [ -n "$v" ] && hwm=$v
            sleep 0.05
            waited=$((waited + 1))
            if [ "$waited" -gt $((RUN_LIMIT * 20)) ]; then kill "$pid" 2>/dev/null || true; fi
        done
        wait "$pid" || CODE=$?
        end=$(date +%s.%N)
        PEAK_KB=$hwm
        CPU_S=nan
    fi
    WALL_S=$(python3 -c "print(f'{$end - $start:.3f}')")
    if [ "$CODE" -eq 124 ] || [ "$CODE" -eq 2 ]; then
        echo "run $name did not complete (exit $CODE):" >&2
        tail -20 "$WORK/$name.out" >&2
        exit 1
    fi
}

# report DIR EXPR: evaluate a Python expression over report.json (`r`) and its results (`res`).
report() {
    python3 - "$1/report.json" "$2" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
res = r["results"]
print(eval(sys.argv[2]))
EOF
}

# table_suite FILE NAME ROWS STEPS: a suite of one scenario with ROWS table rows.
table_suite() {
    local file=$1 name=$2 rows=$3 steps=$4
    {
        echo "suite: $name"
        echo "scenarios:"
        echo "  - name: s"
        echo "    table:"
        for i in $(seq -w 1 "$rows"); do echo "      - {name: r$i}"; done
        echo "    steps:"
        printf '%s\n' "$steps"
    } >"$file"
    "$BIN" check "$file" --schemas "$ROOT/schemas" >/dev/null
}

# (a) Throughput with waits at zero: every Retry-After and sleep scaled by 1e-4, 1 ms operations.
measure a-parallel run suites --time-scale 0.0001 --op-duration 1 -q --report-dir "$WORK/a-parallel"
A_EX=$(report "$WORK/a-parallel" 'sum(len(x["exchanges"]) for x in res)')
A_TESTS=$(report "$WORK/a-parallel" 'len(res)')
A_CNT=$(report "$WORK/a-parallel" '", ".join(f"{v} {k}" for k, v in r["counts"].items() if v)')
A_WALL=$WALL_S A_CPU=$CPU_S
measure a-serial run suites --time-scale 0.0001 --op-duration 1 -q --test-threads 1 --report-dir "$WORK/a-serial"
S_EX=$(report "$WORK/a-serial" 'sum(len(x["exchanges"]) for x in res)')
S_WALL=$WALL_S
python3 - "$A_EX" "$A_WALL" "$A_CPU" "$S_EX" "$S_WALL" "$A_TESTS" "$A_CNT" <<'EOF'
import sys
ex, wall, cpu, sex, swall, tests, counts = sys.argv[1:]
ex, wall, sex, swall = int(ex), float(wall), int(sex), float(swall)
cpu_us = float(cpu) / ex * 1e6 if cpu != "nan" else float("nan")
print(f"(a) throughput, waits ~0: {ex} exchanges / {wall:.2f} s = {ex / wall:.0f} req/s with 32 test threads "
      f"(CPU {cpu_us:.0f} us per request, runner + in-process RP); "
      f"--test-threads 1: {swall / sex * 1000:.2f} ms per request ({sex / swall:.0f} req/s) "
      f"[{tests} tests: {counts}]")
EOF

# (b) Poll overlap: 20 tests each create a widget whose operation lasts 2 s and poll it. The
# run's own time also holds starting the RP, the resource group and the final cleanup, whose
# DELETEs are 2 s operations too; a run of the same scenario with one row is the baseline.
POLL='      - name: put
        create: {as: r, type: widgets, wait: false}
      - name: follow
        poll: put
        expect:
          - {outcome: Succeeded, rule: PUT-04}'
for n in 1 20; do
    table_suite "$WORK/poll$n.yaml" "bench-poll$n" "$n" "$POLL"
    measure "b$n" run "$WORK/poll$n.yaml" --op-duration 2000 --time-scale 0.01 -q --report-dir "$WORK/b$n"
done
B_FIG=$(report "$WORK/b20" '"%d tests, run %.2f s / longest test %.2f s = %.2f (mean test %.2f s; %s)" % (len(res), r["run"]["duration_ms"] / 1000, max(x["duration_ms"] for x in res) / 1000, r["run"]["duration_ms"] / max(x["duration_ms"] for x in res), sum(x["duration_ms"] for x in res) / len(res) / 1000, ", ".join(f"{v} {k}" for k, v in r["counts"].items() if v))')
B_ONE=$(report "$WORK/b1" 'r["run"]["duration_ms"]')
B_TWENTY=$(report "$WORK/b20" 'r["run"]["duration_ms"]')
echo "(b) parallel polling: $B_FIG; the run includes a 2 s final cleanup, so against one test alone:" \
    "$(python3 -c "print(f'{$B_TWENTY / 1000:.2f} s / {$B_ONE / 1000:.2f} s = {$B_TWENTY / $B_ONE:.2f}x (1.00 = the 20 polls fully overlap)')")"

# (c) Peak memory for 50 and 500 small scenarios (a create that settles, then a GET).
SMALL='      - create: {as: r, type: widgets}
      - name: get
        request: {url: "${r.url}"}
        expect:
          - {status: 200, rule: PUT-04}'
for n in 50 500; do
    table_suite "$WORK/small$n.yaml" "bench-small$n" "$n" "$SMALL"
    measure "c$n" run "$WORK/small$n.yaml" --op-duration 100 --time-scale 0.01 --test-threads 64 -q --report-dir "$WORK/c$n"
    C_EX=$(report "$WORK/c$n" 'sum(len(x["exchanges"]) for x in res)')
    C_CNT=$(report "$WORK/c$n" '", ".join(f"{v} {k}" for k, v in r["counts"].items() if v)')
    C_JSON=$(du -k "$WORK/c$n/report.json" | cut -f1)
    echo "(c) peak memory, $n scenarios (--test-threads 64): $(python3 -c "print(f'{$PEAK_KB / 1024:.1f}')") MiB max RSS" \
        "in ${WALL_S} s ($C_EX exchanges, report.json ${C_JSON} KiB; $C_CNT)"
done
