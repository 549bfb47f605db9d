#!/usr/bin/env bash
# device_verify34b.sh: the fused apply and detector end to end — a 100-CPI hard recording
# (int16, as digitizers write it; CA-CFAR at pfa 1e-3 for many hits) run with `--keep
# detections` (the fused kernel) and with `--keep detections,output` (the two kernels), their
# /detections compared element for element (h5py); then `bench` hard and medium (the apply
# stage now holds the detection).
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
T=$(mktemp -d)
device_facts "$L/device.txt"
step "gen 100 CPIs" "$L/run.log" 200 "$BIN/rtstap" gen --preset hard --cpis 100 --seed 5 --no-clutter --no-jammers \
    --target 200:0:40:0 -o "$T/c64.h5" -f --quiet
step "relayout int16" "$L/run.log" 200 "$BIN/relayout" "$T/c64.h5" "$T/i16.h5" C,P,R ds i16
step "run fused" "$L/run.log" 200 "$BIN/rtstap" run --input "$T/i16.h5" --backend gpu --keep detections --cfar-pfa 1e-3 -o "$T/det.h5" -f
step "run apart" "$L/run.log" 200 "$BIN/rtstap" run --input "$T/i16.h5" --backend gpu --keep detections,output \
    --cfar-pfa 1e-3 -o "$T/full.h5" -f
step "compare" "$L/run.log" 60 python3 - "$T/det.h5" "$T/full.h5" <<'PY'
import sys, h5py, numpy as np
a = h5py.File(sys.argv[1], "r")["detections"][...]
b = h5py.File(sys.argv[2], "r")["detections"][...]
print(f"detections: fused {a.shape[0]}, apart {b.shape[0]}, same: {a.shape == b.shape and bool(np.all(a == b))}")
sys.exit(0 if a.shape == b.shape and np.all(a == b) else 1)
PY
step "bench" "$L/bench.log" 200 "$BIN/rtstap" bench --workloads hard,medium --backends gpu --cpis 2000
rm -rf "$T"
echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt")"
grep -h "detections:" "$L/run.log"
grep -h "engine:" "$L/run.log" | sort | uniq -c
grep -h "^workload\|^medium\|^hard\|stage\|ms" "$L/bench.log" | head -20
printf '%s\n' "${summary[@]}"
