#!/usr/bin/env bash
# How long `iopscheck report` takes over a history of 100,000 records (a year of runs every
# five minutes): generates the history from one real record, then times the report.
#   bench/report-100k.sh [RECORDS]
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-100000}"
cargo build --release --quiet
bin=target/release/iopscheck
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# one real record, from a fio output the tool imports
$bin import --record --host bench-node --dir /data --history "$work/one.jsonl" \
    tests/fixtures/fio-outputs/fio-3.33-sample.json --format json >/dev/null
python3 - "$work/one.jsonl" "$work/history.jsonl" "$n" <<'PY'
import json, sys, datetime
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
rec = json.loads(open(src).readline())
now = datetime.datetime.now(datetime.timezone.utc)
with open(dst, "w") as f:
    for i in range(n):
        r = dict(rec)
        r["timestamp"] = (now - datetime.timedelta(minutes=5 * (n - i))).isoformat(timespec="seconds")
        r["metrics"] = dict(rec["metrics"], write_iops_formula=rec["metrics"]["write_iops_formula"] * (0.9 + (i % 7) / 30))
        r["source_digest"] = f"bench:{i}"
        f.write(json.dumps(r) + "\n")
PY
ls -l "$work/history.jsonl" | awk '{printf "history: %s records, %.1f MiB\n", '"$n"', $5/1048576}'
for window in 7d 400d; do
    start=$(date +%s.%N)
    $bin report --history "$work/history.jsonl" --host bench-node --since "$window" --format json >/dev/null || true
    end=$(date +%s.%N)
    printf 'report --since %s: %.3f s\n' "$window" "$(echo "$end - $start" | bc)"
done
