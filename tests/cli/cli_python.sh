#!/usr/bin/env bash
# cli_python: the Python package (app/python/, issue 33) against the command line, result for
# result — rtstap.run on a cube read with h5py gives /weights, /output/iq and /detections of
# `rtstap run` on that file bit for bit (the same engine, backend cpu); an Engine with two
# slots in flight gives them again; errors are rtstap.Error with the library's message; a
# cube that is not complex64 C-contiguous is converted, one that is goes in as it is.
# env: RTSTAP_BIN (the build's rtstap: the package is in its build folder's python/),
# RTSTAP_REQUIRE_PYTHON=1: fail instead of skipping when a build that makes the package
# (RTSTAP_PYTHON_WANTED=1, set by CMake: not under sanitizers) did not.
NAME=cli_python
# shellcheck source=tests/cli/python_env.sh
. "$(dirname "$0")/python_env.sh"

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
    np.array_equal(r.detections[k], D[k])
    for k in ("beam", "doppler_bin", "range_cell", "power", "snr_db", "statistic", "threshold"))
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
k = rtstap.run(cube, backend="cpu", doppler_order=3, training=60, beams=3, training_window="sliding",
               block=4, guard=2, detector="kelly", cfar_pfa=1e-2)
print("detector:", len(k.detections) > 0 and bool((k.detections["statistic"] > k.detections["threshold"]).all()))
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
check "detector kelly: detections whose statistic is over the threshold" 'grep -q "^detector: True" "$tmp/py.out"'
cat "$tmp/py.out"

# threads (issue 43, rows 6 and 7): two threads on two slots of one Engine, four on four,
# four calling process() on one engine — every result the serial one's, bit for bit (the
# calls on one engine run one at a time); close() from another thread while one is in
# process() waits for it, then every call raises "the engine is closed" — never a crash. The
# options' ints must fit a C int (2**32 + 24 is no 24); integers without the (i, q) axis are
# no real samples.
"$python3" - > "$tmp/threads.out" 2>&1 <<'PY'
import threading, time
import numpy as np
import rtstap

opts = dict(backend="cpu", doppler_order=3, training=60, segments=2, beams=3, loading=0.01, cfar="ca")
shape = (6, 32, 240)
rng = np.random.default_rng(43)
cubes = [(rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64) for _ in range(8)]
with rtstap.Engine(shape, **opts) as e:
    ref = [e.process(c) for c in cubes]

def same(r, i):
    return all(np.array_equal(getattr(r, k), getattr(ref[i], k)) for k in ("weights", "output", "detections"))

