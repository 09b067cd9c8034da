#!/usr/bin/env python3
"""Refresh src/rules/catalogue.tsv from ../shared/contract/rules.md.

The shared catalogue owns each rule's statement, source and "observed by" text; the project's
TSV owns what rpconform decided about it: its profile, its level (when calibrated away from the
catalogue's) and the decision record. This script copies the shared text in and keeps the
project's columns; rules the shared catalogue does not have (the project's own) are kept as is.
Run it from the repository root after the shared catalogue changes, then review the diff.
"""
import re
import sys

SHARED = sys.argv[1] if len(sys.argv) > 1 else "../shared/contract/rules.md"
TSV = "src/rules/catalogue.tsv"
HEADER = "# id\tlevel\tprofile\trule\tsource\tobserved by\tcatalogue level\tdecision"

shared = {}
order = []
for line in open(SHARED, encoding="utf-8"):
    m = re.match(r"^\| ([A-Z]+-\d\d) \| (MUST|SHOULD|MAY) \| (.*) \| (.*) \| (.*) \|$", line.rstrip("\n"))
    if m:
        shared[m.group(1)] = m.groups()
        order.append(m.group(1))

rows = {}
project_order = []
for line in open(TSV, encoding="utf-8"):
    if line.startswith("#") or not line.strip():
        continue
    f = line.rstrip("\n").split("\t")
    rows[f[0]] = f
    project_order.append(f[0])

out = [HEADER]
for rid in order + [r for r in project_order if r not in shared]:
    if rid in shared:
        _, level, rule, source, observed = shared[rid]
        mine = rows.get(rid)
        if mine is None:
            sys.exit(f"{rid} is new in the shared catalogue: give it a profile in {TSV} first")
        f = [rid, mine[1], mine[2], rule, source, observed, level, mine[7] if len(mine) > 7 else ""]
    else:
        f = rows[rid]
    out.append("\t".join(f))
open(TSV, "w", encoding="utf-8").write("\n".join(out) + "\n")
print(f"{TSV}: {len(out) - 1} rules")
