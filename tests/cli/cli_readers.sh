#!/usr/bin/env bash
# cli_readers: the result file describes itself (issue 12 item 3), and the two readers in
# docs/ turn it into labelled arrays: docs/read_output.py (h5py) and docs/read_output.m
# (GNU Octave, through h5dump). On a run with a known PRF and sample rate and the default
# beams, and on a recording: root attributes, what ran (threads, device), axis names,
# coordinates (doppler_hz, range_m, beam_u against their formulas), w^H v = 1 from the
# labelled weights and steering, detections in physical units; Octave's arrays equal
# h5py's element for element (so the axis order is right); a file without labels or scales
# (schema v1) still reads. Skipped (77) without python3-h5py, octave or hdf5-tools, unless
# RTSTAP_REQUIRE_READERS is set (CI sets it: .ci/run; .ci/install-deps installs them).
# env: RTSTAP_BIN, RTSTAP_TOOLS_DIR (mkinput), RTSTAP_SOURCE_DIR.
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
src=${RTSTAP_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tools=${RTSTAP_TOOLS_DIR:-$(dirname "$bin")/tests}
. "$(dirname "$0")/../support/readers.sh"
need_readers cli_readers octave-cli h5dump
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }

# one CPI with /radar prf_hz 2000 and sample_rate_hz 5e6 (mkinput valid), default beams; and
# a recording of 2 CPIs (gen: PRF 300, no sample rate) with its output kept
"$tools/mkinput" valid "$tmp/in.h5" 5
"$bin" run --input "$tmp/in.h5" --output "$tmp/one.h5" --preset easy --segments 2 --training 20 \
    --doppler-order 1 --beams 4 --backend cpu --quiet --cfar-train 8 2>/dev/null
check "run (one CPI): exit 0" '[ $? -eq 0 ]'
"$bin" gen --preset ward --channels 6 --pulses 16 --range-gates 120 --cpis 2 --no-clutter \
    --target 40:0:100:30 --seed 3 --out "$tmp/rec.h5" --quiet
"$bin" run --input "$tmp/rec.h5" --output "$tmp/rec_out.h5" --backend cpu --doppler-order 3 \
    --training 40 --segments 1 --beams 3 --loading 0.01 --keep-output --quiet
check "run (recording): exit 0" '[ $? -eq 0 ]'

# ---- h5py
PYTHONPATH="$src/docs" "$py" - "$tmp" >"$tmp/py.out" 2>&1 <<'PY'
import shutil, sys
import h5py
import numpy as np
from read_output import read_output

tmp = sys.argv[1]
C_LIGHT = 299792458.0

def doppler(D, scale):
    f = np.arange(D) / D
    return np.where(f >= 0.5, f - 1, f) * scale

r = read_output(f"{tmp}/one.h5")
assert r["attrs"]["schema"] == "1.1" and r["attrs"]["commit"] and r["attrs"]["rtstap_version"]
c = r["config"]
assert c["threads"] >= 1 and c["device"] and c["engine"].startswith("cpu:"), c
assert c["threads_requested"] == 0 and c["input_samples"] == "complex64 {r, i}", c
y, w, v = r["output/iq"], r["weights"], r["steering"]
assert y.dims == ("beam", "doppler", "range") and y.shape == (4, 8, 48), (y.dims, y.shape)
assert w.dims == ("doppler", "segment", "beam", "dof") and v.dims == ("beam", "dof")
assert y.coords["doppler"][1] == "Hz" and y.coords["range"][1] == "m"
assert np.allclose(y.coord("doppler"), doppler(8, 2000.0), rtol=0, atol=1e-9)
assert np.allclose(y.coord("range"), np.arange(48) * C_LIGHT / (2 * 5e6), rtol=1e-12)
assert np.array_equal(y.coord("beam"), -1 + (2 * np.arange(4) + 1) / 4)
assert np.array_equal(w.coord("segment"), [0, 24]) and "dof" not in w.coords
# the labelled weights and steering: w^H v = 1 for every (doppler, segment, beam)
whv = np.einsum("dsbn,bn->dsb", w.data.conj(), v.data)
assert np.abs(whv - 1).max() < 1e-4, np.abs(whv - 1).max()
print("one: w^H v = 1 within %.1e over %d weight vectors" % (np.abs(whv - 1).max(), whv.size))
assert y.sel(beam=0.26).dims == ("doppler", "range")
# the element Octave is compared at, and a sum over everything
print("probe %.9g %.9g %.9g" % (y.data[2, 5, 17].real, y.data[2, 5, 17].imag, np.abs(y.data).sum()))
with open(f"{tmp}/probe.txt", "w") as f:
    f.write("%.9g %.9g %.9g %.9g\n" % (y.data[2, 5, 17].real, y.data[2, 5, 17].imag,
                                        w.data[3, 1, 2, 1].real, np.abs(y.data).sum()))

rr = read_output(f"{tmp}/rec_out.h5")
y, w = rr["output/iq"], rr["weights"]
assert y.dims == ("cpi", "beam", "doppler", "range") and y.shape == (2, 3, 16, 120)
assert w.dims == ("cpi", "doppler", "segment", "beam", "dof") and w.coords["cpi"][2] == "/axes/input_cpi"
assert np.array_equal(w.coord("cpi"), [0, 1]) and np.array_equal(y.coord("cpi"), [0, 1])
assert np.allclose(y.coord("doppler"), doppler(16, rr["radar"]["prf_hz"]), rtol=0, atol=1e-9)
assert y.coords["range"][2] == "/axes/range_cell" and np.array_equal(y.coord("range"), np.arange(120))
assert rr["timing/cpi_ms"].dims == ("cpi", "stage") and rr["timing/cpi_ms"].units == "ms"
det, dc = rr["detections"], rr["detections_coords"]
assert len(det) > 0 and np.array_equal(dc["doppler"], y.coord("doppler")[det["doppler_bin"]])
hit = det[(det["range_cell"] == 40)]
assert len(hit), "the target at range cell 40 is not detected"
print("recording: %d detections, the target at %s Hz" % (len(det), sorted(set(dc["doppler"][det["range_cell"] == 40]))))

