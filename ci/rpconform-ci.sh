#!/usr/bin/env bash
# rpconform in CI: one run of the suites against a target, its reports where CI shows them,
# and the run's exit status. The GitHub Action (action.yml) and the Azure Pipelines template
# (docs/ci/rpconform-steps.yml) both call this script; tests/ci_script.rs runs it against the
# embedded reference RP.
#
#   ci/rpconform-ci.sh --target FILE|embedded [--report-dir DIR] [--certify]
#                      [--subject NAME@VERSION] [--doctor] [-- OTHER RPCONFORM RUN OPTIONS]
#
# It runs `rpconform doctor` first when asked (--doctor; a file target only), then
# `rpconform run`, and always, whatever the run's verdict:
#   - appends summary.md to $GITHUB_STEP_SUMMARY (GitHub Actions), or uploads it as the
#     run's summary with ##vso[task.uploadsummary] (Azure Pipelines, where TF_BUILD is set);
#   - writes status, exit-code, report-dir, junit and sarif to $GITHUB_OUTPUT when set, and
#     the same as pipeline variables (RPCONFORM_STATUS...) on Azure Pipelines;
#   - exits with the run's own exit code: 0 passed (or incomplete, without --certify),
#     1 failed or not certified, 2 bad usage, target or suites (no report), 130 interrupted.
# $RPCONFORM names the binary (default: rpconform on the PATH).

set -u

rpconform="${RPCONFORM:-rpconform}"
target=""
report_dir="rpconform-reports"
certify=""
subject=""
doctor=""
extra=()

usage() {
    cat >&2 <<'USAGE'
usage: ci/rpconform-ci.sh --target FILE|embedded [--report-dir DIR] [--certify]
                          [--subject NAME@VERSION] [--doctor] [-- OTHER RPCONFORM RUN OPTIONS]
USAGE
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
        --target) target="${2:?--target needs a value}"; shift 2 ;;
        --report-dir) report_dir="${2:?--report-dir needs a value}"; shift 2 ;;
        --subject) subject="${2:?--subject needs a value}"; shift 2 ;;
        --certify) certify=1; shift ;;
        --doctor) doctor=1; shift ;;
        --) shift; extra=("$@"); break ;;
        -h|--help) usage ;;
        *) echo "rpconform-ci.sh: unknown option $1" >&2; usage ;;
    esac
done
[ -n "$target" ] || { echo "rpconform-ci.sh: --target is required (a target file, or embedded)" >&2; usage; }

if [ -n "$doctor" ] && [ "$target" != "embedded" ]; then
    "$rpconform" doctor --target "$target" || exit $?
fi

args=(run --target "$target" --report-dir "$report_dir")
[ -n "$certify" ] && args+=(--certify)
[ -n "$subject" ] && args+=(--subject "$subject")
args+=("${extra[@]}")
echo "+ $rpconform ${args[*]}" >&2
"$rpconform" "${args[@]}"
code=$?

# The run's one status, as its results.jsonl ends with it (none: the run wrote no report).
status=""
if [ -f "$report_dir/results.jsonl" ]; then
    status=$(tail -n 1 "$report_dir/results.jsonl" | sed -n 's/^{"run_status":{"state":"\([a-z]*\)".*/\1/p')
fi
echo "rpconform-ci.sh: run status ${status:-none (no report)}, exit code $code" >&2

summary="$report_dir/summary.md"
if [ -f "$summary" ]; then
    if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
        cat "$summary" >> "$GITHUB_STEP_SUMMARY"
    fi
    if [ -n "${TF_BUILD:-}" ]; then
        echo "##vso[task.uploadsummary]$(cd "$report_dir" && pwd)/summary.md"
    fi
fi

if [ -n "${GITHUB_OUTPUT:-}" ]; then
    {
        echo "status=$status"
        echo "exit-code=$code"
        echo "report-dir=$report_dir"
        echo "junit=$report_dir/junit.xml"
        echo "sarif=$report_dir/results.sarif"
    } >> "$GITHUB_OUTPUT"
fi
if [ -n "${TF_BUILD:-}" ]; then
    echo "##vso[task.setvariable variable=RPCONFORM_STATUS]$status"
    echo "##vso[task.setvariable variable=RPCONFORM_EXIT_CODE]$code"
    echo "##vso[task.setvariable variable=RPCONFORM_REPORT_DIR]$report_dir"
fi
exit "$code"
