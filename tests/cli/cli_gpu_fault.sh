#!/usr/bin/env bash
# cli_gpu_fault: GPU faults (issue 10) — every device allocation of a GPU run made to fail
# in turn (RTSTAP_TEST_FAIL_DEVICE_ALLOC=N, the N-th cudaMalloc of the process): with
# --backend gpu the run ends with exit 1 and CUDA's error string, writing nothing; with
# --backend auto it falls back to the CPU engine, says so, and writes the same result as a
# CPU run. Device memory short (RTSTAP_DEVICE_MEMORY_LIMIT): refused before allocating,
# or the CPU under auto. Skipped (77) without a usable CUDA device.
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
if ! "$bin" --version 2>/dev/null | grep -q "^GPU backend: available"; then
    echo "cli_gpu_fault: no usable CUDA device; skipping"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
shape=$RTSTAP_TOOLS_DIR/h5shape
run=(run --preset easy --quiet)

"$bin" "${run[@]}" --backend cpu --output "$tmp/cpu.h5" 2>/dev/null
check "cpu reference run" '[ -s "$tmp/cpu.h5" ]'
"$shape" "$tmp/cpu.h5" --detections > "$tmp/cpu.det"

# how many device allocations a plain GPU run makes: fail each in turn
n=0
for k in $(seq 1 40); do
    RTSTAP_TEST_FAIL_DEVICE_ALLOC=$k "$bin" "${run[@]}" --backend gpu --output "$tmp/g$k.h5" 2>"$tmp/g$k.err"
    rc=$?
    if [ $rc -eq 0 ]; then n=$((k - 1)); rm -f "$tmp/g$k.h5"; break; fi # past the last allocation
    check "alloc $k, --backend gpu: exit 1 (rc $rc)" '[ $rc -eq 1 ]'
    check "alloc $k, --backend gpu: CUDA's words, no output" \
        'grep -q "^rtstap: error: .*out of memory" "$tmp/g$k.err" && [ ! -e "$tmp/g$k.h5" ]'
    RTSTAP_TEST_FAIL_DEVICE_ALLOC=$k "$bin" "${run[@]}" --backend auto --output "$tmp/a$k.h5" 2>"$tmp/a$k.err"
    rc=$?
    check "alloc $k, --backend auto: exit 0 on the CPU (rc $rc)" '[ $rc -eq 0 ] && [ -s "$tmp/a$k.h5" ]'
    check "alloc $k, --backend auto: says why" \
        'grep -q "^rtstap: warning: running on the CPU: the GPU engine could not be made (.*out of memory" "$tmp/a$k.err"'
    "$shape" "$tmp/a$k.h5" --detections > "$tmp/a$k.det" 2>/dev/null
    check "alloc $k, --backend auto: the CPU run's detections" 'cmp -s "$tmp/a$k.det" "$tmp/cpu.det"'
done
echo "cli_gpu_fault: a GPU run made $n device allocations; each one failed in turn"
check "at least 10 allocations were tried (got $n)" '[ $n -ge 10 ]'

RTSTAP_DEVICE_MEMORY_LIMIT=1M "$bin" "${run[@]}" --backend gpu --output "$tmp/d.h5" 2>"$tmp/d.err"
rc=$?
check "1 MB of device memory, gpu: exit 1 (rc $rc)" '[ $rc -eq 1 ] && [ ! -e "$tmp/d.h5" ]'
check "1 MB of device memory, gpu: says why" 'grep -q "GB of device memory but .* allowed by RTSTAP_DEVICE_MEMORY_LIMIT" "$tmp/d.err"'
RTSTAP_DEVICE_MEMORY_LIMIT=1M "$bin" "${run[@]}" --backend auto --output "$tmp/d2.h5" 2>"$tmp/d2.err"
check "1 MB of device memory, auto: the CPU, with a warning" \
    '[ $? -eq 0 ] && grep -q "warning: running on the CPU: the run needs about" "$tmp/d2.err"'
# a device fault in the middle of a recording (issue 29): the 4th submit launches a kernel
# that traps — the context is lost, every later CUDA call fails. auto moves to the CPU and
# runs every CPI (the detections of a CPU run); gpu publishes the CPIs before it, marked
# stopped, and exits 1
"$bin" gen --preset easy --cpis 8 --seed 4 --out "$tmp/rec.h5" --quiet
"$bin" run --input "$tmp/rec.h5" --output "$tmp/rcpu.h5" --backend cpu --quiet 2>/dev/null
"$shape" "$tmp/rcpu.h5" --detections > "$tmp/rcpu.det"
RTSTAP_TEST_DEVICE_TRAP=4 "$bin" run --input "$tmp/rec.h5" --output "$tmp/rauto.h5" --backend auto \
    --quiet 2>"$tmp/rauto.err"
rc=$?
check "device trap, auto: exit 0 (rc $rc): $(head -c 300 "$tmp/rauto.err")" '[ $rc -eq 0 ]'
check "device trap, auto: said once, the CPI named" \
    '[ "$(grep -c "running on the CPU from CPI [0-9]* on: the gpu engine failed" "$tmp/rauto.err")" = 1 ]'
"$shape" "$tmp/rauto.h5" --detections > "$tmp/rauto.det"
check "device trap, auto: 8 CPIs, the CPU run's detections" \
    '[ "$("$RTSTAP_TOOLS_DIR/h5attr" "$tmp/rauto.h5" /config cpis)" = "cpis 8" ] && cmp -s "$tmp/rcpu.det" "$tmp/rauto.det"'
RTSTAP_TEST_DEVICE_TRAP=4 "$bin" run --input "$tmp/rec.h5" --output "$tmp/rgpu.h5" --backend gpu \
    --quiet 2>"$tmp/rgpu.err"
rc=$?
check "device trap, gpu: exit 1 naming the CPI and the file (rc $rc): $(head -c 300 "$tmp/rgpu.err")" \
    '[ $rc -eq 1 ] && grep -q "CPIs before it are in $tmp/rgpu.h5 (/config stopped)" "$tmp/rgpu.err"'
check "device trap, gpu: /config stopped names the device fault" \
    '"$RTSTAP_TOOLS_DIR/h5attr" "$tmp/rgpu.h5" /config stopped | grep -q "by a device fault at input CPI"'
exit $fail