# schema v1: no labels, no scales, no root attributes: still read, axes indexed
shutil.copy(f"{tmp}/one.h5", f"{tmp}/v1.h5")
with h5py.File(f"{tmp}/v1.h5", "r+") as f:
    for name in ("weights", "output/iq", "steering"):
        ds = f[name]
        for k, dim in enumerate(ds.dims):
            for scale in list(dim.values()):
                dim.detach_scale(scale)
        del ds.attrs["DIMENSION_LABELS"]
    del f["axes"]
    for a in ("schema", "commit", "rtstap_version"):
        del f.attrs[a]
r1 = read_output(f"{tmp}/v1.h5")
assert r1["output/iq"].dims == ("dim_0", "dim_1", "dim_2") and not r1["output/iq"].coords
assert np.array_equal(r1["output/iq"].data, r["output/iq"].data)
print("v1 file: read, axes indexed")
PY
rc=$?
cat "$tmp/py.out"
check "h5py reader: every check (exit $rc)" '[ $rc -eq 0 ]'
PYTHONPATH="$src/docs" "$py" "$src/docs/read_output.py" "$tmp/rec_out.h5" >"$tmp/py_main.out" 2>&1
check "read_output.py as a program: exit 0, names the axes" \
    '[ $? -eq 0 ] && grep -q "doppler  /axes/doppler_hz" "$tmp/py_main.out" && grep -q "detections:" "$tmp/py_main.out"'
check "read_output.py: a recording's detections with their CPI and units" \
    'grep -q "detections: 0$" "$tmp/py_main.out" || { grep -q "detections: [0-9]* in [0-9]* CPIs" "$tmp/py_main.out" &&
     grep -q "^    CPI [0-9]*, beam [0-9]* bin [0-9]* cell [0-9]*: doppler .* Hz, .*power .* (input units squared), SNR" "$tmp/py_main.out"; }'

# ---- Octave (through h5dump)
cat > "$tmp/check.m" <<'OCT'
addpath (getenv ("DOCS"));
tmp = getenv ("TMPD");
r = read_output ([tmp "/one.h5"]);
assert (r.attrs.schema, "1.1");
assert (r.config.threads >= 1 && ! isempty (r.config.device));
y = r.output_iq; w = r.weights; v = r.steering;
assert (y.dims, {"beam", "doppler", "range"});
assert (size (y.data), [4 8 48]);
assert (w.dims, {"doppler", "segment", "beam", "dof"});
f = (0:7)' / 8; f(f >= 0.5) -= 1;
assert (y.coords.doppler, 2000 * f, 1e-9);
assert (y.coords.range, (0:47)' * 299792458 / (2 * 5e6), -1e-12);
assert (y.coords.beam, -1 + (2 * (0:3)' + 1) / 4);
assert (y.scales.doppler, "/axes/doppler_hz");
% w^H v = 1 from the labelled arrays
worst = 0;
for d = 1:8, for s = 1:2, for b = 1:4
  worst = max (worst, abs (sum (conj (squeeze (w.data(d, s, b, :))) .* v.data(b, :).') - 1));
end, end, end
assert (worst < 1e-4);
% the same elements as h5py: the axis order is the file's
p = load ([tmp "/probe.txt"]);
assert (double (real (y.data(3, 6, 18))), p(1), 1e-6 * abs (p(1)));
assert (double (imag (y.data(3, 6, 18))), p(2), 1e-6 * abs (p(2)));
assert (double (real (w.data(4, 2, 3, 2))), p(3), 1e-6 * abs (p(3)));
assert (sum (abs (double (y.data(:)))), p(4), 1e-5 * p(4));
rr = read_output ([tmp "/rec_out.h5"]);
assert (rr.output_iq.dims, {"cpi", "beam", "doppler", "range"});
assert (size (rr.output_iq.data), [2 3 16 120]);
assert (rr.timing_cpi_ms.dims, {"cpi", "stage"});
det = rr.detections;
assert (any (det.range_cell == 40));
assert (det.doppler, rr.output_iq.coords.doppler(double (det.doppler_bin) + 1));
printf ("octave: w^H v = 1 within %.1e; %d detections of the recording; checks passed\n", worst, numel (det.beam));
r1 = read_output ([tmp "/v1.h5"]);
assert (r1.output_iq.dims, {"dim_1", "dim_2", "dim_3"});
assert (isequal (r1.output_iq.data, y.data));
printf ("octave: the v1 file reads, axes indexed\n");
OCT
DOCS="$src/docs" TMPD="$tmp" octave-cli --no-gui --norc -q "$tmp/check.m" >"$tmp/oct.out" 2>&1
rc=$?
grep -v "ignoring const execution_exception" "$tmp/oct.out"
check "Octave reader: every check (exit $rc)" '[ $rc -eq 0 ] && grep -q "the v1 file reads" "$tmp/oct.out"'
exit $fail
