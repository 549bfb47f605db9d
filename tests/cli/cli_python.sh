#!/usr/bin/env bash
# cli_python: the Python package (app/python/, issue 33) against the command line, result for
# result — rtstap.run on a cube read with h5py gives /weights, /output/iq and /detections of
# `rtstap run` on that file bit for bit (the same engine, backend cpu); an Engine with two
# slots in flight gives them again; errors are rtstap.Error with the library's message; a
# cube that is not complex64 C-contiguous is converted, one that is goes in as it is.
# env: RTSTAP_BIN (the build's rtstap: the package is in its build folder's python/),
# RTSTAP_REQUIRE_PYTHON=1: fail instead of skipping when a build that makes the package
# (RTSTAP_PYTHON_WANTED=1, set by CMake: not under sanitizers) did not.
bin=$RTSTAP_BIN
py=$(dirname "$bin")/python
python3=python3 # the system's first (the package is built for it), as cli_readers.sh
for p in /usr/bin/python3 python3; do
    if "$p" -c "import numpy, h5py" 2>/dev/null; then python3=$p; break; fi
done
if ! ls "$py"/rtstap/_rtstap*.so >/dev/null 2>&1 || ! "$python3" -c "import numpy, h5py" 2>/dev/null; then
    echo "cli_python: the Python package was not built (python3-dev, python3-numpy) or h5py is missing"
    [ "${RTSTAP_REQUIRE_PYTHON:-0}" = 1 ] && [ "${RTSTAP_PYTHON_WANTED:-0}" = 1 ] && exit 1
    exit 77
fi
export PYTHONPATH=$py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }

"$bin" gen --preset ward --channels 6 --pulses 32 --range-gates 240 --target 151:0:50:-5 --seed 3 \
    -o "$tmp/cpi.h5" --quiet
opts=(--backend cpu --doppler-order 3 --training 60 --segments 2 --beams 3 --loading 0.01 --cfar ca)
"$bin" run --input "$tmp/cpi.h5" -o "$tmp/r.h5" "${opts[@]}" --quiet
check "rtstap run: exit 0" '[ $? -eq 0 ]'
"$python3" - "$tmp/cpi.h5" "$tmp/r.h5" > "$tmp/py.out" 2>&1 <<'PY'
import sys
import h5py
import numpy as np
import rtstap

cpi, res = sys.argv[1], sys.argv[2]
with h5py.File(cpi, "r") as f:
    cube = f["data/iq"][()]                       # labelled (channel, pulse, range) by gen
    cube = cube["r"] + 1j * cube["i"] if cube.dtype.names else cube
    spacing = f["array"].attrs.get("element_spacing_wavelengths") if "array" in f else None
cube = np.ascontiguousarray(cube, np.complex64)
opts = dict(backend="cpu", doppler_order=3, training=60, segments=2, beams=3, loading=0.01, cfar="ca")
if spacing is not None:
    opts["element_spacing"] = float(spacing)
r = rtstap.run(cube, **opts)
with h5py.File(res, "r") as f:
    def c(name):
        a = f[name][()]
        return (a["r"] + 1j * a["i"]).astype(np.complex64) if a.dtype.names and "r" in a.dtype.names else a
    W, Y, D = c("weights"), c("output/iq"), f["detections"][()]
ok = np.array_equal(r.weights, W) and np.array_equal(r.output, Y)
ok = ok and len(r.detections) == len(D) and all(
    np.array_equal(r.detections[k], D[k]) for k in ("beam", "doppler_bin", "range_cell", "power", "snr_db"))
print("run:", "same" if ok else "DIFFERENT", r.weights.shape, r.output.shape, len(r.detections))

with rtstap.Engine(cube.shape, slots=2, **opts) as e:
    e.submit(0, cube)
    e.submit(1, cube[::1])                         # the same samples, a second CPI in flight
    a, b = e.collect(0), e.collect(1)
    same = all(np.array_equal(x.weights, W) and np.array_equal(x.output, Y) for x in (a, b))
    print("engine:", "same" if same else "DIFFERENT", e.slots, e.backend, e.config["training"])
try:
    rtstap.run(cube, backend="cpu", training=10**6)
    print("error: none raised")
except rtstap.Error as err:
    print("error:", err.args[0], "| code", err.args[1])
