#!/usr/bin/env bash
# cli_look: beams in physical units (issue 46 item 1): `run --look AZ[,EL]`, `--sector
# AZ1:AZ2[,EL]` with `--beams`, `--doppler-hz` / `--doppler-mps` from the input's /radar. A
# Ward scene's target at azimuth 20 degrees is detected in the --look 20 beam (Kelly) and in
# --sector's beam at 20, not in the others; /steering's attributes say the angles and the
# Doppler, and its vectors equal NumPy's a(u) (x) taps written here (u = cos el sin az; the
# Doppler taps: the Hann-windowed DFT of the target's pulses in the bins around it); the usage
# errors (exit 2) name what is missing. Env: RTSTAP_BIN.
set -u
B=${RTSTAP_BIN:?RTSTAP_BIN must name the rtstap binary}
T=$(mktemp -d "${TMPDIR:-/tmp}/rtstap_cli_look.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../support/cli_expect.sh" # fail, expect, h5py_python

# the target at u = sin(20 deg) = 0.34202, 60 Hz (PRF 300: 0.2 cycles/pulse, bin 4 of 18)
expect 0 "$B" gen --preset ward --range-gates 200 --target 120:0.34202:60:0 --seed 11 --quiet \
    -o "$T/s.h5"
common=(--input "$T/s.h5" --doppler-order 3 --training 120 --detector kelly --training-window sliding
    --block 40 --guard 2 --backend cpu --quiet)
expect 0 "$B" run "${common[@]}" -o "$T/look.h5" --look '20;-20' --look 0,10 --json "$T/look.json"
expect 0 "$B" run "${common[@]}" -o "$T/sector.h5" --sector -40:40 --beams 5 --window hann \
    --doppler-hz 60 --json "$T/sector.json"
expect 0 "$B" run "${common[@]}" -o "$T/mps.h5" --look 20 --window hann \
    --doppler-mps 20 --json "$T/mps.json"
python3 - "$T" <<'PY' || fail "the target's detections"
import json, sys
t = sys.argv[1]
for name, beam in (("look", 0), ("sector", 3), ("mps", 0)):
    d = json.load(open(f"{t}/{name}.json"))
    hits = {(x["beam"], x["doppler_bin"], x["range_cell"]) for x in d["detection_list"]}
    assert (beam, 4, 120) in hits, (name, hits)
    assert not any(r == 120 and b != beam for b, _, r in hits), (name, hits)
PY
h5py_python # $py: numpy and h5py, or ""
if [ -n "$py" ]; then
    "$py" - "$T" <<'PY' || fail "/steering's attributes and vectors against NumPy"
import sys
import h5py, numpy as np
t = sys.argv[1]
C, P, Q, D = 18, 18, 3, 18
def ula(az, el):
    u = np.cos(np.radians(el)) * np.sin(np.radians(az))
    return np.exp(2j * np.pi * 0.5 * np.arange(C) * u)
with h5py.File(f"{t}/look.h5", "r") as f:
    s = f["steering"]
    assert list(s.attrs["az_deg"]) == [20, -20, 0] and list(s.attrs["el_deg"]) == [0, 0, 10]
    assert "doppler_hz" not in s.attrs
    taps = np.array([0, 1, 0])
    want = np.stack([np.kron(ula(a, e), taps) for a, e in ((20, 0), (-20, 0), (0, 10))])
    assert np.abs(s[...] - want).max() < 1e-5, np.abs(s[...] - want).max()
win = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(P) / (P - 1))
def doppler_taps(f):
    d0 = int(np.floor(f * D + 0.5))
    p = np.arange(P)
    return np.array([(win * np.exp(2j * np.pi * (f - (d0 + j) / D) * p)).sum()
                     for j in (-1, 0, 1)]) / win.sum()
with h5py.File(f"{t}/sector.h5", "r") as f:
    s = f["steering"]
    assert list(s.attrs["az_deg"]) == [-40, -20, 0, 20, 40], s.attrs["az_deg"]
    assert (s.attrs["doppler_hz"] == 60).all() and (s.attrs["doppler_bin"] == 4).all()
    assert np.allclose(s.attrs["doppler_normalized"], 0.2)
    want = np.stack([np.kron(ula(a, 0), doppler_taps(0.2)) for a in (-40, -20, 0, 20, 40)])
    assert np.abs(s[...] - want).max() < 1e-5, np.abs(s[...] - want).max()
with h5py.File(f"{t}/mps.h5", "r") as f:  # 2 v fc / c0: 60.04 Hz at 450 MHz
    s = f["steering"]
    fd = 2 * 20 * 450e6 / 299792458.0
    assert abs(s.attrs["doppler_hz"][0] - fd) < 1e-9, s.attrs["doppler_hz"]
    want = np.kron(ula(20, 0), doppler_taps(fd / 300))
    assert np.abs(s[0] - want).max() < 1e-5
PY
else
    echo "cli_look: no python3 with numpy and h5py: /steering's contents not checked"
fi

# the pictures read the looks (titles "beam 0 (az 20°, el 0°)"); a malformed az_deg is refused
expect 0 "$B" plot --input "$T/s.h5" --result "$T/look.h5" --output-dir "$T/pics"
[ -s "$T/pics/range_doppler.png" ] && [ -s "$T/pics/sinr_loss.png" ] || fail "plot with looks: no pictures"
if [ -n "$py" ]; then
    cp "$T/look.h5" "$T/look_bad.h5"
    "$py" -c "
