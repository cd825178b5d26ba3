#!/usr/bin/env bash
# Do two builds of iopscheck write the same bytes? For a change that must not change what users
# see (a refactoring of the renderers): every output format of `import` over every fio fixture
# (under two policies, with and without --strict), `report` over multi-day histories (a few
# runs a day, and more than the by-day limit, and runs with IOPS series), and `fleet` over
# results, histories and a missing node, in every format, at two terminal widths.
#
# Usage: [ONLY=REGEX] bench/same-output.sh OLD_BINARY NEW_BINARY [WORKDIR]
#   ONLY keeps the cases whose name (import-FILE-FORMAT, report-…, fleet-…) matches
#   TABLE_WIDTHS the widths (COLUMNS) the table format is compared at: "100 60" unless set
#   e.g. cp target/debug/iopscheck /tmp/old   (before the change)
#        bench/same-output.sh /tmp/old target/debug/iopscheck
#
# The inputs (histories, node results) are made once with OLD_BINARY and read by both, so the
# records are the same to the byte (but for the commit of the build, " (commit …)", which is
# removed from both outputs before they are compared). Both run under faketime at the same instant, so "generated"
# and the window agree. Exits 1 and lists the differing outputs when any differ (their pairs
# are kept in WORKDIR/diff/).
set -euo pipefail

