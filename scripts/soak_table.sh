#!/usr/bin/env bash
# Regenerates one column of the ten-minute soak table in docs/reliability.md (and the README's
# "Real time for ten minutes" figure) from a fresh run, so anyone can check them:
#
#   scripts/soak_table.sh [SECONDS] [within|wide]      # defaults: 600 within
#
# It writes the scripted stitch and soak (examples/stitch_script.rs), runs it live and headless
# on scenes/interrupted_stitch.toml with a recording, replays the recording with --verify, exports
# its steps to CSV and prints the table's rows as Markdown, from what the binary itself reported
# (loop statistics, memory, guard events, replay) and from the recorded suture tension. A short
# run (e.g. 30) checks the script itself; the table's figures are from 600 s. Work files go to
# $SOAK_DIR (default: a new temporary directory). Needs a release build and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-600}"
loops="${2:-within}"
case "$loops" in within | wide) ;; *)
  echo "usage: scripts/soak_table.sh [SECONDS] [within|wide]" >&2
  exit 2
  ;;
esac
dir="${SOAK_DIR:-$(mktemp -d)}"
mkdir -p "$dir"
cargo build --release --quiet --bin suture --example stitch_script
bin="${CARGO_TARGET_DIR:-target}/release"
extra=()
[ "$loops" = wide ] && extra=(--loops wide)
"$bin/examples/stitch_script" --soak "$secs" "${extra[@]}" >"$dir/soak.csv"
"$bin/suture" run scenes/interrupted_stitch.toml --headless --duration "$secs" \
  --device "scripted:$dir/soak.csv" --record "$dir/soak.surec" | tee "$dir/run.txt"
t0=$(date +%s.%N)
"$bin/suture" replay "$dir/soak.surec" --headless --verify | tee "$dir/replay.txt"
t1=$(date +%s.%N)
"$bin/suture" export "$dir/soak.surec" --csv "$dir/csv" >/dev/null
python3 - "$dir" "$secs" "$loops" "$(git rev-parse --short HEAD)" "$t0" "$t1" <<'PY'
import csv, os, re, sys
d, secs, loops, commit, t0, t1 = sys.argv[1:]
run = open(os.path.join(d, "run.txt")).read()
replay = open(os.path.join(d, "replay.txt")).read()
def line(prefix, text=run):
    for l in text.splitlines():
        if l.startswith(prefix):
            return l
    return "(not reported)"
tension = []
with open(os.path.join(d, "csv", "steps.csv")) as f:
    for row in csv.DictReader(f):
        v = float(row["tension_n"])
        if v == v:
            tension.append(v)
tension.sort()
def pct(q):
    return tension[min(len(tension) - 1, int(q * len(tension)))] if tension else float("nan")
size = os.path.getsize(os.path.join(d, "soak.surec")) / 1e6
print()
print(f"| figure ({secs} s, loops {loops}, commit {commit}) | measured |")
print("|---|---|")
print(f"| haptic loop | {line('haptic right')} |")
print(f"| physics loop | {line('physics period')} |")
print(f"| memory | {line('memory:')} |")
print(f"| threads | {line('wall ')} |")
print(f"| the suture | tension {pct(0.5):.2f} N median, {pct(0.99):.2f} N at the 99th percentile, "
      f"{tension[-1] if tension else float('nan'):.1f} N peak |")
verified = [l for l in replay.splitlines() if l.strip()]
print(f"| recording | {size:.0f} MB; `suture replay --verify`: {verified[-1] if verified else '(nothing)'}, "
      f"in {float(t1) - float(t0):.0f} s |")
PY
