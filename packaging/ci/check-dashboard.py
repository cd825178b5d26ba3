#!/usr/bin/env python3
"""Checks the Grafana dashboard's queries against what iopscheck and its rules write.

usage: check-dashboard.py DASHBOARD.json TEXTFILE.prom RULES.yml [OUT_RULES.yml]

Every query of the dashboard (panel targets and template variables) must name at least one
iopscheck series, and every iopscheck series it names must be one the textfile declares
(`# TYPE NAME`) or one the rules record; every label it matches on must be one the textfile's
samples carry. With OUT_RULES.yml, the queries (template variables replaced by example values)
are written there as recording rules, for `promtool check rules` to parse them as PromQL.
Prints each problem; exit 0 when none, 1 otherwise, 2 on bad input.
"""
import json
import re
import sys

import yaml

NAME = re.compile(r"\biopscheck[a-zA-Z0-9_:]*")
MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*\"")
EXAMPLES = {"policy": "swimlane", "metric": "write_iops_formula", "host": "node1"}


def queries(dash):
    out = []

    def panels(ps):
        for p in ps:
            for t in p.get("targets") or []:
                if t.get("expr"):
                    out.append((f"panel {p.get('id')} {p.get('title')!r} {t.get('refId')}", t["expr"]))
            panels(p.get("panels") or [])

    panels(dash.get("panels") or [])
    for v in (dash.get("templating") or {}).get("list") or []:
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        m = re.fullmatch(r"\s*label_values\((.*),\s*([a-zA-Z_]+)\)\s*", q or "")
        if not m:
            out.append((f"variable {v['name']}", q or ""))
        else:
            out.append((f"variable {v['name']}", m.group(1)))
            out.append((f"variable {v['name']} label", f'{{{m.group(2)}="x"}}'))
    return out


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    dash = json.load(open(argv[0]))
    prom = open(argv[1]).read()
    names = set(re.findall(r"^# TYPE (\S+) ", prom, re.M))
    labels = {"__name__"}
    for line in prom.splitlines():
        if line and not line.startswith("#") and "{" in line:
            labels |= set(re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)=\"", line.split("}")[0]))
    rules = yaml.safe_load(open(argv[2]))
    recorded = {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}
    if not names:
        print(f"{argv[1]}: no metric families", file=sys.stderr)
        return 2
    problems = 0
    exprs = []
    for where, q in queries(dash):
        example = q
        for k, v in EXAMPLES.items():
            example = example.replace(f"${{{k}}}", v).replace(f"${k}", v)
        if where.endswith(" label"):
            used = set(MATCHER.findall(example))
            for lbl, _ in used:
                if lbl not in labels:
                    print(f"{where}: label {lbl} is not on any series the textfile writes")
                    problems += 1
            continue
        found = set(NAME.findall(example))
        if not found:
            print(f"{where}: names no iopscheck series: {q}")
            problems += 1
        for n in sorted(found - names - recorded):
            print(f"{where}: {n} is neither written by the textfile nor recorded by the rules")
            problems += 1
        for lbl, _ in MATCHER.findall(example):
            if lbl not in labels:
                print(f"{where}: label {lbl} is not on any series the textfile writes")
                problems += 1
        exprs.append(example)
    if len(argv) == 4:
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": [
            {"record": f"dashboard:query_{i}", "expr": e} for i, e in enumerate(exprs)]}]},
            open(argv[3], "w"))
    print(f"{len(exprs)} queries checked against {len(names)} textfile series and {len(recorded)} recorded")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
