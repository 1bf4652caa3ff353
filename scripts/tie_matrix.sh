#!/usr/bin/env bash
# How robust the scripted instrument tie is (issues #22, #23): ties each knot under several
# roundings of the same physics and prints the outcomes as a Markdown table, so a change that
# alters rounding (a faster solve, halving unconverged steps, another plan) can be judged by
# how many roundings still tie, not by whether today's exact bits do:
#
#   scripts/tie_matrix.sh [SCENE] [KNOT ...]   # defaults: scenes/instrument_tie_fresh.toml,
#                                              # square granny surgeons
#
# The roundings (TIE_MATRIX_ROUNDINGS, space-separated; default all six):
#   main         the scene as it is
#   gaps         `gaps = true` added to [solver] (the self-contact Woodbury columns crossing the
#                gaps between a knot's clusters: the same solution up to rounding)
#   nudgeN       every suture node moved by at most 1 pm per axis, seed N (tie_script's
#                `nudge`, TIE_NUDGE=N)
#   gaps+nudgeN  both
# TIE_MATRIX_SOLVER adds lines to the scene's [solver] table (after its `iterations` line),
# e.g. TIE_MATRIX_SOLVER='subdivide = 4'; TIE_MATRIX_JOBS runs that many ties at once (default
# 2); TIE_MATRIX_UPTO ties only the first N throws; TIE_MATRIX_REPORT_ONLY=1 prints the table
# from the logs already in TIE_MATRIX_DIR without tying again. Every other TIE_* variable in the
# environment reaches tie_script (its development aids). Each tie is `tie_script KNOT --run`,
# 2–5 minutes on this 2-core VM; the logs stay in $TIE_MATRIX_DIR (default: a new temporary
# directory). Each cell reads: the knot the project's topology names at the end, the wound's
# gap under it [mm], the unconverged steps and the Newton iterations a step, and whether the
# suture broke. Needs a release build and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
scene="${1:-scenes/instrument_tie_fresh.toml}"
shift || true
knots=("$@")
[ ${#knots[@]} -eq 0 ] && knots=(square granny surgeons)
for k in "${knots[@]}"; do
  case "$k" in square | granny | surgeons) ;; *)
    echo "tie_matrix: unknown knot '$k' (square, granny, surgeons)" >&2
    exit 2
    ;;
  esac
done
[ -f "$scene" ] || {
  echo "tie_matrix: no scene file '$scene'" >&2
  exit 2
}
grep -q '^iterations = ' "$scene" || {
  echo "tie_matrix: $scene: no 'iterations = ' line in [solver] to add lines after" >&2
  exit 2
}
roundings="${TIE_MATRIX_ROUNDINGS:-main gaps nudge1 nudge2 gaps+nudge1 gaps+nudge2}"
for r in $roundings; do
  [[ "$r" =~ ^(main|gaps|nudge[0-9]+|gaps\+nudge[0-9]+)$ ]] || {
    echo "tie_matrix: unknown rounding '$r' (main, gaps, nudgeN, gaps+nudgeN)" >&2
    exit 2
  }
done
dir="${TIE_MATRIX_DIR:-$(mktemp -d)}"
mkdir -p "$dir"
cargo build --release --quiet --example tie_script
bin="${CARGO_TARGET_DIR:-target}/release/examples/tie_script"
solver="${TIE_MATRIX_SOLVER:-}"
# The scene, and the scene with `gaps = true`, each with the extra [solver] lines.
python3 - "$scene" "$dir" "$solver" <<'PY'
import sys
scene, d, extra = sys.argv[1:]
text = open(scene).read()
lines = text.split("\n")
i = next(k for k, l in enumerate(lines) if l.startswith("iterations = "))
add = [l.strip() for l in extra.replace(";", "\n").split("\n") if l.strip()]
for name, more in (("main", []), ("gaps", ["gaps = true"])):
    out = lines[: i + 1] + add + more + lines[i + 1 :]
    open(f"{d}/{name}.toml", "w").write("\n".join(out))
PY
jobs="$dir/jobs.txt"
: >"$jobs"
for r in $roundings; do
  for k in "${knots[@]}"; do
    echo "$r $k" >>"$jobs"
  done
done
export TIE_MATRIX_BIN="$bin" TIE_MATRIX_OUT="$dir"
# One tie: the scene for its rounding, the nudge if any.
one() {
  local r="$1" k="$2" base="main" seed=""
  case "$r" in
  gaps) base=gaps ;;
  nudge*) seed="${r#nudge}" ;;
  gaps+nudge*) base=gaps seed="${r#gaps+nudge}" ;;
  esac
  env TIE_SCENE="$TIE_MATRIX_OUT/$base.toml" ${seed:+TIE_NUDGE=$seed} \
    ${TIE_MATRIX_UPTO:+TIE_UPTO=$TIE_MATRIX_UPTO} \
    "$TIE_MATRIX_BIN" "$k" --run >"$TIE_MATRIX_OUT/$r.$k.log" 2>&1 || true
}
export -f one
# TIE_MATRIX_REPORT_ONLY=1 (with TIE_MATRIX_DIR): the table from the logs already there.
if [ -z "${TIE_MATRIX_REPORT_ONLY:-}" ]; then
  xargs -P "${TIE_MATRIX_JOBS:-2}" -L 1 bash -c 'one "$@"' _ <"$jobs"
fi
python3 - "$dir" "$roundings" "${knots[*]}" "$(git rev-parse --short HEAD)" "$scene" "$solver" <<'PY'
import re, sys
d, roundings, knots, commit, scene, solver = sys.argv[1:]
roundings, knots = roundings.split(), knots.split()
def cell(r, k):
    try:
        log = open(f"{d}/{r}.{k}.log").read().split("\n")
    except OSError:
        return "no log"
    lines = [l for l in log if l.startswith("wraps")]
    broke = [l for l in log if "suture broken at" in l]
    if not lines:
        return "no result (see the log)"
    last = lines[-1]
    name = re.search(r'knot Some\(\(Some\("([^"]*)"\)', last)
    gap = re.search(r"gap (-?[0-9.]+) mm", last)
    unc = re.search(r"unconverged (\d+)", last)
    its = re.search(r"iterations (\d+)", last)
    t = re.search(r"([0-9.]+) s:", last)
    per = float(its.group(1)) / (float(t.group(1)) * 1e3) if its and t else float("nan")
    out = "%s, %s mm (%s unconverged, %.2f it/step)" % (
        name.group(1) if name else "?", gap.group(1) if gap else "?",
        unc.group(1) if unc else "?", per)
    if broke:
        out += "; the suture broke (%s)" % broke[0].strip()
    return out
extra = f", [solver] + `{solver}`" if solver else ""
print(f"{scene}{extra} at {commit}:\n")
print("| rounding | " + " | ".join(knots) + " |")
print("|---|" + "---|" * len(knots))
for r in roundings:
    print(f"| {r} | " + " | ".join(cell(r, k) for k in knots) + " |")
PY
echo
echo "logs: $dir"
