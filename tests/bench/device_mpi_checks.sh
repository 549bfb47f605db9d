#!/usr/bin/env bash
# device_mpi_checks.sh: issue 32's remaining GPU checks on a host of several GPUs — `bench
# --devices all` (each GPU backend on every GPU at once, against one GPU), and a real device
# fault on rank 1 of `mpirun -n 2 rtstap-mpi run` (RTSTAP_TEST_DEVICE_TRAP: a kernel that
# traps, the context lost): rank 1 and its lost CPIs named, the CPIs before the first lost
# one published with /config stopped, equal to the one-GPU run's rows. Logs under $OUT.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
step "bench --devices all" "$L/bench.log" 300 "$BIN/rtstap" bench --workloads easy,hard --backends gpu,cublas \
    --cpis 2000 --devices all --json "$OUT/bench.json"
D=/dev/shm/rtstap-fault
mkdir -p $D
step "gen 64 CPIs" "$L/fault.log" 120 "$BIN/rtstap" gen --preset hard --cpis 64 --no-clutter --no-jammers --seed 3 \
    --target 200:0:40:0 -o $D/rec.h5 -f --quiet
step "run 1 GPU" "$L/fault.log" 60 "$BIN/rtstap" run --input $D/rec.h5 -o $D/one.h5 -f --backend gpu --quiet
printf '#!/usr/bin/env bash\nexec mpirun --bind-to none -n 1 %s run --input %s -o %s -f --backend gpu --quiet : -n 1 -x RTSTAP_TEST_DEVICE_TRAP=10 %s run --input %s -o %s -f --backend gpu --quiet\n' \
    "$BIN/rtstap-mpi" $D/rec.h5 $D/mpi.h5 "$BIN/rtstap-mpi" $D/rec.h5 $D/mpi.h5 > "$BIN/fault"
chmod +x "$BIN/fault"
step "mpi -n 2, a device fault on rank 1" "$L/fault.log" 120 "$BIN/fault"
step "shape" "$L/fault.log" 20 "$BIN/h5shape" $D/mpi.h5 /weights
step "stopped" "$L/fault.log" 20 "$BIN/h5attr" $D/mpi.h5 /config stopped
rows=$("$BIN/h5shape" $D/mpi.h5 /weights | sed 's/.* \([0-9]*\)x.*/\1/')
python3 - "$D/one.h5" "$D/mpi.h5" >> "$L/fault.log" 2>&1 <<'PYEOF'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1]), h5py.File(sys.argv[2])
n = b["/weights"].shape[0]
same = np.array_equal(a["/weights"][:n], b["/weights"][...])
da = a["/detections"][...]; db = b["/detections"][...]
same_det = np.array_equal(da[da["cpi"] < n], db)
print(f"prefix of {n} CPIs: weights equal {same}, detections equal {same_det}")
PYEOF
rm -rf $D
echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt")"
grep -h "^workload\|^easy\|^hard" "$L/bench.log"
grep -h "rank 1\|stopped\|prefix\|/weights\|rc=" "$L/fault.log" | head -12
printf '%s\n' "${summary[@]}"
