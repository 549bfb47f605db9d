#!/usr/bin/env bash
# cli_detector: `rtstap run --detector amf|kelly|ace` and `rtstap roc` (issue 46): the
# detections carry statistic and threshold (file and JSON) and pass their own test; usage
# errors (exit 2) where the detectors are not defined; roc's report and JSON; --backend gpu
# (on a GPU machine) against the cpu's detections.
# Env: RTSTAP_BIN (the rtstap binary).
set -u
B=${RTSTAP_BIN:?RTSTAP_BIN must name the rtstap binary}
T=$(mktemp -d "${TMPDIR:-/tmp}/rtstap_cli_detector.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../support/cli_expect.sh" # fail, expect

expect 0 "$B" gen --preset ward --channels 6 --pulses 8 --range-gates 120 --seed 46 \
    --target 61:0:75:10 --out "$T/scene.h5"
for det in amf kelly ace; do
    expect 0 "$B" run --input "$T/scene.h5" --output "$T/$det.h5" --doppler-order 1 --beams 3 \
        --training-window sliding --block 4 --guard 2 --training 40 --backend cpu --quiet \
        --detector "$det" --cfar-pfa 1e-2 --json "$T/$det.json"
    python3 - "$T/$det.json" "$det" <<'PY' || fail "$det: the JSON detections"
import json, sys
d = json.load(open(sys.argv[1]))
lst = d["detection_list"]
assert d["cfar"].startswith(sys.argv[2] + " pfa=0.01"), d["cfar"]
assert d["detections"] == len(lst) > 0, d["detections"]
assert all(x["statistic"] > x["threshold"] for x in lst)
assert len({x["threshold"] for x in lst}) == 1          # one threshold: one N, one K
PY
done
python3 - "$T/kelly.h5" <<'PY' 2>/dev/null
import sys
try:
    import h5py
except ImportError:
    sys.exit(0)
d = h5py.File(sys.argv[1], "r")["/detections"][...]
assert "statistic" in d.dtype.names and "threshold" in d.dtype.names
assert (d["statistic"] > d["threshold"]).all() and (d["threshold"] < 1).all()
PY
[ $? = 0 ] || fail "kelly: /detections statistic and threshold"

run_args=(--input "$T/scene.h5" --output "$T/x.h5" -f --doppler-order 1 --beams 3 --training 40 --backend cpu --quiet)
expect 2 "$B" run "${run_args[@]}" --detector kelly
grep -q -- "--training-window sliding" "$T/err" || fail "segment window: $(cat "$T/err")"
expect 2 "$B" run "${run_args[@]}" --detector amf --training-window sliding --loading 0.01
grep -q -- "--loading" "$T/err" || fail "loading: $(cat "$T/err")"
expect 2 "$B" run --input "$T/scene.h5" --output "$T/x.h5" -f --beams 3 --training 40 --backend cpu \
    --detector ace --training-window sliding --algorithm pre-doppler --sub-cpi 2
grep -q "not defined for pre-doppler" "$T/err" || fail "pre-doppler: $(cat "$T/err")"
# the GPU backends run the detectors too: on a GPU machine the cpu's cells within 1e-3 of
# the threshold aside; without a GPU refused for the device, not for the detector
if "$B" run --input "$T/scene.h5" --output "$T/gpu.h5" --doppler-order 1 --beams 3 \
    --training-window sliding --block 4 --guard 2 --training 40 --backend gpu --quiet \
    --detector kelly --cfar-pfa 1e-2 --json "$T/gpu.json" >"$T/out" 2>"$T/err"; then
    python3 - "$T/kelly.json" "$T/gpu.json" <<'PY' || fail "gpu: kelly detections differ from the cpu's"
import json, sys
cpu, gpu = (json.load(open(f))["detection_list"] for f in sys.argv[1:3])
key = lambda x: (x["beam"], x["doppler_bin"], x["range_cell"])
c, g = {key(x): x for x in cpu}, {key(x): x for x in gpu}
assert [key(x) for x in gpu] == sorted(g), "gpu detections out of order"
for k in set(c) ^ set(g):
    x = c.get(k) or g.get(k)
    assert abs(x["statistic"] / x["threshold"] - 1) < 1e-3, (k, x)
for k in set(c) & set(g):
    assert abs(g[k]["statistic"] / c[k]["statistic"] - 1) < 1e-3, (k, c[k], g[k])
PY
else
    grep -q "kelly detector\|--detector" "$T/err" && fail "gpu: refused for the detector: $(cat "$T/err")"
    grep -qi "gpu\|cuda\|device" "$T/err" || fail "gpu: $(cat "$T/err")"
fi
expect 2 "$B" stream --preset easy --cpis 3 --detector kelly                 # segment window
grep -q -- "--training-window sliding" "$T/err" || fail "stream, segment window: $(cat "$T/err")"
expect 2 "$B" run "${run_args[@]}" --detector glrt
expect 2 "$B" run "${run_args[@]}" --cfar amf

expect 0 "$B" roc --trials 300 --sinr-db 0:20:10 --json "$T/roc.json" --png "$T/roc.png"
[ "$(head -c 8 "$T/roc.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "roc --png: not a PNG"
grep -q "rtstap roc: N = 8, K = 24, pfa 0.001, 300 trials a point, 2 jammers" "$T/out" ||
    fail "roc report: $(head -3 "$T/out")"
python3 - "$T/roc.json" <<'PY' || fail "roc JSON"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("amf", "kelly", "ace"):
    c = d["detectors"][k]
    assert c["sinr_db"] == [0, 10, 20] and len(c["pd"]) == 3 and len(c["pd_theory"]) == 3
    assert c["pd_theory"][0] < c["pd_theory"][1] < c["pd_theory"][2]
PY
expect 2 "$B" roc --dof 8 --training 4
expect 2 "$B" roc --sinr-db 10:0:1
expect 2 "$B" roc --jammers 0.3
expect 1 "$B" roc --trials 10 --png "$T/roc.png"   # exists: refused without -f
exit $((fails > 0))
