#!/usr/bin/env bash
# Regenerates the README's "A whole interrupted stitch, scripted, in real time" figure from a
# fresh run, so anyone can check it:
#
#   scripts/full_stitch.sh
#
# It runs the committed stitch script (docs/screens/full_stitch.csv) live and headless on
# scenes/interrupted_stitch.toml with a recording, assesses the recording, and prints the loop
# statistics and the assessment's one-line summary (score, entry and exit distance from their
# marks [mm], largest suture tension [N]) and the closing gap of the incision [mm] from the
# assessment's JSON. Work files go to $STITCH_DIR (default: a new temporary directory). Needs a
# release build and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${STITCH_DIR:-$(mktemp -d)}"
mkdir -p "$dir"
cargo build --release --quiet --bin suture
bin="${CARGO_TARGET_DIR:-target}/release/suture"
"$bin" run scenes/interrupted_stitch.toml --headless --duration 10 \
  --device scripted:docs/screens/full_stitch.csv --record "$dir/full.surec"
"$bin" assess "$dir/full.surec" --out "$dir/report"
python3 - "$dir/report/full.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
gap = m.get("final_gap_mm")
print(f"final incision gap: {'-' if gap is None else f'{gap:.3f}'} mm")
PY
echo "commit $(git rev-parse --short HEAD), $(date -u +%F)"
