#!/usr/bin/env bash
# cli_array: array geometry from the file (issue 46 item 2): /array/position (wavelengths, or
# metres with /radar's carrier) and /array/calibration, read by `run` and drawn by
# `gen --array`. A 4 x 4 planar array (x-z plane) sees a target at azimuth 20, elevation 10
# in the --look 20,10 beam, stronger than at elevation -10 (which a line cannot tell apart); its
# /steering equals NumPy's exp(2 pi i p . k) written here, in metres too; irregular positions
# likewise; a scene drawn with a calibration error whose file carries the calibration gives
# the clean scene's detections, and loses the target once the calibration is removed; each
# malformed /array is one line, exit 1. Needs python3 with numpy and h5py (to write the
# arrays): skipped (77) without. Env: RTSTAP_BIN.
set -u
B=${RTSTAP_BIN:?RTSTAP_BIN must name the rtstap binary}
T=$(mktemp -d "${TMPDIR:-/tmp}/rtstap_cli_array.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../support/cli_expect.sh" # fail, expect
h5py_python
[ -n "$py" ] || { echo "cli_array: no python3 with numpy and h5py"; exit 77; }

"$py" - "$T" <<'PY'
import sys
import h5py, numpy as np
t = sys.argv[1]
ura = np.array([(m * 0.5, 0.0, n * 0.5) for m in range(4) for n in range(4)])
def write(name, pos=None, units="wavelengths", cal=None, carrier=None, spacing=None):
    with h5py.File(f"{t}/{name}.h5", "w") as f:
        if pos is not None:
            d = f.create_dataset("array/position", data=pos)
            if units is not None:
                d.attrs["units"] = units
        if cal is not None:
            f.create_dataset("array/calibration", data=np.asarray(cal, dtype=np.complex64))
        if carrier is not None:
            f.create_group("radar").attrs["carrier_frequency_hz"] = carrier
        if spacing is not None:
            f.require_group("array").attrs["element_spacing_wavelengths"] = spacing
write("ura", ura)
write("ura_m", ura * 299792458.0 / 450e6, units="m", carrier=450e6)
rng = np.random.default_rng(46)
irr = np.column_stack([np.sort(rng.uniform(0, 6, 12)), rng.uniform(-0.4, 0.4, 12), rng.uniform(-1, 1, 12)])
write("irr", irr)
g = np.exp(2j * np.pi * rng.uniform(size=18)) * rng.uniform(0.7, 1.3, 18)
write("cal", cal=g)
# malformed
write("bad_shape", ura[:, :2])
write("no_units", ura, units=None)
write("feet", ura, units="feet")
nan = ura.copy(); nan[5, 2] = np.nan
write("nan", nan)
write("zero_gain", cal=np.r_[np.ones(17), 0])
write("both", ura, spacing=0.5)
write("empty")
PY

run_opts=(--doppler-order 3 --detector kelly --training-window sliding --block 40 --guard 2
    --backend cpu --quiet)
# the target's cell (argv 3) is detected in beam 0, with a larger statistic than in any other
# beam that detects it there (a look beside it sees its sidelobe: the planar array's elevation
# beam is wide, so beside it a 20 dB target may still pass, weaker)
in_beam0='import json, sys
d = json.load(open(sys.argv[1]))["detection_list"]
cell = int(sys.argv[2])
at = {}
for x in d:
    if x["range_cell"] == cell:
        at[x["beam"]] = max(at.get(x["beam"], 0), x["statistic"])
assert 0 in at and all(s < at[0] for b, s in at.items() if b != 0), at'

# the planar array: the target at (20, 10) in beam 0 only
expect 0 "$B" gen --preset ward --array "$T/ura.h5" --pulses 16 --range-gates 200 --seed 5 \
    --target 120:0.34202:60:0:10 --quiet -o "$T/ura_scene.h5"
expect 0 "$B" run --input "$T/ura_scene.h5" -o "$T/ura_run.h5" "${run_opts[@]}" --training 100 \
    --look '20,10;20,-10;-20,10;20,30' --json "$T/ura.json"
python3 -c "$in_beam0" "$T/ura.json" 120 || fail "URA: the target not strongest in beam 0 (20, 10)"
# the same geometry in metres: the same steering
cp "$T/ura_scene.h5" "$T/ura_scene_m.h5"
"$py" - "$T" <<'PY' || fail "the URA's /steering against NumPy"
import sys
import h5py, numpy as np
t = sys.argv[1]
with h5py.File(f"{t}/ura_scene_m.h5", "r+") as f:   # the scene's array, given in metres
    p = f["array/position"][...]
    del f["array/position"]
    d = f.create_dataset("array/position", data=p * 299792458.0 / 450e6)
    d.attrs["units"] = "m"
s = h5py.File(f"{t}/ura_run.h5", "r")["steering"]
looks = list(zip(s.attrs["az_deg"], s.attrs["el_deg"]))
assert looks == [(20, 10), (20, -10), (-20, 10), (20, 30)], looks
want = []
for az, el in looks:
    a, e = np.radians(az), np.radians(el)
    k = np.array([np.cos(e) * np.sin(a), np.cos(e) * np.cos(a), np.sin(e)])
    m, n = np.meshgrid(np.arange(4), np.arange(4), indexing="ij")
    sp = np.exp(2j * np.pi * 0.5 * (m * k[0] + n * k[2])).reshape(-1)   # x = m/2, z = n/2
    want.append(np.kron(sp, [0, 1, 0]))
assert np.abs(s[...] - np.array(want)).max() < 1e-5, np.abs(s[...] - np.array(want)).max()
PY
expect 0 "$B" run --input "$T/ura_scene_m.h5" -o "$T/ura_run_m.h5" "${run_opts[@]}" --training 100 \
    --look '20,10;20,-10;-20,10;20,30'
"$py" -c "
import h5py, numpy as np, sys
a = h5py.File(sys.argv[1], 'r')['steering'][...]; b = h5py.File(sys.argv[2], 'r')['steering'][...]
assert np.abs(a - b).max() < 1e-5, np.abs(a - b).max()" "$T/ura_run.h5" "$T/ura_run_m.h5" ||
    fail "positions in metres: another steering"

# irregular positions: steering against NumPy, the target in its beam
expect 0 "$B" gen --preset ward --array "$T/irr.h5" --pulses 16 --range-gates 200 --seed 7 \
    --target 120:-0.5:-45:0 --quiet -o "$T/irr_scene.h5"
expect 0 "$B" run --input "$T/irr_scene.h5" -o "$T/irr_run.h5" "${run_opts[@]}" --training 80 \
    --look '-30;30;0' --json "$T/irr.json"
python3 -c "$in_beam0" "$T/irr.json" 120 || fail "irregular: the target not strongest in beam 0 (-30)"
"$py" - "$T" <<'PY' || fail "irregular /steering against NumPy"
import sys
import h5py, numpy as np
t = sys.argv[1]
p = h5py.File(f"{t}/irr.h5", "r")["array/position"][...]
s = h5py.File(f"{t}/irr_run.h5", "r")["steering"][...]
for b, az in enumerate((-30, 30, 0)):
    a = np.radians(az)
    want = np.kron(np.exp(2j * np.pi * (p[:, 0] * np.sin(a) + p[:, 1] * np.cos(a))), [0, 1, 0])
    assert np.abs(s[b] - want).max() < 1e-5, (b, np.abs(s[b] - want).max())
PY

# calibration: the miscalibrated scene with its calibration = the clean scene
expect 0 "$B" gen --preset ward --range-gates 200 --target 120:0.34202:60:0 --seed 11 --quiet -o "$T/clean.h5"
expect 0 "$B" gen --preset ward --array "$T/cal.h5" --range-gates 200 --target 120:0.34202:60:0 \
    --seed 11 --quiet -o "$T/miscal.h5"
cp "$T/miscal.h5" "$T/stripped.h5"
"$py" -c "
import h5py, sys
with h5py.File(sys.argv[1], 'r+') as f: del f['array/calibration']" "$T/stripped.h5"
for x in clean miscal stripped; do
    expect 0 "$B" run --input "$T/$x.h5" -o "$T/r_$x.h5" "${run_opts[@]}" --training 120 \
        --look '20;-20;0' --json "$T/$x.json"
done
"$py" - "$T" <<'PY' || fail "calibration: the miscalibrated scene's detections"
import json, sys
t = sys.argv[1]
det = {x: json.load(open(f"{t}/{x}.json"))["detection_list"] for x in ("clean", "miscal", "stripped")}
key = lambda d: [(x["beam"], x["doppler_bin"], x["range_cell"]) for x in d]
assert key(det["clean"]) == key(det["miscal"]) and any(k[0] == 0 and k[2] == 120 for k in key(det["clean"])), det
for a, b in zip(det["clean"], det["miscal"]):
    assert abs(a["statistic"] - b["statistic"]) < 1e-3 * a["statistic"], (a, b)
assert not any(k[0] == 0 and k[2] == 120 for k in key(det["stripped"])), det["stripped"]
PY
"$py" -c "
import h5py, sys
f = h5py.File(sys.argv[1], 'r')
assert 'calibration' in f['array'] and 'position' not in f['array']
assert f['array'].attrs['element_spacing_wavelengths'] == 0.5" "$T/miscal.h5" || fail "gen's /array"
# Python: Stream of the planar scene (look= through its /array) gives run's detections;
# run/Engine with position= or calibration= give run's weights bit for bit
pkg=$(dirname "$B")/python
if ls "$pkg"/rtstap/_rtstap*.so >/dev/null 2>&1; then
    PYTHONPATH=$pkg "$py" - "$T" <<'PY' || fail "Python through /array"
import json, sys
import rtstap
t = sys.argv[1]
got = []
def each(cpi, input_cpi, r):
    got.extend((int(d["beam"]), int(d["doppler_bin"]), int(d["range_cell"])) for d in r.detections)
with rtstap.Stream(f"{t}/ura_scene.h5", each, look=[(20, 10), (20, -10), (-20, 10), (20, 30)],
                   doppler_order=3, training=100, detector="kelly", training_window="sliding",
                   block=40, guard=2, backend="cpu") as s:
    s.run()
want = [(x["beam"], x["doppler_bin"], x["range_cell"]) for x in json.load(open(f"{t}/ura.json"))["detection_list"]]
assert got == want, (got, want)
# Engine / run with the file's /array given as keywords: run's weights bit for bit
import h5py, numpy as np
with h5py.File(f"{t}/ura_scene.h5", "r") as f:
    x, pos = f["data/iq"][...], f["array/position"][...]
r = rtstap.run(x, look=[(20, 10), (20, -10), (-20, 10), (20, 30)], position=pos, doppler_order=3,
               training=100, detector="kelly", training_window="sliding", block=40, guard=2,
               backend="cpu")
w = h5py.File(f"{t}/ura_run.h5", "r")["weights"][...]
assert np.array_equal(w, r.weights), np.abs(w - r.weights).max()
with h5py.File(f"{t}/miscal.h5", "r") as f:
    x, g = f["data/iq"][...], f["array/calibration"][...]
r = rtstap.run(x, look=[20, -20, 0], calibration=g, element_spacing=0.5, doppler_order=3,
               training=120, detector="kelly", training_window="sliding", block=40, guard=2,
               backend="cpu")
assert np.array_equal(h5py.File(f"{t}/r_miscal.h5", "r")["weights"][...], r.weights)
try:
    rtstap.run(x, calibration=g, doppler_order=3, training=120, backend="cpu")
    raise AssertionError("calibration without look: not refused")
except TypeError:
    pass
PY
fi

# info says what the file's /array holds
expect 0 "$B" info "$T/miscal.h5"
grep -q 'array: 18 elements, calibration (/array/calibration)' "$T/out" || fail "info: the array: $(cat "$T/out")"
expect 0 "$B" info "$T/ura_scene.h5" --json "$T/info.json"
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['array_positions'] is True and d['array_calibration'] is False, d" "$T/info.json" || fail "info --json: the array"
# stream --input steers the default beams through /array as run does: the same detections
so=(--doppler-order 3 --training 100 --beams 5 --detector kelly --training-window sliding --block 40
    --guard 2 --backend cpu --quiet)
expect 0 "$B" stream --input "$T/ura_scene.h5" "${so[@]}" --json "$T/stream.json"
expect 0 "$B" run --input "$T/ura_scene.h5" -o "$T/ura_default.h5" "${so[@]}" --json "$T/run_default.json"
if ls "$pkg"/rtstap/_rtstap*.so >/dev/null 2>&1; then
    # Python's Stream steers its default beams through the recording's /array too: run's
    # steering and detections exactly
    PYTHONPATH=$pkg "$py" - "$T" <<'PY' || fail "Python: the default beams through /array"
import sys
import h5py, numpy as np
import rtstap
t = sys.argv[1]
got = []
def each(cpi, input_cpi, r):
    got.extend((cpi, int(d["beam"]), int(d["doppler_bin"]), int(d["range_cell"])) for d in r.detections)
with rtstap.Stream(f"{t}/ura_scene.h5", each, doppler_order=3, training=100, beams=5, detector="kelly",
                   training_window="sliding", block=40, guard=2, backend="cpu",
                   output=f"{t}/py_default.h5") as s:
    s.run()
with h5py.File(f"{t}/ura_default.h5", "r") as f, h5py.File(f"{t}/py_default.h5", "r") as g:
    assert np.array_equal(f["steering"][...], g["steering"][...]), "steering"
    d = f["detections"][()]
    one = "cpi" not in d.dtype.names   # a file of one CPI: its detections carry no cpi
    want = [(0 if one else int(x["cpi"]), int(x["beam"]), int(x["doppler_bin"]), int(x["range_cell"])) for x in d]
assert got == want and len(got) > 0, (got, want)
PY
fi
python3 -c "
import json, sys
s, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert s['detections_per_cpi'] == r['detections'] > 0, (s['detections_per_cpi'], r['detections'])" \
    "$T/stream.json" "$T/run_default.json" || fail "stream --input through /array"
"$py" -c "
import h5py, numpy as np, sys
s = h5py.File(sys.argv[1], 'r')['steering']
u = -1 + (2 * np.arange(5) + 1) / 5
assert np.allclose(s.attrs['az_deg'], np.degrees(np.arcsin(u))) and (s.attrs['el_deg'] == 0).all()" \
    "$T/ura_default.h5" || fail "run: the default beams through /array"
# plot: the range-Doppler and SINR-loss pictures; no angle-Doppler or adapted response (their
# axis is the line's sine-angle)
expect 0 "$B" plot --input "$T/ura_scene.h5" --result "$T/ura_run.h5" --output-dir "$T/pics"
[ -s "$T/pics/range_doppler.png" ] && [ -s "$T/pics/sinr_loss.png" ] && [ ! -e "$T/pics/angle_doppler.png" ] &&
    [ ! -e "$T/pics/adapted_response.png" ] &&
    grep -q "no adapted_response.png: .*uniform line's sine-angle" "$T/err" || fail "plot of a planar scene"
# the exact covariance of a scene drawn through a geometry (its positions and gains): the run's
# adaptive loss follows Reed-Mallett-Brennan's law against it (|z| < 4), which a covariance
# that missed the geometry would not (rho far from (K+2-N)/(K+1), or above 1)
expect 0 "$B" sinr --input "$T/ura_scene.h5" --result "$T/ura_run.h5" -o "$T/sinr.h5" --json "$T/sinr.json"
python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))['summary']
assert s['rmb_applicable'] and abs(s['z']) < 4 and 0 < s['rho_mean'] < 1, s" "$T/sinr.json" ||
    fail "sinr on a planar scene: RMB ($(head -c 400 "$T/sinr.json" 2>/dev/null))"
