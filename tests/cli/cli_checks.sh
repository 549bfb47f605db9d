#!/usr/bin/env bash
# cli_checks: what `run` verifies about its results and its resources (issue 10) —
# ill-conditioned training (rank-1 data: a warning naming the Doppler bin and segment, an
# error under --strict, silent with diagonal loading), non-finite output from finite input
# (never written), the working set against the memory available (RTSTAP_MEMORY_LIMIT),
# and `stream` stopping cleanly on SIGTERM/SIGINT with its report and memory samples.
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
mkcube=$RTSTAP_TOOLS_DIR/mkcube
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
params=(--preset easy --segments 1 --training 24 --doppler-order 1 --beams 4 --backend cpu)

for k in rank1 overflow noise; do "$mkcube" $k "$tmp/$k.h5" 7 || { echo "FAIL: mkcube $k"; exit 1; }; done

# rank-1 training: exit 0 with one warning naming bin, segment, ratio and the remedy
"$bin" run --input "$tmp/rank1.h5" --output "$tmp/r1.h5" "${params[@]}" 2>"$tmp/err"
check "rank1: exit 0 (rc $?)" '[ -s "$tmp/r1.h5" ]'
check "rank1: warning names the bin, segment and remedy" \
    'grep -Eq "^rtstap: warning: .*rank1.h5: ill-conditioned training data at Doppler bin [0-9]+, segment 0: min\|R_ii\|/max\|R_ii\| = .* below .*--loading" "$tmp/err"'
check "rank1: the table reports the conditioning" 'grep -q "training conditioning:" "$tmp/err"'
"$bin" run --input "$tmp/rank1.h5" --output "$tmp/r1s.h5" "${params[@]}" --strict 2>"$tmp/err"
rc=$?
check "rank1 --strict: exit 1 (rc $rc)" '[ $rc -eq 1 ]'
check "rank1 --strict: an error, no output" 'grep -q "^rtstap: error: .*ill-conditioned training data at Doppler bin" "$tmp/err" && [ ! -e "$tmp/r1s.h5" ]'
"$bin" run --input "$tmp/rank1.h5" --output "$tmp/r1l.h5" "${params[@]}" --strict --loading 1e-3 2>"$tmp/err"
check "rank1 --loading 1e-3 --strict: exit 0 without a warning" '[ $? -eq 0 ] && ! grep -q warning "$tmp/err"'

# well-conditioned noise: no warning, even under --strict --check
"$bin" run --input "$tmp/noise.h5" --output "$tmp/n.h5" "${params[@]}" --strict --check 2>"$tmp/err"
check "noise --strict --check: exit 0, no warning" '[ $? -eq 0 ] && ! grep -q warning "$tmp/err"'

# finite input whose Doppler filter overflows: the output is not finite and not written
"$bin" run --input "$tmp/overflow.h5" --output "$tmp/o.h5" "${params[@]}" --quiet 2>"$tmp/err"
rc=$?
check "overflow: exit 1 (rc $rc), no output" '[ $rc -eq 1 ] && [ ! -e "$tmp/o.h5" ]'
check "overflow: names the first non-finite output cell" \
    'grep -q "adaptive output not finite at beam 0, Doppler bin 0, range cell 17" "$tmp/err"'

# the working set against the memory available, before any sample is read
RTSTAP_MEMORY_LIMIT=10k "$bin" run --input "$tmp/noise.h5" --output "$tmp/m.h5" "${params[@]}" 2>"$tmp/err"
rc=$?
check "10 kB allowed: exit 1 (rc $rc), no output" '[ $rc -eq 1 ] && [ ! -e "$tmp/m.h5" ]'
check "10 kB allowed: says what is needed and what is available" \
    'grep -q "needs about .* GB of host memory .* available (RTSTAP_MEMORY_LIMIT)" "$tmp/err"'
RTSTAP_MEMORY_LIMIT=lots "$bin" run --input "$tmp/noise.h5" --output "$tmp/m.h5" "${params[@]}" 2>"$tmp/err"
check "malformed RTSTAP_MEMORY_LIMIT: exit 1 naming it" '[ $? -eq 1 ] && grep -q "RTSTAP_MEMORY_LIMIT" "$tmp/err"'
RTSTAP_MEMORY_LIMIT=64G "$bin" run --preset hard --output "$tmp/h.h5" --backend cpu --quiet 2>"$tmp/err"
check "64 GB allowed, hard preset: runs" '[ $? -eq 0 ] || grep -q "available (MemAvailable\|cgroup" "$tmp/err"'
RTSTAP_MEMORY_LIMIT=100M "$bin" stream --preset hard --backend cpu --cpis 2 --quiet 2>"$tmp/err"
check "stream: the ring of cubes counts (100 MB < engine + 8 cubes)" '[ $? -eq 1 ] && grep -q "cubes and queues" "$tmp/err"'

# stream: SIGTERM, and SIGINT under job control, stop it cleanly with its report
set -m
for sig in TERM INT; do
    "$bin" stream --preset easy --backend cpu --threads 1 --slots 2 --cpis 1000000 --mem-every 2 \
        --json "$tmp/s$sig.json" --timeline "$tmp/s$sig.csv" 2>"$tmp/s$sig.err" &
    pid=$!
    # signal it once it streams (the timeline grows), not while it still sets up
    # (the timeline is written to a temporary, published at the end)
    for _ in $(seq 900); do
        [ -n "$(find "$tmp" -maxdepth 1 -name ".s$sig.csv.tmp.*" -size +0 2>/dev/null)" ] && break
        sleep 0.2
    done
    kill -$sig $pid
    wait $pid
    rc=$?
    want=$((128 + $(kill -l $sig)))
    check "stream SIG$sig: exit $want (rc $rc)" '[ $rc -eq $want ]'
    check "stream SIG$sig: says so" 'grep -q "stream stopped by SIG$sig after" "$tmp/s$sig.err"'
    check "stream SIG$sig: JSON with the signal, the CPIs run and memory samples" \
        'grep -q "\"stopped_by_signal\":[[:space:]]*$(kill -l $sig)" "$tmp/s$sig.json" && grep -q "\"memory_samples\"" "$tmp/s$sig.json" && grep -q "\"host_rss_mb\"" "$tmp/s$sig.json"'
done
set +m
exit $fail
