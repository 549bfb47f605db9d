#!/usr/bin/env bash
# cli_python_stream: rtstap.Stream (issue 44) — the library's stream runtime from Python —
# against `rtstap run` on the same recording: every CPI's weights and detections bit for bit,
# through a recording source (reader threads), an iterator source and two engines (CPI g on
# engine g mod 2); a callback that raises stops the stream and run() raises it; stop() from
# the callback ends the run after the CPIs in flight, which are all handed over, in order.
# With output=PATH the stream writes the file rtstap run writes (weights, detections, input
# CPIs, steering identical; keep; replace; a stopped run marked; no file after an error).
# env: as cli_python.sh (RTSTAP_BIN, RTSTAP_REQUIRE_PYTHON, RTSTAP_PYTHON_WANTED).
NAME=cli_python_stream
# shellcheck source=tests/cli/python_env.sh
. "$(dirname "$0")/python_env.sh"

"$bin" gen --preset ward --channels 6 --pulses 32 --range-gates 240 --target 151:0:50:-5 --seed 5 \
    --cpis 9 -o "$tmp/rec.h5" --quiet
opts=(--backend cpu --doppler-order 3 --training 60 --segments 2 --beams 3 --loading 0.01 --cfar ca)
"$bin" run --input "$tmp/rec.h5" -o "$tmp/r.h5" "${opts[@]}" --quiet
check "rtstap run: exit 0" '[ $? -eq 0 ]'
"$python3" - "$tmp/rec.h5" "$tmp/r.h5" > "$tmp/py.out" 2>&1 <<'PY'
import sys
import h5py
import numpy as np
import rtstap

rec, res = sys.argv[1], sys.argv[2]
opts = dict(backend="cpu", doppler_order=3, training=60, segments=2, beams=3, loading=0.01, cfar="ca")
with h5py.File(res, "r") as f:
    W, D = f["weights"][()], f["detections"][()]
    cubes = h5py.File(rec, "r")["data/iq"][()]
n = W.shape[0]
bad = []


def same(name, got):
    """every CPI's weights and detections as rtstap run wrote them, bit for bit"""
    if sorted(got) != list(range(n)):
        bad.append("%s: CPIs %s" % (name, sorted(got)))
        return
    for k in range(n):
        r, dk = got[k], D[D["cpi"] == k]
        if r.weights.tobytes() != W[k].tobytes():
            bad.append("%s: CPI %d weights" % (name, k))
        for field in ("beam", "doppler_bin", "range_cell", "power", "snr_db"):
            if len(dk) != len(r.detections) or dk[field].tobytes() != r.detections[field].tobytes():
                bad.append("%s: CPI %d detections' %s" % (name, k, field))
                break


def collect(source, **more):
    got, order = {}, []
    def each(cpi, input_cpi, r):
        got[input_cpi] = r
        order.append(cpi)
    with rtstap.Stream(source, each, **opts, **more) as s:
        rep = s.run()
    return got, order, rep

got, order, rep = collect(rec)
same("recording", got)
if order != list(range(n)) or rep["cpis"] != n or rep["cpis_per_s"] <= 0:
    bad.append("recording: order %s, report %s" % (order, rep))
got, order, rep = collect(list(cubes))
same("iterator", got)
got, order, rep = collect(rec, devices=[-1, -1])   # two CPU engines (no device to select)
same("two engines", got)
if len(rep["devices"]) != 2 or sum(d["cpis"] for d in rep["devices"]) != n:
    bad.append("two engines: report %s" % rep["devices"])

# output: the file rtstap run writes, bit for bit where it is not a stamp (weights,
# detections, the rows' input CPIs, the steering), from a recording and from an iterator
import os
tmpd = os.path.dirname(res)
def file_same(name, path, keep_weights=True):
    with h5py.File(path, "r") as f, h5py.File(res, "r") as g:
        for ds in ("detections", "axes/input_cpi", "steering") + (("weights",) if keep_weights else ()):
            if ds not in f or f[ds][()].tobytes() != g[ds][()].tobytes():
                bad.append("%s: %s differs from rtstap run's" % (name, ds))
        if not keep_weights and "weights" in f:
            bad.append("%s: weights kept though keep had no KEEP_WEIGHTS" % name)
        if "stopped" in f["config"].attrs:
            bad.append("%s: marked stopped" % name)
out1 = os.path.join(tmpd, "py_out1.h5")
with rtstap.Stream(rec, output=out1, **opts) as s:
    s.run()
file_same("output, recording", out1)
out2 = os.path.join(tmpd, "py_out2.h5")
with rtstap.Stream(list(cubes), output=out2, keep=rtstap.KEEP_DETECTIONS, **opts) as s:
    s.run()
file_same("output, iterator, detections only", out2, keep_weights=False)
try:   # an existing file is refused, and kept
    rtstap.Stream(rec, output=out1, **opts).close()
    bad.append("output: an existing file was taken without replace")
except rtstap.Error:
    pass
with rtstap.Stream(rec, output=out1, replace=True, **opts) as s:
    s.run()
file_same("output, replace", out1)
out3 = os.path.join(tmpd, "py_out3.h5")   # made, never run: no file
rtstap.Stream(rec, output=out3, **opts).close()
if os.path.exists(out3):
    bad.append("output: a stream never run left a file")

# the callback's exception ends the stream and is raised by run()
class Boom(Exception):
    pass
def boom(cpi, input_cpi, r):
    if cpi == 2:
        raise Boom("at CPI 2")
out4 = os.path.join(tmpd, "py_out4.h5")
try:
    with rtstap.Stream(rec, boom, output=out4, **opts) as s:
        s.run()
    bad.append("a raising callback: run() returned")
except Boom:
    pass
if os.path.exists(out4) or [x for x in os.listdir(tmpd) if x.startswith(".py_out4")]:
    bad.append("a raising callback: a file (or its temporary) was left")

# stop() from the callback: the CPIs in flight finish, in order, none after
stop_seen = []
holder = {}
def stop_at_1(cpi, input_cpi, r):
    stop_seen.append(cpi)
    if cpi == 1:
        holder["s"].stop()
out5 = os.path.join(tmpd, "py_out5.h5")
with rtstap.Stream(rec, stop_at_1, output=out5, **opts) as s:
    holder["s"] = s
    rep = s.run()
if rep["stopped_by"] != 1 or stop_seen != list(range(len(stop_seen))) or not 2 <= len(stop_seen) < n:
    bad.append("stop(): saw %s, report %s" % (stop_seen, rep))
with h5py.File(out5, "r") as f:   # the CPIs done, published, marked stopped
    if "stopped" not in f["config"].attrs or f["weights"].shape[0] != len(stop_seen) or \
            f["weights"][()].tobytes() != W[:len(stop_seen)].tobytes():
        bad.append("stop() with output: %s rows, attrs %s" % (f["weights"].shape, dict(f["config"].attrs)))

try:
    rtstap.Stream(rec, None, bogus=1)
    bad.append("an unknown option was taken")
except TypeError:
    pass
print("\n".join(bad) if bad else "python stream: all %d CPIs bit for bit (3 sources), output files as "
      "rtstap run's (keep, replace, stopped, none on error), raise and stop" % n)
sys.exit(1 if bad else 0)
PY
check "rtstap.Stream against rtstap run" '[ $? -eq 0 ] || { cat "$tmp/py.out"; false; }'
cat "$tmp/py.out"
exit $fail
