#!/usr/bin/env python3
"""Writes a synthetic iopscheck history (JSON Lines, records as src/history.rs defines them)
for CI runs where the engine cannot run: RUNS runs a day over DAYS days ending now, on HOST and
DIR, at MB_S decimal MB/s of the Swimlane job (4k random writes).

usage: seed-history.py FILE HOST DIR [MB_S] [DAYS] [RUNS]"""
import datetime
import json
import sys


def main() -> None:
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    path, host, directory = sys.argv[1:4]
    mb_s = float(sys.argv[4]) if len(sys.argv) > 4 else 16.4
    days = int(sys.argv[5]) if len(sys.argv) > 5 else 2
    runs = int(sys.argv[6]) if len(sys.argv) > 6 else 3
    now = datetime.datetime.now().astimezone().replace(microsecond=0)
    lines = []
    for d in range(days - 1, -1, -1):
        for i in range(runs):
            ts = now - datetime.timedelta(days=d, minutes=10 * (runs - i))
            lines.append(json.dumps({
                "schema_version": 1,
                "timestamp": ts.isoformat(),
                "host": host,
                "source": "native",
                "engine": "posixaio",
                "job": {"rw": "randwrite", "bs": 4096, "size": 4 << 30, "iodepth": 1,
                        "numjobs": 1, "ioengine": "posixaio", "runtime": 60.0,
                        "time_based": True, "end_fsync": True},
                "metrics": {
                    "write_bw_mb_s": mb_s,
                    "write_iops_formula": mb_s / 4 * 1024,
                    "write_iops": mb_s * 1e6 / 4096,
                },
                "target": {"dir": directory, "filesystem": "ext4"},
                "tool_version": "0.1.0",
                "policy": "swimlane",
            }))
    with open(path, "a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
