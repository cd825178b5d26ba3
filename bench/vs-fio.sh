#!/usr/bin/env bash
# The project's benchmark: iopscheck's engine against fio, alternately, per back end, on tmpfs
# and on the disk. Builds the release binary, then runs bench/vs_fio.py (see its docstring).
#   bench/vs-fio.sh               # 5 pairs per row (about 10 minutes)
#   bench/vs-fio.sh --quick       # every table, tiny runs: the CI smoke test
#   bench/vs-fio.sh --full        # the Swimlane job as prescribed, 6 pairs (root, ~20 min)
#   bench/vs-fio.sh --rows direct,throttle,floor
#   bench/vs-fio.sh --disk-dir /data --pairs 9
set -euo pipefail
cd "$(dirname "$0")/.."
command -v fio >/dev/null || { echo "fio is not installed (apt-get install fio)" >&2; exit 2; }
[ -n "${IOPSCHECK_BENCH_BINARY:-}" ] || cargo build --release --quiet
exec python3 bench/vs_fio.py ${IOPSCHECK_BENCH_BINARY:+--binary "$IOPSCHECK_BENCH_BINARY"} "$@"
