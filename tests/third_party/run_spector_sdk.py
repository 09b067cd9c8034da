#!/usr/bin/env python3
"""Run sdk_poll.py (the Azure SDK's ARMPolling) against every long-running operation of the
Spector ARM scenarios and check the SDK's outcome.

Usage: run_spector_sdk.py BASE_URL [--python PYTHON] [--markdown]
BASE_URL is the server started by start_spector.sh (e.g. http://127.0.0.1:3112). Operations run
one after the other (Spector keeps its poll counters in process-global variables).
Prints one line per operation and "N passed, M failed"; exit 1 if any differs from EXPECTED.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SUB = "/subscriptions/00000000-0000-0000-0000-000000000000"
OT = f"{SUB}/resourceGroups/test-rg/providers/Azure.ResourceManager.OperationTemplates"
Q = "?api-version=2023-12-01-preview"

# (scenario, method, path, body, final-state-via, expected SDK outcome)
OPERATIONS = [
    ("OperationTemplates_Lro_createOrReplace", "PUT", f"{OT}/orders/order1{Q}",
     {"location": "eastus", "properties": {"productId": "product1", "amount": 1}}, "azure-async-operation",
     {"strategy": "AzureAsyncOperationPolling", "terminal_state": "Succeeded", "final_status_code": 200, "gets": 3}),
    ("OperationTemplates_Lro_export", "POST", f"{OT}/orders/order1/export{Q}", {"format": "csv"}, "location",
     {"strategy": "AzureAsyncOperationPolling", "terminal_state": "Succeeded", "final_status_code": 200, "gets": 3,
      "final_body": {"content": "order1,product1,1"}}),
    ("OperationTemplates_Lro_delete", "DELETE", f"{OT}/orders/order1{Q}", None, "location",
     {"strategy": "LocationPolling", "terminal_state": "Succeeded", "final_status_code": 204, "gets": 2}),
    ("OperationTemplates_Lro_exportArray", "POST",
     f"{SUB}/providers/Azure.ResourceManager.OperationTemplates/exportArray{Q}", {"format": "csv"}, "location",
     {"strategy": "AzureAsyncOperationPolling", "terminal_state": "Succeeded", "final_status_code": 200, "gets": 3,
      "final_body": [{"content": "order1,product1,1"}, {"content": "order2,product2,2"}], "sleeps": [1.0]}),
    ("OperationTemplates_LroPaging_postPagingLro", "POST", f"{OT}/products/default/postPagingLro{Q}", None, "location",
     {"strategy": "LocationPolling", "terminal_state": "Succeeded", "final_status_code": 200, "gets": 2, "sleeps": [1.0]}),
    ("LargeHeader_LargeHeaders_two6k", "POST",
     f"{SUB}/resourceGroups/test-rg/providers/Azure.ResourceManager.LargeHeader/largeHeaders/header1/two6k{Q}", None,
     "location",
     {"strategy": "AzureAsyncOperationPolling", "terminal_state": "Succeeded", "final_status_code": 200, "gets": 3,
      "final_body": {"succeeded": True}}),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    base = a.base.rstrip("/")
    passed = failed = 0
    rows = []
    for name, method, path, body, fsv, exp in OPERATIONS:
        cmd = [a.python, os.path.join(HERE, "sdk_poll.py"), base + path, method, "--final-state-via", fsv,
               "--polling-interval", "0", "--max-sleep", "0", "--max-requests", "20", "--timeout", "60"]
        if body is not None:
            cmd += ["--body", json.dumps(body)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
        try:
            out = json.loads(proc.stdout)
        except ValueError:
            out = {"error": f"sdk_poll.py printed no JSON: {proc.stderr[-300:]}"}
        diffs = []
        for key in ("strategy", "terminal_state", "final_status_code", "final_body", "sleeps"):
            if key in exp and out.get(key) != exp[key]:
                diffs.append(f"{key}: expected {exp[key]!r}, got {out.get(key)!r}")
        if len(out.get("polled_urls") or []) != exp["gets"]:
            diffs.append(f"GETs: expected {exp['gets']}, got {len(out.get('polled_urls') or [])}")
        if out.get("error"):
            diffs.append(f"error: {out['error'][:200]}")
        rows.append((name, method, out))
        if diffs:
            failed += 1
            print(f"DIFF {name}", file=sys.stderr)
            for d in diffs:
                print(f"       {d}", file=sys.stderr)
        else:
            passed += 1
            print(f"ok   {name}: {out.get('strategy')} {out.get('terminal_state')} {out.get('final_status_code')}",
                  file=sys.stderr)
    if a.markdown:
        print("| scenario | method | SDK strategy | terminal state | final status | final body (cut) | GETs |")
        print("|---|---|---|---|---|---|---|")
        for name, method, out in rows:
            fb = json.dumps(out.get("final_body"))
            fb = fb if len(fb) <= 60 else fb[:57] + "..."
            print(f"| {name} | {method} | {out.get('strategy')} | {out.get('terminal_state')} | "
                  f"{out.get('final_status_code')} | `{fb}` | {len(out.get('polled_urls') or [])} |")
    print(f"{passed} passed, {failed} failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
