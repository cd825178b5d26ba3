#!/usr/bin/env bash
# Runs the property-based fuzz tests (fio parsers, policy loader, history reader) with many
# more cases than `cargo test` does. cargo-fuzz needs a nightly toolchain; these use proptest on
# stable, so they run anywhere the tests do.
#
#   fuzz/run.sh            # 20,000 cases per property (a few minutes)
#   CASES=1000000 fuzz/run.sh   # longer: leave it running
set -euo pipefail
cd "$(dirname "$0")/.."
export PROPTEST_CASES="${CASES:-20000}"
cargo test --release --test fuzz_inputs --test fio_fixtures -- --test-threads=2