old=$(realpath "$1")
new=$(realpath "$2")
work=${3:-$(mktemp -d)}
here=$(cd "$(dirname "$0")/.." && pwd)
fixtures="$here/tests/fixtures"
command -v faketime >/dev/null || { echo "needs faketime (apt-get install faketime)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 2; }

mkdir -p "$work/in" "$work/old" "$work/new" "$work/diff"
formats="table json jsonl csv markdown prometheus junit html summary"
# One instant for both binaries, an hour after the inputs were made.
at=$(date -u -d '+1 hour' '+%Y-%m-%d %H:%M:%S')
export TZ=UTC LC_ALL=C.UTF-8 NO_COLOR=1

# ---- inputs, made once with the old binary ----------------------------------------------------
hist="$work/in/fixtures.jsonl"
: >"$hist"
for f in "$fixtures"/fio-outputs/*.json "$fixtures"/fio-outputs/*.txt "$fixtures"/issue-11/*.txt; do
    "$old" import -q --record --history "$hist" --host fixtures --format json "$f" >/dev/null 2>&1 || true
done
# A real run, for records with IOPS series and the inside-the-run figures.
runs="$work/in/runs.jsonl"
mkdir -p "$work/in/dir"
"$old" run -q --dir "$work/in/dir" --size 4M --runtime 1s --runs 2 --wait \
    --history "$runs" --host runner --format json >/dev/null 2>&1 || true
template="$work/in/template.jsonl"
# The real run's record at the policy's own scale, so that reports count it.
head -1 "$runs" | sed 's/"size":4194304/"size":4294967296/; s/"runtime":1.0/"runtime":60.0/; s/"write_runtime_ms":[0-9.e+]*/"write_runtime_ms":60000.0/' >"$template"
python3 "$here/bench/gen_history.py" "$template" "$work/in/days.jsonl" 40 --step-min 700 --host daily >/dev/null
python3 "$here/bench/gen_history.py" "$template" "$work/in/many.jsonl" 300 --step-min 90 --host many >/dev/null
python3 "$here/bench/gen_history.py" "$template" "$work/in/slow.jsonl" 12 --step-min 1500 --host slow >/dev/null
# make "slow" fail the threshold: 1200.5 IOPS by the formula, and the MB/s it is derived from
python3 - "$work/in/slow.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
mb_s = 1200.5 * 4096 / 1048576
for r in lines:
    r["metrics"].update(write_iops_formula=1200.5, write_bw_mb_s=mb_s, write_bw_bytes=mb_s * 1e6,
                        write_bw_mib_s=mb_s * 1e6 / 1048576)
open(sys.argv[1], "w").write("".join(json.dumps(r) + "\n" for r in lines))
PY
n=0
for f in "$fixtures"/fio-outputs/fio-3.33-io_uring-randwrite.json "$fixtures"/fio-outputs/fio-3.39-jsonplus-randwrite.json \
    "$fixtures"/fio-outputs/fio-3.33-psync-randwrite.txt "$fixtures"/fio-outputs/fio-3.16-json-randrw.json; do
    n=$((n + 1))
    "$old" import -q --host "node$n" --dir /data --format json "$f" >"$work/in/result$n.json" 2>/dev/null || true
done
cp "$work/in/result1.json" "$work/in/dup-result1.json"

# ---- the cases: name, then arguments --------------------------------------------------------
cases="$work/cases"
: >"$cases"
case_() { printf '%s\t%s\n' "$1" "$2" >>"$cases"; }
for f in "$fixtures"/fio-outputs/*.json "$fixtures"/fio-outputs/*.txt "$fixtures"/issue-11/*.txt; do
    b=$(basename "$f")
    for fmt in $formats; do
        case_ "import-$b-$fmt" "import --host h --format $fmt $f"
    done
    case_ "import-$b-etcd-md" "import --host h --policy etcd --format markdown $f"
    case_ "import-$b-etcd-html" "import --host h --policy etcd --format html $f"
    case_ "import-$b-etcd-table" "import --host h --policy etcd --format table $f"
    case_ "import-$b-strict-md" "import --host h --strict --policy etcd --format markdown $f"
    case_ "import-$b-assume-html" "import --host h --assume-job swimlane --format html $f"
done
for hh in fixtures:fixtures runs:runner days:daily many:many slow:slow; do
    h=${hh%%:*} host=${hh#*:}
    for fmt in $formats; do
        case_ "report-$h-$fmt" "report --since 100000d --host $host --history $work/in/$h.jsonl --format $fmt"
        case_ "report-$h-etcd-$fmt" "report --since 100000d --host $host --policy etcd --strict --history $work/in/$h.jsonl --format $fmt"
    done
done
fleet_in="$work/in/result1.json $work/in/result2.json $work/in/result3.json $work/in/result4.json $work/in/days.jsonl $work/in/slow.jsonl $work/in/runs.jsonl"
for fmt in $formats; do
    case_ "fleet-all-$fmt" "fleet --since 100000d --expect node1,node9,daily --format $fmt $fleet_in $work/in/dup-result1.json"
    case_ "fleet-pass-$fmt" "fleet --since 100000d --format $fmt $work/in/days.jsonl"
    case_ "fleet-none-$fmt" "fleet --since 1d --format $fmt $work/in/fixtures.jsonl"
    case_ "fleet-strict-$fmt" "fleet --since 100000d --strict --policy etcd --format $fmt $fleet_in"
done

# ---- run both ----------------------------------------------------------------------------------
differ=0
total=0
while IFS=$'\t' read -r name args; do
    [[ "$name" =~ ${ONLY:-.} ]] || continue
    widths=100
    case "$args" in *"format table"*) widths=${TABLE_WIDTHS:-"100 60"} ;; esac
    for width in $widths; do
        total=$((total + 1))
        for side in old new; do
            bin=${!side}
            # shellcheck disable=SC2086
            set +e
            COLUMNS=$width faketime -f "$at" "$bin" $args >"$work/$side/$name-$width.out" 2>"$work/$side/$name-$width.err"
            echo "exit $?" >>"$work/$side/$name-$width.err"
            set -e
        done
        # The commit each binary was built from is in its records (tool_version): not a
        # difference of the outputs.
        sed -Ei 's/ \(commit [^)]*\)//g' "$work/old/$name-$width.out" "$work/new/$name-$width.out"
        if ! cmp -s "$work/old/$name-$width.out" "$work/new/$name-$width.out" ||
            ! cmp -s "$work/old/$name-$width.err" "$work/new/$name-$width.err"; then
            differ=$((differ + 1))
            echo "differs: $name (COLUMNS=$width)"
            cp "$work/old/$name-$width.out" "$work/diff/$name-$width.old"
            cp "$work/new/$name-$width.out" "$work/diff/$name-$width.new"
        fi
    done
done <"$cases"
echo "$total outputs compared, $differ differ (in $work)"
[ "$differ" -eq 0 ]
