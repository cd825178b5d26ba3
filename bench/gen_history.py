#!/usr/bin/env python3
"""Writes a synthetic iopscheck history: N records of one template record (a real record the
tool wrote when importing a fio output), one every STEP minutes ending now, with the figures
varied run to run, and the timestamps in order.

Usage: gen_history.py TEMPLATE.jsonl OUT.jsonl N [--step-min 5] [--host NAME]
       gen_history.py TEMPLATE.jsonl OUTDIR --nodes 1000 [--per-node 3]   (one file per node)
"""
import argparse
import datetime
import json
import os


def lines(rec, n, step, host, now):
    base = rec["metrics"]
    # serialise the template once, then vary the few fields that change per run
    for i in range(n):
        r = dict(rec)
        r["host"] = host
        r["timestamp"] = (now - datetime.timedelta(minutes=step * (n - 1 - i))).isoformat(timespec="seconds")
        f = 0.9 + (i % 7) / 30
        r["metrics"] = {k: (v * f if k.startswith("write_iops") or k.startswith("write_bw") else v) for k, v in base.items()}
        r["source_digest"] = f"bench:{host}:{i}"
        yield json.dumps(r, separators=(",", ":")) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("template")
    ap.add_argument("out")
    ap.add_argument("n", type=int, nargs="?", default=0)
    ap.add_argument("--step-min", type=float, default=5)
    ap.add_argument("--host", default="bench-node")
    ap.add_argument("--nodes", type=int, default=0)
    ap.add_argument("--per-node", type=int, default=6)
    a = ap.parse_args()
    rec = json.loads(open(a.template).readline())
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    if a.nodes:
        os.makedirs(a.out, exist_ok=True)
        for k in range(a.nodes):
            host = f"node{k:04d}"
            with open(os.path.join(a.out, f"{host}.jsonl"), "w") as f:
                # several runs a day over the last days, as the policy's evidence rule asks
                f.writelines(lines(rec, a.per_node, 12 * 60, host, now))
        return
    with open(a.out, "w", buffering=1 << 20) as f:
        f.writelines(lines(rec, a.n, a.step_min, a.host, now))


if __name__ == "__main__":
    main()
