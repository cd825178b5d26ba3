#!/usr/bin/env bash
# What a large history costs in memory: builds a history of about 1 GB (a node every five
# minutes, most recent last, each record a real run's with its figures varied) and measures the
# peak RSS (GNU time's maximum resident set size), wall time and CPU time of every format of
# `report`, of `report --format json -o FILE`, of `bundle` and of `fleet` over it, with the
# window at 7 days and at 400 days.
#   bench/memory.sh                  # about 1,000,000,000 bytes of history, in a temp dir
#   bench/memory.sh --quick          # about 20 MB: the smoke test of the script itself
#   bench/memory.sh --bytes N        # about N bytes
#   bench/memory.sh --step-min M     # a run every M minutes (5 unless said)
# IOPSCHECK_BENCH_BINARY=path uses that binary instead of building one.
# IOPSCHECK_BENCH_WINDOWS="400d" measures those windows only ("7d 400d" unless set).
# Prints a Markdown table; a row whose peak RSS is over the limit (100 MiB, or
# IOPSCHECK_BENCH_LIMIT_MIB) is marked, and the script then exits 1.
# The history is removed at the end, whatever happens (it needs its size free in $TMPDIR).
set -euo pipefail
cd "$(dirname "$0")/.."
bytes=1000000000 step=5
while [ $# -gt 0 ]; do
    case $1 in
    --quick) bytes=20000000 ;;
    --bytes) bytes=$2; shift ;;
    --step-min) step=$2; shift ;;
    *) echo "bench/memory.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
limit=${IOPSCHECK_BENCH_LIMIT_MIB:-100}
[ -x /usr/bin/time ] || { echo "GNU time is not installed (apt-get install time)" >&2; exit 2; }
if [ -z "${IOPSCHECK_BENCH_BINARY:-}" ]; then cargo build --release --quiet; fi
bin=$(realpath "${IOPSCHECK_BENCH_BINARY:-target/release/iopscheck}")
work=$(mktemp -d "${TMPDIR:-/tmp}/memory.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The template: one real run's record (1 s on a 16 MiB file in a temp dir), made to look like
# the policy's own test on a data disk so that the report judges it (as bench/report-1m.sh).
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
# As many records as make the size: the length of a generated line, from a thousand of them.
python3 bench/gen_history.py "$work/template.jsonl" "$work/probe.jsonl" 1000 --step-min "$step"
n=$((bytes * 1000 / $(stat -c %s "$work/probe.jsonl")))
python3 bench/gen_history.py "$work/template.jsonl" "$work/big.jsonl" "$n" --step-min "$step"
size=$(stat -c %s "$work/big.jsonl")
per_day=$(awk -v s="$step" 'BEGIN { printf "%d", 1440 / s }')
in_window() { # days → records of the history in a window of that many days
    awk -v d="$1" -v p="$per_day" -v n="$n" 'BEGIN { w = d * p; printf "%d", (w < n ? w : n) }'
}

over=0
measure() { # label, window, arguments...
    local label=$1 window=$2; shift 2
    cat "$work/big.jsonl" >/dev/null # the same warm page cache for each
    local load; load=$(cut -d' ' -f1-3 /proc/loadavg)
    rm -f "$work/out" "$work/b.tar.gz"
    /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" || [ $? -le 3 ] ||
        { cat "$work/err" >&2; exit 1; }
    # GNU time writes "Command exited with non-zero status 3" first where the verdict is
    # inconclusive: the figures are its last line
    local wall user sys rss; read -r wall user sys rss < <(tail -n 1 "$work/time")
    local mark=""
    if [ "$rss" -gt $((limit * 1024)) ]; then mark=" **over $limit MiB**"; over=1; fi
    awk -v l="$label" -v w="$window" -v k="$(in_window "${window%d}")" -v t="$wall" -v u="$user" -v s="$sys" \
        -v r="$rss" -v m="$mark" -v a="$load" \
        'BEGIN { printf "| %s | %s | %d | %.2f s | %.2f s | %.1f MiB%s | %s |\n", l, w, k, t, u + s, r / 1024, m, a }'
    rm -f "$work/out" "$work/b.tar.gz"
}

echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname): $(nproc) vCPU, $(uname -r); $("$bin" --version)."
echo "History: $n records, $size bytes ($((size / 1048576)) MiB), a run every $step minutes; the page cache warm for each command."
echo
echo "| command | window | runs in the window | wall | CPU (user+sys) | peak RSS | load average 1/5/15 before |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
h=(--history "$work/big.jsonl")
for window in ${IOPSCHECK_BENCH_WINDOWS:-7d 400d}; do
    for f in table json jsonl csv markdown prometheus junit html summary; do
        measure "report --format $f" "$window" "$bin" report "${h[@]}" --host bench-node --since "$window" --format "$f"
    done
    measure "report --format json -o FILE" "$window" "$bin" report "${h[@]}" --host bench-node --since "$window" --format json -o "$work/out"
    measure "bundle -o FILE" "$window" "$bin" bundle "${h[@]}" --host bench-node --since "$window" -o "$work/b.tar.gz"
    measure "fleet (the history as its input)" "$window" "$bin" fleet --since "$window" "$work/big.jsonl"
done
[ "$over" -eq 0 ] || { echo; echo "a command's peak RSS was over $limit MiB" >&2; exit 1; }
