#!/usr/bin/env bash
# The prescribed test's verdict against `run --sustained`'s, on the emulated burst disk
# (bench/burstdisk.sh, docs/sustained.md), for several bucket sizes, with the time each took.
#   bench/sustained.sh [BUCKET...]        (default: 1500 3000 6000 30000 100000 I/Os)
# The disk serves 1,000 I/Os a second while its bucket holds credits and 250 after. The test
# is Swimlane's job scaled to the emulated disk (direct 4k random writes, 64 in flight through
# libaio, 32 MiB, 6 s, end fsync) with a minimum of 450 IOPS, which the burst meets and the
# baseline does not; --sustained runs with a budget of 60 s. The bucket is refilled before
# each test. Prints a Markdown table; needs root, FUSE and a built target/release/iopscheck
# (or IOPSCHECK=path).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${IOPSCHECK:-$here/../target/release/iopscheck}"
[ -x "$bin" ] || { echo "sustained.sh: build $bin first (cargo build --release)" >&2; exit 2; }
buckets=("$@")
[ ${#buckets[@]} -gt 0 ] || buckets=(1500 3000 6000 30000 100000)
burst=1000 baseline=250 budget=60s

work="$(mktemp -d)"
trap 'bash "$here/burstdisk.sh" down "$work/disk" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
"$bin" policy show swimlane |
    sed -e 's/size: 4g/size: 32m/' -e 's/runtime: 60s/runtime: 6s/' \
        -e 's/threshold: 3000/threshold: 450/' -e 's/threshold: 11.7/threshold: 1.8/' \
        -e 's/  end_fsync: true/  end_fsync: true\n  direct: true/' \
        -e 's/ioengine: posixaio/ioengine: libaio/' -e 's/iodepth: 1/iodepth: 64/' \
        -e 's/engines: \[posixaio, io_uring\]/engines: [libaio]/' >"$work/policy.yaml"

# One test: its verdict, its seconds, and the level it judged (the sustained one where
# burst credits ran out, else the run's mean), in one line.
one() {
    local t0 t1 out
    t0=$(date +%s.%N)
    out=$("$bin" run --no-history --format json --policy "$work/policy.yaml" \
        --dir "$work/disk/fs" "$@" 2>"$work/stderr" || true)
    t1=$(date +%s.%N)
    jq -r --arg s "$(echo "$t1 - $t0" | bc)" '
        [ .verdict,
          ($s | tonumber | . * 10 | round / 10 | tostring),
          (.rules[0].value | round | tostring),
          (if .bursts then (.bursts[0].sustained_iops | round | tostring)
                            + " after " + (.bursts[0].step_s * 10 | round / 10 | tostring) + " s"
           else "no step" end) ] | join("\t")' <<<"$out"
}

echo "| bucket (I/Os) | empties at (s) | prescribed test | took (s) | its mean | step | --sustained | took (s) | its mean | step |"
echo "| ---: | ---: | --- | ---: | ---: | --- | --- | ---: | ---: | --- |"
for b in "${buckets[@]}"; do
    bash "$here/burstdisk.sh" up "$work/disk" --burst $burst --baseline $baseline --bucket "$b" >/dev/null
    empties=$(echo "scale=1; $b / ($burst - $baseline)" | bc)
    IFS=$'\t' read -r v1 s1 m1 st1 < <(one --runs 1)
    echo refill >"$work/disk/fuse/control"
    IFS=$'\t' read -r v2 s2 m2 st2 < <(one --sustained --sustained-budget $budget)
    bash "$here/burstdisk.sh" down "$work/disk" >/dev/null
    echo "| $b | $empties | ${v1^^} | $s1 | $m1 | $st1 | ${v2^^} | $s2 | $m2 | $st2 |"
done
