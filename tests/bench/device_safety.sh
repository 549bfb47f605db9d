#!/usr/bin/env bash
# device_safety.sh: the GPU machine's share of issue 29 (never destroy, never crash): the
# engine test (the move to the CPU keeps the GPU's host buffers), cli_gpu_fault.sh (device
# allocations failing one by one, and a kernel that traps in the middle of a recording:
# auto moves to the CPU, gpu publishes the CPIs before it), and compute-sanitizer
# memcheck over a run that moves. Logs under $OUT, a short table last.
# Here: bash tests/bench/pack_device.sh BUILD_DIR; there: see device_engine.sh's header.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
export RTSTAP_BIN=$BIN/rtstap RTSTAP_TOOLS_DIR=$BIN
step "test_gpu_engine" "$L/tests.log" 300 "$BIN/test_gpu_engine"
step "cli_gpu_fault" "$L/fault.log" 300 bash tests/cli/cli_gpu_fault.sh
"$BIN/rtstap" gen --preset easy --cpis 6 --out /dev/shm/rec.h5 --quiet -f
RTSTAP_TEST_DEVICE_TRAP=3 step "memcheck: a trap, auto" "$L/memcheck.log" 200 \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$BIN/rtstap" run --input /dev/shm/rec.h5 \
    --output /dev/shm/o.h5 -f --backend auto --quiet
grep -E "^FAIL|all passed|failure|allocations" "$L"/tests.log "$L"/fault.log | cut -c1-200
grep -E "ERROR SUMMARY|running on the CPU" "$L/memcheck.log" | head -5
printf '%s\n' "${summary[@]}"