expect 0 "$B" sinr --input "$T/miscal.h5" --result "$T/r_miscal.h5" -o "$T/sinr_m.h5" --json "$T/sinr_m.json"
python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))['summary']
assert s['rmb_applicable'] and abs(s['z']) < 4 and 0 < s['rho_mean'] < 1, s" "$T/sinr_m.json" ||
    fail "sinr on a miscalibrated line: RMB"

# malformed /array: one line, exit 1
for bad in bad_shape no_units feet nan both; do
    expect 1 "$B" gen --preset ward --array "$T/$bad.h5" --quiet -o "$T/x.h5" || continue
    [ "$(wc -l < "$T/err")" = 1 ] || fail "$bad: more than one line: $(cat "$T/err")"
done
grep -q "units 'feet'" "$T/err" 2>/dev/null || true
expect 1 "$B" gen --preset ward --array "$T/zero_gain.h5" --quiet -o "$T/x.h5" &&
    grep -q "channel 17's gain is zero" "$T/err" || fail "a zero gain"
expect 1 "$B" gen --preset ward --array "$T/empty.h5" --quiet -o "$T/x.h5" &&
    grep -q 'no /array/position or /array/calibration' "$T/err" || fail "an empty /array"
expect 2 "$B" gen --preset ward --array "$T/ura.h5" --channels 5 --quiet -o "$T/x.h5" &&
    grep -q 'has 16 elements' "$T/err" || fail "--channels against --array"
