#!/usr/bin/env python3
"""Run sdk_poll.py (the Azure SDK's ARMPolling) against every /lro route of a running autorest
test server and compare each outcome with the expectation recorded in autorest-lro-routes.json.

Usage:
    run_autorest_sdk.py BASE_URL [--only SUBSTRING] [--out results.json] [--markdown]
                        [--no-cookies] [--python PYTHON]

BASE_URL is the server started by start_autorest.sh (e.g. http://127.0.0.1:3111).
Routes run one after the other: the server's only state is a cookie named `scenario` that every
route shares, so two operations polled at once through one cookie jar would disturb each other
(here every route gets its own process, hence its own jar).

Time is compressed: --polling-interval 0 (the SDK's fallback delay when Retry-After is absent
or 0) and --max-sleep 0. Nothing else about the algorithm changes.

Exit status 0 when every route's SDK outcome matches its `sdk` expectation in the catalogue
(terminal_state, final_status_code, error kind), 1 otherwise; the report says which differ.
With --no-cookies the expectations are `sdk_no_cookies` where the catalogue gives one.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run_one(python, base, route, no_cookies):
    cmd = [
        python,
        os.path.join(HERE, "sdk_poll.py"),
        base.rstrip("/") + route["path"],
        route["method"],
        "--polling-interval",
        "0",
        "--max-sleep",
        "0",
        "--max-requests",
        "12" if no_cookies else "40",
        "--timeout",
        "60",
    ]
    if route.get("final_state_via"):
        cmd += ["--final-state-via", route["final_state_via"]]
    if route.get("client_request_id"):
        cmd += ["--client-request-id", route["client_request_id"]]
    if no_cookies:
        cmd.append("--no-cookies")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        return {"error": f"sdk_poll.py failed ({proc.returncode}): {proc.stderr.strip()[-500:]}"}
    return json.loads(proc.stdout)


def error_kind(err):
    if not err:
        return None
    if err.startswith("rpconform:"):
        return "rpconform-bound"
    return err.split(":", 1)[0]


def compare(expect, got):
    """Differences between the catalogue's expectation and what the SDK did."""
    diffs = []
    if expect is None:
        return ["no expectation recorded"]
    for key in ("terminal_state", "final_status_code"):
        if key in expect and expect[key] != got.get(key):
            diffs.append(f"{key}: expected {expect[key]!r}, got {got.get(key)!r}")
    if "error" in expect and expect["error"] != error_kind(got.get("error")):
        diffs.append(f"error: expected {expect['error']!r}, got {got.get('error')!r}")
    if "final_body" in expect and expect["final_body"] != got.get("final_body"):
        diffs.append(f"final_body: expected {expect['final_body']!r}, got {got.get('final_body')!r}")
    return diffs


def short(v, n=90):
    s = json.dumps(v) if not isinstance(v, str) else v
    s = " ".join(s.split()).replace("|", "\\|")
    return s if len(s) <= n else s[: n - 3] + "..."


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("--only")
    ap.add_argument("--out")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--no-cookies", action="store_true")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--catalogue", default=os.path.join(HERE, "autorest-lro-routes.json"))
    a = ap.parse_args()

    with open(a.catalogue, encoding="utf-8") as f:
        routes = json.load(f)["routes"]
    if a.only:
        routes = [r for r in routes if a.only.lower() in (r["operation_id"] + r["path"]).lower()]

    results, mismatches = [], 0
    for r in routes:
        got = run_one(a.python, a.base, r, a.no_cookies)
        expect = r.get("sdk_no_cookies", r.get("sdk")) if a.no_cookies else r.get("sdk")
        diffs = compare(expect, got)
        mismatches += bool(diffs)
        results.append({"operation_id": r["operation_id"], "method": r["method"], "path": r["path"], "sdk": got, "diffs": diffs})
        mark = "ok  " if not diffs else "DIFF"
        print(
            f"{mark} {r['operation_id']:52s} state={got.get('terminal_state')!s:10s} "
            f"final={got.get('final_status_code')!s:4s} err={short(got.get('error') or '-', 70)}",
            file=sys.stderr,
        )
        for d in diffs:
            print(f"       {d}", file=sys.stderr)

    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    if a.markdown:
        print("| operation | method | SDK strategy | terminal state | final status | final body | GETs | error |")
        print("|---|---|---|---|---|---|---|---|")
        for res in results:
            g = res["sdk"]
            print(
                f"| {res['operation_id']} | {res['method']} | {g.get('strategy') or '-'} | "
                f"{g.get('terminal_state') or '-'} | {g.get('final_status_code') or '-'} | "
                f"{short(g.get('final_body'), 60) if g.get('final_body') is not None else '-'} | "
                f"{len(g.get('polled_urls') or [])} | {short(g.get('error') or '-', 80)} |"
            )
    print(f"{len(results) - mismatches} passed, {mismatches} failed", file=sys.stderr)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
