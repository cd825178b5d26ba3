#!/usr/bin/env bash
# What a large history costs: builds a history of a million records (a node every five minutes
# for ten years) and one of 100,000, from a real record this iopscheck writes, and measures
# wall time, CPU time and peak memory (GNU time's maximum RSS) of:
#   report in the policy's window over 1,000,000 records,
#   report with all 100,000 records in the window (every format that lists runs),
#   report --list over 1,000,000 records,
#   fleet over 1,000 node results (--format json files),
#   bundle over 1,000,000 records.
# Prints a Markdown table with the load average beside each figure (the machine may be shared).
#   bench/report-1m.sh            # 1,000,000 records (about 1.2 GB in a temp dir)
#   bench/report-1m.sh --quick    # 20,000 and 2,000 records, 100 nodes: the CI smoke test
# IOPSCHECK_BENCH_BINARY=path uses that binary instead of building one.
# IOPSCHECK_BENCH_BASELINE=path also measures that binary (main's, say) on the same files, each
# command run by the baseline and this binary alternately, a row each: an A/B on one machine.
set -euo pipefail
cd "$(dirname "$0")/.."
big=1000000 small=100000 nodes=1000
if [ "${1:-}" = --quick ]; then big=20000 small=2000 nodes=100; fi
[ -x /usr/bin/time ] || { echo "GNU time is not installed (apt-get install time)" >&2; exit 2; }
if [ -z "${IOPSCHECK_BENCH_BINARY:-}" ]; then cargo build --release --quiet; fi
bin=$(realpath "${IOPSCHECK_BENCH_BINARY:-target/release/iopscheck}")
base=${IOPSCHECK_BENCH_BASELINE:+$(realpath "$IOPSCHECK_BENCH_BASELINE")}
work=$(mktemp -d "${TMPDIR:-/tmp}/report-1m.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The template: one real run's record (1 s on a 16 MiB file in a temp dir), made to look like
# the policy's own test on a data disk so that the report judges it.
mkdir "$work/run"
"$bin" run --quiet --wait --runs 1 --size 16m --runtime 1s --dir "$work/run" --history "$work/one.jsonl" \
    >/dev/null || [ $? -le 3 ]
python3 - "$work/one.jsonl" "$work/template.jsonl" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
r.pop("overrides", None)
r["job"].update(size=4 << 30, runtime=60.0)
r["target"].update(dir="/data")
# 4200 IOPS by the vendor's formula, the MB/s it is derived from (what a record holds must
# agree with itself), over the policy's full minute
mb_s = 4200.0 * 4096 / 1048576
r["metrics"].update(write_iops=4000.0, write_iops_formula=4200.0, write_bw_mb_s=mb_s,
                    write_bw_bytes=mb_s * 1e6, write_bw_mib_s=mb_s * 1e6 / 1048576,
                    write_runtime_ms=60000.0)
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

measure() { # label, arguments...
    local label=$1; shift
    if [ -n "$base" ]; then
        measure_one "$label (baseline)" "$base" "$@"
        measure_one "$label" "$bin" "$@"
    else
        measure_one "$label" "$bin" "$@"
    fi
}

measure_one() { # label, binary, arguments...
    local label=$1; shift
    cat "$work/big.jsonl" "$work/small.jsonl" >/dev/null # the same warm page cache for each
    local load; load=$(cut -d' ' -f1-3 /proc/loadavg)
    /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" || [ $? -le 3 ] ||
        { cat "$work/err" >&2; exit 1; }
    read -r wall user sys rss <"$work/time"
    if [ -f "$work/b.tar.gz" ]; then # a bundle is never written over an existing file
        echo "$label: $(($(stat -c %s "$work/b.tar.gz") / 1048576)) MiB" >>"$work/sizes"
        rm -f "$work/b.tar.gz"
    fi
    awk -v l="$label" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v a="$load" \
        'BEGIN { printf "| %s | %.2f s | %.2f s | %.0f MiB | %s |\n", l, w, u + s, r / 1024, a }'

}

: >"$work/sizes"
size=$(stat -c %s "$work/big.jsonl")
echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname): $(nproc) vCPU, $(uname -r); $("$bin" --version)${base:+; baseline $("$base" --version)}."
echo "History: $big records, $((size / 1048576)) MiB; the page cache warm for each command."
echo
echo "| command | wall | CPU (user+sys) | peak RSS | load average 1/5/15 before |"
echo "| --- | --- | --- | --- | --- |"
measure "report, policy window (7 d), $big records" report --history "$work/big.jsonl" --host bench-node
for f in table json markdown html csv; do
    measure "report, all $small records in the window, $f" report --history "$work/small.jsonl" --host bench-node --since 4000d --format $f
done
measure "report --list, $big records" report --history "$work/big.jsonl" --list
measure "fleet, $nodes node results (json)" fleet "$work"/results/*.json
measure "bundle, $big records" bundle --history "$work/big.jsonl" --host bench-node -o "$work/b.tar.gz"
echo
echo "Bundle sizes:"
cat "$work/sizes"
