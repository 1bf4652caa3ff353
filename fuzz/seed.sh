#!/bin/sh
# Seed corpora for the step-further fuzz targets (docs/reliability.md, "Fuzzing"), from the
# project root: `fuzz/seed.sh [SUTURE_BINARY]` (default target/release/suture).
#   scene_step        the shipped scenes and the scene fixtures of earlier findings
#   recording_replay  short sessions recorded by `suture run` with the scripted drive
#   device_open       each shipped HID profile, 0xFF, then reports in its format
set -eu
bin=${1:-target/release/suture}
c=fuzz/corpus
mkdir -p $c/scene_step $c/recording_replay $c/device_open
cp scenes/*.toml tests/fixtures/fuzz/*.toml $c/scene_step/
drive=scripted:tests/fixtures/replay/knot_tying_drive.csv
for s in suturing knot_tying running_stitch; do
    "$bin" run scenes/$s.toml --headless --duration 0.06 --device $drive --no-realtime \
        --record $c/recording_replay/seed-$s.surec
done
"$bin" run scenes/instrument_tie.toml --headless --duration 0.06 --no-realtime \
    --device right=$drive,left=$drive --record $c/recording_replay/seed-instrument_tie.surec
# Long enough for a state digest (every 100 steps).
"$bin" run scenes/suturing.toml --headless --duration 0.25 --device $drive --no-realtime \
    --record $c/recording_replay/seed-suturing-digest.surec
python3 - <<'PY'
import math, struct
def rep(b): return bytes([len(b)]) + b
h = round(math.sqrt(0.5) * 32767)
stylus = b''
for k in range(8):
    r = bytes([1]) + struct.pack('<iii', 1000 * k, -500, 100000) + struct.pack('<hhhh', h, 0, h, 0) + bytes([k & 1, k])
    stylus += rep(r) + (b'\x00' if k % 2 else b'')
stylus += b'\xfe' + rep(bytes([1]) + bytes(22))
sm = (rep(bytes([1]) + struct.pack('<hhh', 350, -175, 0)) + rep(bytes([2]) + struct.pack('<hhh', 0, 0, -350))
      + rep(bytes([3, 3, 0])) + b'\x00' + rep(bytes([7, 1, 2, 3])) + rep(bytes([1, 0x5e])))
sm6 = rep(bytes([1]) + struct.pack('<hhhhhh', 350, 0, -350, 175, -175, 0)) + b'\x00' + rep(bytes([3, 1, 0]))
for name, reports in [('open_stylus', stylus), ('spacemouse', sm), ('spacemouse_6axis', sm6)]:
    t = open(f'devices/{name}.toml', 'rb').read()
    open(f'fuzz/corpus/device_open/{name}', 'wb').write(t + b'\xff' + reports)
PY