# run refuses an input whose /array does not fit its cube
cp "$T/clean.h5" "$T/clean_bad.h5"
"$py" -c "
import h5py, numpy as np, sys
with h5py.File(sys.argv[1], 'r+') as f:
    del f['array'].attrs['element_spacing_wavelengths']
    d = f.create_dataset('array/position', data=np.zeros((17, 3))); d.attrs['units'] = 'wavelengths'" "$T/clean_bad.h5"
expect 1 "$B" run --input "$T/clean_bad.h5" -o "$T/x.h5" --quiet &&
    grep -q "must be (18, 3)" "$T/err" || fail "run: /array/position of 17 elements for 18 channels"
# metres with no carrier in the file (gen takes its own --carrier; run has only the file's)
cp "$T/clean.h5" "$T/clean_m.h5"
"$py" -c "
import h5py, numpy as np, sys
with h5py.File(sys.argv[1], 'r+') as f:
    del f['array'].attrs['element_spacing_wavelengths']
    del f['radar'].attrs['carrier_frequency_hz']
    d = f.create_dataset('array/position', data=np.zeros((18, 3))); d.attrs['units'] = 'm'" "$T/clean_m.h5"
expect 1 "$B" run --input "$T/clean_m.h5" -o "$T/x.h5" --quiet &&
    grep -q "in metres but the file has no /radar carrier_frequency_hz" "$T/err" || fail "run: metres without a carrier"
[ ! -e "$T/x.h5" ] || fail "a refused command wrote its output"
[ "$fails" = 0 ] || exit 1
echo "cli_array: ok"
