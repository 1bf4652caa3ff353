#!/bin/sh
# The synthetic skills lab (issue #24) end to end: recordings (examples/synthetic_lab), the
# session library, the benchmark from the experts, the sessions and the cohort dashboard.
# Usage: scripts/synthetic_lab.sh [DIR] (default lab/). Run from the repository root.
set -eu
dir=${1:-lab}
cargo build --release --quiet
cargo run --release --quiet --example synthetic_lab -- "$dir" >/dev/null
suture=${CARGO_TARGET_DIR:-target}/release/suture
"$suture" assess "$dir"/experts/*.surec "$dir"/trainees/*.surec --out "$dir/assessment" --no-knot >/dev/null
"$suture" benchmark "$dir"/experts/*.surec --db "$dir/assessment/library.sqlite"
"$suture" sessions --db "$dir/assessment/library.sqlite"
"$suture" cohort --db "$dir/assessment/library.sqlite"
