#!/usr/bin/env bash
# Compares two iopscheck binaries' `report` outputs, byte for byte, over histories: every
# format, to stdout, with the clock frozen (faketime) so that "generated" agrees. For a change
# that must not change what users see (how the report holds its runs, say).
#   bench/compare-outputs.sh OLD_BINARY NEW_BINARY HISTORY...
# Each history is listed (--list, under two policies), reported with --host all (table,
# markdown and summary: every group) and, for each host and engine it holds, in every format
# with --since 4000d and the default window.
# Prints one line per difference and exits 1 if there is any.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 OLD_BINARY NEW_BINARY HISTORY..." >&2; exit 2; }
command -v faketime >/dev/null || { echo "faketime is not installed (apt-get install faketime)" >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2"); shift 2
work=$(mktemp -d "${TMPDIR:-/tmp}/compare-outputs.XXXXXX")
trap 'rm -rf "$work"' EXIT
now=$(date -u '+%Y-%m-%d %H:%M:%S')
diffs=0 runs=0

one() { # label, args...
    local label=$1; shift
    for b in old new; do
        local bin=$old; [ $b = new ] && bin=$new
        set +e
        TZ=UTC COLUMNS=120 faketime -f "$now x0" "$bin" report "$@" >"$work/$b.out" 2>"$work/$b.err"
        echo $? >"$work/$b.rc"
        set -e
    done
    runs=$((runs + 1))
    for part in out err rc; do
        if ! cmp -s "$work/old.$part" "$work/new.$part"; then
            diffs=$((diffs + 1))
            echo "DIFFERS ($part): $label: report $*"
            diff <(head -c 200000 "$work/old.$part") <(head -c 200000 "$work/new.$part") | head -8 | sed "s/^/    /" || true
        fi
    done
}

for h in "$@"; do
    one "$h" --history "$h" --host all --since 4000d
    one "$h" --history "$h" --host all --since 4000d --format markdown
    one "$h" --history "$h" --host all --format summary
    one "$h" --history "$h" --list
    one "$h" --history "$h" --list --policy etcd
    # Each host and engine's group on its own, in every format.
    python3 - "$h" >"$work/groups" <<'PY'
import json, sys
seen = set()
for line in open(sys.argv[1], errors="replace"):
    try:
        r = json.loads(line)
        seen.add((r["host"], r["engine"]))
    except Exception:
        pass
for host, engine in sorted(seen):
    print(host, engine)
PY
    while read -r host engine; do
        for fmt in table json jsonl csv markdown prometheus junit html summary; do
            one "$h" --history "$h" --host "$host" --engine "$engine" --since 4000d --format "$fmt"
        done
        one "$h" --history "$h" --host "$host" --engine "$engine"
        one "$h" --history "$h" --host "$host" --engine "$engine" --format json --strict
    done <"$work/groups"
done
echo "$runs commands compared, $diffs differences"
[ "$diffs" -eq 0 ]
