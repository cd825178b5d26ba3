#!/usr/bin/env bash
# What a large history costs: builds a history of a million records (a node every five minutes
# for ten years) and one of 100,000, from a real record this iopscheck writes, and measures
# wall time, CPU time and peak memory (GNU time's maximum RSS) of:
#   report in the policy's window over 1,000,000 records,
#   report with all 100,000 records in the window (table and json),
#   fleet over 1,000 node results (--format json files),
#   bundle over 1,000,000 records.
# Prints a Markdown table with the load average beside each figure (the machine may be shared).
#   bench/report-1m.sh            # 1,000,000 records (about 1.2 GB in a temp dir)
#   bench/report-1m.sh --quick    # 20,000 and 2,000 records, 100 nodes: the CI smoke test
# IOPSCHECK_BENCH_BINARY=path uses that binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
big=1000000 small=100000 nodes=1000
if [ "${1:-}" = --quick ]; then big=20000 small=2000 nodes=100; fi
[ -x /usr/bin/time ] || { echo "GNU time is not installed (apt-get install time)" >&2; exit 2; }
if [ -z "${IOPSCHECK_BENCH_BINARY:-}" ]; then cargo build --release --quiet; fi
bin=$(realpath "${IOPSCHECK_BENCH_BINARY:-target/release/iopscheck}")
work=$(mktemp -d "${TMPDIR:-/tmp}/report-1m.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The template: one real run's record (1 s on a 16 MiB file in a temp dir), made to look like
# the policy's own test on a data disk so that the report judges it.
mkdir "$work/run"
"$bin" run --quiet --runs 1 --size 16m --runtime 1s --dir "$work/run" --history "$work/one.jsonl" \
    >/dev/null || [ $? -le 3 ]
python3 - "$work/one.jsonl" "$work/template.jsonl" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
r.pop("overrides", None)
r["job"].update(size=4 << 30, runtime=60.0)
r["target"].update(dir="/data")
r["metrics"].update(write_iops=4000.0, write_iops_formula=4200.0)
open(sys.argv[2], "w").write(json.dumps(r) + "\n")
PY
python3 bench/gen_history.py "$work/template.jsonl" "$work/big.jsonl" "$big"
python3 bench/gen_history.py "$work/template.jsonl" "$work/small.jsonl" "$small"
python3 bench/gen_history.py "$work/template.jsonl" "$work/nodes" --nodes "$nodes" --per-node 24 --step-min 360
mkdir "$work/results"
for f in "$work"/nodes/*.jsonl; do
    n=$(basename "$f" .jsonl)
    "$bin" report --history "$f" --host "$n" --format json >"$work/results/$n.json" || [ $? -le 3 ]
done
rm -rf "$work/nodes"

measure() { # label, command...
    local label=$1; shift
    cat "$work/big.jsonl" "$work/small.jsonl" >/dev/null # the same warm page cache for each
    local load; load=$(cut -d' ' -f1-3 /proc/loadavg)
    /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" || [ $? -le 3 ] ||
        { cat "$work/err" >&2; exit 1; }
    read -r wall user sys rss <"$work/time"
    awk -v l="$label" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v a="$load" \
        'BEGIN { printf "| %s | %.2f s | %.2f s | %.0f MiB | %s |\n", l, w, u + s, r / 1024, a }'

}

size=$(stat -c %s "$work/big.jsonl")
echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname): $(nproc) vCPU, $(uname -r); $("$bin" --version)."
echo "History: $big records, $((size / 1048576)) MiB; the page cache warm for each command."
echo
echo "| command | wall | CPU (user+sys) | peak RSS | load average 1/5/15 before |"
echo "| --- | --- | --- | --- | --- |"
measure "report, policy window (7 d), $big records" "$bin" report --history "$work/big.jsonl" --host bench-node
measure "report, all $small records in the window, table" "$bin" report --history "$work/small.jsonl" --host bench-node --since 4000d
measure "report, all $small records in the window, json" "$bin" report --history "$work/small.jsonl" --host bench-node --since 4000d --format json
measure "fleet, $nodes node results (json)" "$bin" fleet "$work"/results/*.json
measure "bundle, $big records" "$bin" bundle --history "$work/big.jsonl" --host bench-node -o "$work/b.tar.gz"