try:
    rtstap.run(cube, traning=3)
except TypeError as err:
    print("typo:", err)
r16 = rtstap.run(cube.astype(np.complex128), **opts)   # converted once to complex64
print("complex128:", "same" if np.array_equal(r16.weights, W) else "DIFFERENT")
# int16 (i, q) pairs with a scale: to the engine as stored, converted there, as numpy's
# (float)((double)v * scale) of them (issue 31's formats through the binding)
q = np.clip(np.rint(np.stack([cube.real, cube.imag], -1) * 256), -32768, 32767).astype(np.int16)
x = (q[..., 0].astype(np.float64) / 256).astype(np.float32) + 1j * (q[..., 1].astype(np.float64) / 256).astype(np.float32)
a, b = rtstap.run(q, scale=1 / 256, **opts), rtstap.run(x.astype(np.complex64), **opts)
print("int16:", "same" if np.array_equal(a.weights, b.weights) and np.array_equal(a.output, b.output) else "DIFFERENT")
# the command line's names (cfar_pfa, format), the earlier short ones (pfa, samples) as aliases
o2 = dict(opts, cfar_pfa=1e-2)
a, b = rtstap.run(cube, **o2), rtstap.run(cube, **dict(opts, pfa=1e-2))
print("cfar_pfa:", len(a.detections), "alias pfa:", "same" if len(a.detections) == len(b.detections) and all(
    np.array_equal(a.detections[k], b.detections[k]) for k in ("beam", "doppler_bin", "range_cell")) else "DIFFERENT",
    "more than at 1e-6:", len(a.detections) > len(r.detections))
try:
    rtstap.run(cube, pfa=1e-2, cfar_pfa=1e-3)
    print("both names: no error")
except TypeError as err:
    print("both names:", err)
f1 = rtstap.run(q, scale=1 / 256, format="ci16", **opts)
f2 = rtstap.run(q, scale=1 / 256, samples="ci16", **opts)
print("format:", "same" if np.array_equal(f1.weights, f2.weights) else "DIFFERENT")
print("version:", rtstap.__version__)
PY
check "python: ran" '[ $? -eq 0 ] || { cat "$tmp/py.out"; false; }'
check "rtstap.run: the CLI's weights, output and detections, bit for bit" 'grep -q "^run: same" "$tmp/py.out"'
check "rtstap.Engine, two slots in flight: the same" 'grep -q "^engine: same 2 cpu 60" "$tmp/py.out"'
check "a bad option: rtstap.Error with the library's message" 'grep -q "^error: .*training.* | code 1" "$tmp/py.out"'
check "a misspelled option: TypeError naming it" 'grep -q "^typo: unknown option traning" "$tmp/py.out"'
check "a complex128 cube: converted, the same" 'grep -q "^complex128: same" "$tmp/py.out"'
check "an int16 (i, q) cube with a scale: as its complex64 conversion, bit for bit" 'grep -q "^int16: same" "$tmp/py.out"'
check "cfar_pfa, the CLI's name: detections as the alias pfa, more than at the default 1e-6" 'grep -q "^cfar_pfa: [0-9]* alias pfa: same more than at 1e-6: True" "$tmp/py.out"'
check "cfar_pfa and pfa at once: TypeError" 'grep -q "^both names: cfar_pfa and pfa are one option" "$tmp/py.out"'
check "format, the CLI's name, as the alias samples" 'grep -q "^format: same" "$tmp/py.out"'
cat "$tmp/py.out"

# README's Python example, exactly as written, on the quick start's CPI
src=${RTSTAP_SOURCE_DIR:-$(dirname "$0")/../..}
awk '/^## Python/ {p = 1} p && /^```python/ {c = 1; next} c && /^```/ {exit} c' "$src/README.md" > "$tmp/readme.py"
(cd "$tmp" && "$bin" gen --preset ward --target 151:0:50:-5 --seed 11 -o cpi.h5 --quiet -f &&
    "$python3" readme.py > readme.out 2>&1)
check "README's Python example runs as written" '[ $? -eq 0 ] && [ -s "$tmp/readme.py" ] && grep -q "(" "$tmp/readme.out" || { cat "$tmp/readme.out"; false; }'
exit $fail