def hammer(nthreads, slots, per, use_process):
    e, bad, done, errs = rtstap.Engine(shape, slots=slots, **opts), [0], [0], []
    def work(t):
        for k in range(per):
            i = (t * 3 + k) % len(cubes)
            try:
                if use_process:
                    r = e.process(cubes[i])
                else:
                    e.submit(t % slots, cubes[i])
                    r = e.collect(t % slots)
            except rtstap.Error as err:
                errs.append(err.args[0])
                continue
            done[0] += 1
            bad[0] += not same(r, i)
    ts = [threading.Thread(target=work, args=(t,)) for t in range(nthreads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    e.close()
    return "wrong %d of %d, errors %d %s" % (bad[0], done[0], len(errs), errs[:1])

print("two threads, two slots:", hammer(2, 2, 40, False))
print("four threads, four slots:", hammer(4, 4, 20, False))
print("four threads, process:", hammer(4, 1, 20, True))

# engines of their own in six threads: made and closed at once, 400 each (prime Doppler
# lengths: FFTW plans longest there, and its planner is not thread-safe — the binding makes
# and frees engines one at a time; before it, 6 runs of 6 crashed), then each processing
tiny = dict(backend="cpu", doppler_order=1, training=24, segments=1, beams=1, loading=0.01, threads=1,
            cfar="none", keep_weights=0)
primes, mine = (97, 101, 103, 107, 109, 113), {"bad": 0, "done": 0}
def own(t):
    for k in range(400):
        rtstap.Engine((2, primes[(t + k) % 6], 48), **tiny).close()
    with rtstap.Engine(shape, **opts) as e:
        for k in range(4):
            mine["bad"] += not same(e.process(cubes[(t + k) % len(cubes)]), (t + k) % len(cubes))
            mine["done"] += 1
ts = [threading.Thread(target=own, args=(t,)) for t in range(6)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("six threads, own engines: wrong %(bad)d of %(done)d" % mine)

e = rtstap.Engine(shape, **opts)
out = {"n": 0, "bad": 0, "end": None}
def loop():
    while True:
        try:
            r = e.process(cubes[out["n"] % len(cubes)])
        except rtstap.Error as err:
            out["end"] = err.args[0]
            return
        out["bad"] += not same(r, out["n"] % len(cubes))
        out["n"] += 1
t = threading.Thread(target=loop)
t.start()
while out["n"] < 3 and t.is_alive():
    time.sleep(0.001)
e.close()
t.join()
after = []
for f in (lambda: e.process(cubes[0]), lambda: e.submit(0, cubes[0]), lambda: e.collect(0), lambda: e.shape):
    try:
        f()
        after.append("none")
    except rtstap.Error as err:
        after.append(err.args[0])
e.close()
print("close: wrong %d of %d, then %s; after: %s" % (out["bad"], out["n"], out["end"], set(after)))

for v in (2**32 + 24, -2**32, 2**70):
    try:
        rtstap.run(cubes[0], backend="cpu", training=v)
        print("int %d: none raised" % v)
    except OverflowError as err:
        print("int:", err)
try:
    rtstap.run(np.zeros(shape, np.int16), backend="cpu", training=60)
    print("int16 (C, P, R): none raised")
except ValueError as err:
    print("int16 (C, P, R):", err)
PY
check "python threads: ran" '[ $? -eq 0 ] || { cat "$tmp/threads.out"; false; }'
for t in "two threads, two slots" "four threads, four slots" "four threads, process"; do
    check "$t: every result the serial one's, no error" 'grep -q "^$t: wrong 0 of [1-9][0-9]*, errors 0 " "$tmp/threads.out"'
done
check "six threads, engines of their own made and closed at once: no crash, every result right" \
    'grep -q "^six threads, own engines: wrong 0 of 24$" "$tmp/threads.out"'
check "close during process: waits, then the engine is closed everywhere" \
    'grep -q "^close: wrong 0 of [1-9][0-9]*, then the engine is closed; after: {.the engine is closed.}$" "$tmp/threads.out"'
check "an option past a C int: OverflowError naming it, every time" \
    '[ "$(grep -c "^int: option training: .* does not fit a C int" "$tmp/threads.out")" = 3 ]'
check "int16 (C, P, R) without the i/q axis: refused with the shapes" \
    'grep -q "^int16 (C, P, R): a cube is .*(channels, pulses, range gates, 2) int8/int16/int32 (i, q); got int16" "$tmp/threads.out"'
cat "$tmp/threads.out"

# README's Python example, exactly as written, on the quick start's CPI
src=${RTSTAP_SOURCE_DIR:-$(dirname "$0")/../..}
awk '/^## Python/ {p = 1} p && /^```python/ {c = 1; next} c && /^```/ {exit} c' "$src/README.md" > "$tmp/readme.py"
(cd "$tmp" && "$bin" gen --preset ward --target 151:0:50:-5 --seed 11 -o cpi.h5 --quiet -f &&
    "$python3" readme.py > readme.out 2>&1)
check "README's Python example runs as written" '[ $? -eq 0 ] && [ -s "$tmp/readme.py" ] && grep -q "(" "$tmp/readme.out" || { cat "$tmp/readme.out"; false; }'
exit $fail