import h5py, sys
with h5py.File(sys.argv[1], 'r+') as f: f['steering'].attrs['az_deg'] = [20.0, -20.0]" "$T/look_bad.h5"
    expect 1 "$B" plot --input "$T/s.h5" --result "$T/look_bad.h5" --output-dir "$T/pics2" &&
        grep -q "attribute 'az_deg' of '/steering'.* is not 3 finite numbers" "$T/err" ||
        fail "plot: a malformed az_deg: $(cat "$T/err")"
fi

# a recording: the looks reach every CPI and its /steering
expect 0 "$B" gen --preset ward --channels 8 --pulses 10 --range-gates 60 --cpis 2 --quiet -o "$T/rec.h5"
expect 0 "$B" run --input "$T/rec.h5" -o "$T/rec_out.h5" --look '-10;10' --doppler-hz -30 --quiet
if [ -n "$py" ]; then
    "$py" -c "
import h5py, sys
s = h5py.File(sys.argv[1], 'r')['steering']
assert list(s.attrs['az_deg']) == [-10, 10] and list(s.attrs['doppler_hz']) == [-30, -30], dict(s.attrs)
assert s.shape == (2, 8 * 3)" "$T/rec_out.h5" || fail "a recording's /steering attributes"
fi

# Python: the same keywords give rtstap run's weights bit for bit, and the same refusals
pkg=$(dirname "$B")/python
if [ -n "$py" ] && ls "$pkg"/rtstap/_rtstap*.so >/dev/null 2>&1; then
    expect 0 "$B" run "${common[@]}" -o "$T/pyref.h5" --look '20;-20' --look 0,10 --window hann --doppler-hz 60
    PYTHONPATH=$pkg "$py" - "$T" <<'PY' || fail "Python's look=, sector=, doppler_hz="
import sys
import h5py, numpy as np, rtstap
t = sys.argv[1]
x = h5py.File(f"{t}/s.h5", "r")["data/iq"][...]
o = dict(doppler_order=3, training=120, training_window="sliding", block=40, guard=2,
         backend="cpu", window="hann")
r = rtstap.run(x, look=[20, (-20, 0), (0, 10)], doppler_hz=60, prf_hz=300, **o)
w = h5py.File(f"{t}/pyref.h5", "r")["weights"][...]
assert np.array_equal(w, r.weights), np.abs(w - r.weights).max()
r = rtstap.run(x, sector=(-40, 40), beams=5, doppler=0.2, **o)
w = h5py.File(f"{t}/sector.h5", "r")["weights"][...]
assert np.array_equal(w, r.weights), np.abs(w - r.weights).max()
for bad in (dict(look=20, sector=(0, 1)), dict(look=20, beams=3), dict(doppler=0.1),
            dict(look=20, doppler_hz=5), dict(sector=(-10, 10))):
    try:
        rtstap.run(x, **{**o, **bad})
    except TypeError:
        continue
    raise AssertionError(f"not refused: {bad}")
try:
    rtstap.run(x, look=0, doppler=0.1, **{**o, "algorithm": "adpca", "doppler_order": None})
    raise AssertionError("adpca with a Doppler")
except rtstap.Error as e:
    assert "stap_look.doppler" in str(e), e
PY
else
    echo "cli_look: the Python package or h5py is missing: Python's keywords not checked"
fi

# usage errors
r=(run --input "$T/s.h5" -o "$T/x.h5" -f --quiet)
expect 2 "$B" "${r[@]}" --look 20 --sector -10:10 && grep -q 'give one of them' "$T/err" || fail "--look and --sector"
expect 2 "$B" "${r[@]}" --look 20 --beams 4 && grep -q 'the beams are the 1 looks' "$T/err" || fail "--look with --beams"
expect 2 "$B" "${r[@]}" --doppler-hz 50 && grep -q 'steers the beams of --look' "$T/err" || fail "--doppler-hz alone"
expect 2 "$B" "${r[@]}" --look 20 --doppler-hz 5 --doppler-mps 1 || true
expect 2 "$B" "${r[@]}" --look 181 && grep -q -- '--look expects a number between -180 and 180' "$T/err" || fail "--look 181"
expect 2 "$B" "${r[@]}" --look '20;' || true
expect 2 "$B" "${r[@]}" --look 20,x || true
expect 2 "$B" "${r[@]}" --sector 10 && grep -q 'AZ1:AZ2' "$T/err" || fail "--sector without a colon"
expect 2 "$B" "${r[@]}" --look 0 --doppler-hz 20 --algorithm adpca &&
    grep -q 'doppler-hz: the ADPCA weights do not depend' "$T/err" || fail "a Doppler with adpca: $(cat "$T/err")"
# the synthesized cube has no /radar: a Doppler in Hz cannot be placed
expect 2 "$B" run -o "$T/y.h5" --look 0 --doppler-hz 20 --quiet && grep -q 'has no /radar prf_hz' "$T/err" ||
    fail "--doppler-hz without a PRF"
[ ! -e "$T/x.h5" ] && [ ! -e "$T/y.h5" ] || fail "a refused run wrote its output"
[ "$fails" = 0 ] || exit 1
echo "cli_look: ok"
