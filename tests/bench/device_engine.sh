#!/usr/bin/env bash
# device_engine.sh: the GPU machine's share of checking and timing the streaming engine, in
# two calls that each fit a device command's 10 minutes:
#   tests  every test that uses the GPU (engine vs double reference and CPU engine, graphs
#          vs direct, 1000-CPI soak, QR/weights/CFAR kernels, pipeline, PERFECT and SINR
#          with the GPU backends) and compute-sanitizer (memcheck, racecheck, synccheck)
#          over the engine test;
#   verify a commit's GPU tests and a stream/bench spot check;
#   sliding the sliding training window (issue 13 item 1): the engine tests, sanitizers
#          over a sliding run and the CFAR kernels, and its stream rates against the
#          segment scheme and the QR kernel alone at the same batch;
#   final  the engine tests, then perf;
#   jdl    JDL on the GPU engine: the engine tests, sanitizers over a JDL run, its stream
#          rates (hard preset, NA = 3 and 5, Q = 3 and 1) beside post-Doppler's;
#   subcpi pre-Doppler, ADPCA and DPCA on the GPU engine: the engine and pipeline tests,
#          sanitizers over their runs, stream rates (hard preset) beside post-Doppler's
#          and the stage kernels under ncu;
#   oscfar the CFAR kernels' tests (sanitized too), the engine's detector and hit-list
#          overflow cases, OS against CA in the stream and each test kernel under ncu;
#   perf   `rtstap stream` (every workload, 1-4 slots, output kept, a recording from the
#          page cache), `rtstap bench` (every workload and backend), `rtstap bench-qr`
#          (the RT_STAP and PERFECT batches), the CPU scaling table (1-16 threads), and
#          `rtstap run` over a recording.
# Logs and JSON under $OUT (tarred: a call returns at most 8 files), a short table last.
#
# Here:  bash tests/bench/pack_device.sh BUILD_DIR   (makes .gpubin/bin.txz, .gpulibs.tgz)
# There: mkdir -p .gpulibs && tar -xzf .gpulibs.tgz -C .gpulibs &&
#        export LD_LIBRARY_PATH=$PWD/.gpulibs:$LD_LIBRARY_PATH && bash tests/bench/device_engine.sh tests|perf
mode=${1:?tests, perf, final, verify, sliding, slidingperf, algorithms, oscfar, jdl, subcpi or robust}
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"

if [ "$mode" = verify ]; then # a commit's GPU checks and a spot check of its speed
    for t in test_gpu_engine test_gpu_apply test_gpu_doppler test_engine test_gpu_cfar test_pipeline test_perfect test_sinr; do
        step "$t" "$L/tests.log" 300 "$BIN/$t"
    done
    grep -h -E "^FAIL|all passed|failure|soak:" "$L"/tests.log | sort | uniq -c
    step "stream hard" "$L/stream.log" 60 "$BIN/rtstap" stream --preset hard --cpis 4000 --slots 3 --deadline-ms 1
    step "bench hard" "$L/bench.log" 120 "$BIN/rtstap" bench --workloads hard --backends gpu,lapack --cpis 400 --cpu-cpis 6
    grep -E "CPIs:|latency" "$L/stream.log"; grep -E "^hard" "$L/bench.log"
fi
if [ "$mode" = sliding ]; then
    S="$BIN/rtstap stream --cpis"
    step "stream hard segment" "$L/stream.log" 60 $S 4000 --preset hard --json "$L/st-hard.json"
    for lb in 16 4 1; do
        n=$((lb == 1 ? 200 : 800))
        step "stream hard sliding $lb" "$L/stream.log" 120 $S $n --preset hard --training-window sliding --block $lb --keep detections --json "$L/st-hard-sl$lb.json"
    done
    step "stream hard sliding 1 weights" "$L/stream.log" 120 $S 200 --preset hard --training-window sliding --block 1 --json "$L/st-hard-sl1w.json"
    for w in easy medium; do
        step "stream $w sliding 1" "$L/stream.log" 120 $S 300 --preset $w --training-window sliding --block 1 --keep detections --json "$L/st-$w-sl1.json"
    done
    step "bench-qr sliding batches" "$L/benchqr.log" 200 "$BIN/rtstap" bench-qr --sizes 240x66x61440,240x66x3840,80x16x61440,192x96x49152 --backends gpu --repeat 5 --weights 16
    echo "---- stream"; grep -E "^rtstap stream|CPIs:|latency" "$L/stream.log" | cut -c1-200
    for j in "$L"/st-*.json; do
        printf '%s ' "$(basename "$j")"; tr -d ' \t\n' < "$j" | grep -o '"stage_ms_median":{[^}]*}'
    done
    echo "---- bench-qr"; grep -v "^====" "$L/benchqr.log" | tail -8
    for t in test_gpu_engine test_engine test_pipeline test_gpu_cfar; do
        step "$t" "$L/tests.log" 200 "$BIN/$t"
    done
    for tool in memcheck racecheck synccheck; do
        step "$tool sliding run" "$L/sanitize.log" 90 "$cs" --tool "$tool" --error-exitcode 9 \
            "$BIN/rtstap" run --preset easy --training-window sliding --block 16 --guard 2 --backend gpu -f -o /tmp/sl.h5 --quiet
    done
    for tool in racecheck synccheck; do
        step "$tool test_gpu_cfar" "$L/sanitize.log" 120 "$cs" --tool "$tool" --error-exitcode 9 "$BIN/test_gpu_cfar"
    done
    echo "---- verdicts"
    grep -h -E "^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY|all passed|failure|vs double|self-nulling" "$L"/tests.log "$L"/sanitize.log | sort | uniq -c | sort -rn | head -30
fi
if [ "$mode" = slidingperf ]; then # one CPI in flight: stage times without overlap
    S="$BIN/rtstap stream --keep detections --cpis"
    step "hard sliding 1 slots 1" "$L/stream.log" 60 $S 30 --slots 1 --preset hard --training-window sliding --block 1 --json "$L/st-hard-sl1-s1.json"
    step "hard sliding 16 slots 1" "$L/stream.log" 60 $S 200 --slots 1 --preset hard --training-window sliding --block 16 --json "$L/st-hard-sl16-s1.json"
    step "easy sliding 1 slots 1" "$L/stream.log" 60 $S 100 --slots 1 --preset easy --training-window sliding --block 1 --json "$L/st-easy-sl1-s1.json"
    step "hard sliding 1 slots 2" "$L/stream.log" 60 $S 60 --slots 2 --preset hard --training-window sliding --block 1 --json "$L/st-hard-sl1-s2.json"
    step "hard segment slots 1" "$L/stream.log" 60 $S 2000 --slots 1 --preset hard --json "$L/st-hard-s1.json"
    step "stream hard segment slots 3" "$L/stream.log" 60 $S 4000 --preset hard --json "$L/st-hard-s3.json"
    for t in test_gpu_engine test_engine test_pipeline; do
        step "$t" "$L/tests.log" 200 "$BIN/$t"
    done
    step "memcheck sliding run" "$L/tests.log" 90 "$cs" --tool memcheck --error-exitcode 9 \
        "$BIN/rtstap" run --preset easy --training-window sliding --block 16 --guard 2 --backend gpu -f -o /tmp/sl.h5 --quiet
    step "racecheck sliding run" "$L/tests.log" 90 "$cs" --tool racecheck --error-exitcode 9 \
        "$BIN/rtstap" run --preset easy --training-window sliding --block 16 --guard 2 --backend gpu -f -o /tmp/sl.h5 --quiet
    grep -h -E "^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|all passed|failure" "$L"/tests.log | sort | uniq -c
    echo "---- stream"; grep -E "^rtstap stream|CPIs:|latency" "$L/stream.log" | cut -c1-200
    for j in "$L"/st-*.json; do
        printf '%s ' "$(basename "$j")"; tr -d ' \t\n' < "$j" | grep -o '"stage_ms_median":{[^}]*}'
    done
fi
if [ "$mode" = algorithms ]; then # README's algorithm table: the hard preset, 3 CPIs in flight
    S="$BIN/rtstap stream --preset hard --slots 3"
    for k in ca os go so ca2d none; do
        step "Q=3 segments cfar $k" "$L/stream.log" 60 $S --cpis 4000 --cfar $k --json "$L/al-q3-$k.json"
    done
    step "Q=1 segments" "$L/stream.log" 60 $S --cpis 4000 --doppler-order 1 --json "$L/al-q1.json"
    for lb in 16 4 1; do
        n=$((lb == 1 ? 150 : 600))
        step "Q=3 sliding $lb" "$L/stream.log" 120 $S --cpis $n --training-window sliding --block $lb --keep detections --json "$L/al-q3-sl$lb.json"
        step "Q=1 sliding $lb" "$L/stream.log" 120 $S --cpis $((n * 4)) --doppler-order 1 --training-window sliding --block $lb --keep detections --json "$L/al-q1-sl$lb.json"
    done
    for tool in racecheck synccheck; do
        step "$tool sliding run" "$L/tests.log" 120 "$cs" --tool $tool --error-exitcode 9 \
            "$BIN/rtstap" run --preset easy --training-window sliding --block 16 --guard 2 --backend gpu -f -o /tmp/sl.h5 --quiet
    done
    grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY" "$L"/tests.log | sort | uniq -c
    echo "---- stream"; grep -E "^rtstap stream|CPIs:|latency" "$L/stream.log" | cut -c1-200
fi
if [ "$mode" = jdl ]; then
    for t in test_gpu_engine test_engine test_pipeline test_sinr; do
        step "$t" "$L/tests.log" 300 "$BIN/$t"
    done
    for tool in memcheck racecheck synccheck; do
        step "$tool jdl run" "$L/sanitize.log" 120 "$cs" --tool "$tool" --error-exitcode 9 \
            "$BIN/rtstap" run --preset easy --algorithm jdl --doppler-order 3 --backend gpu -f -o /tmp/j.h5 --quiet
    done
    S="$BIN/rtstap stream --preset hard"
    step "post-doppler slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --json "$L/j-pd-s3.json"
    step "jdl 3 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm jdl --json "$L/j-3-s3.json"
    step "jdl 3 slots 1" "$L/stream.log" 60 $S --slots 1 --cpis 2000 --algorithm jdl --json "$L/j-3-s1.json"
    step "jdl 5 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm jdl --angle-bins 5 --json "$L/j-5-s3.json"
    step "jdl 3 Q=1 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm jdl --doppler-order 1 --json "$L/j-3q1-s3.json"
    step "jdl 3 sliding 16 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 1000 --algorithm jdl --training-window sliding --block 16 --training 120 --json "$L/j-3sl16-s3.json"
    step "jdl 3 cublas slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 1000 --algorithm jdl --backend cublas --json "$L/j-3cb-s3.json"
    step "jdl 3 K=48 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm jdl --training 48 --json "$L/j-3k48-s3.json"
    step "jdl 3 K=48 slots 1" "$L/stream.log" 60 $S --slots 1 --cpis 2000 --algorithm jdl --training 48 --json "$L/j-3k48-s1.json"
    nc=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
    step "ncu jdl" "$L/ncu.log" 120 "$nc" --clock-control none -k "regex:beamspace|qr|expand" -c 6 \
        --metrics gpu__time_duration.sum $S --slots 1 --cpis 3 --algorithm jdl
    grep -h -E "^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY|all passed|failure|JDL" "$L"/tests.log "$L"/sanitize.log | cut -c1-160 | sort | uniq -c | head -40
    echo "---- stream"; grep -E "^rtstap stream|engine:|CPIs:|latency" "$L/stream.log" | cut -c1-220
    echo "---- ncu"; grep -E "^  [a-zA-Z<].*\(|gpu__time_duration" "$L/ncu.log" | sed -E 's/\(const.*\) \(/(/' | cut -c1-120 | head -16
    for j in "$L"/j-*.json; do
        printf '%s ' "$(basename "$j")"; tr -d ' \t\n' < "$j" | grep -o '"stage_ms_median":{[^}]*}'
    done
fi
if [ "$mode" = subcpi ]; then # pre-Doppler and ADPCA: checks, sanitizers, rates, kernels
    for t in test_gpu_engine test_pipeline test_engine test_sinr; do
        step "$t" "$L/tests.log" 300 "$BIN/$t"
    done
    for a in "pre-doppler --sub-cpi 3" "adpca --sub-cpi 2" "dpca --sub-cpi 2"; do
        for tool in memcheck racecheck synccheck; do
            step "$tool $a" "$L/sanitize.log" 120 "$cs" --tool "$tool" --error-exitcode 9 \
                "$BIN/rtstap" run --preset easy --algorithm $a --backend gpu -f -o /tmp/s.h5 --quiet
        done
    done
    S="$BIN/rtstap stream --preset hard"
    step "post-doppler slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --json "$L/s-pd-s3.json"
    step "pre-doppler 3 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm pre-doppler --json "$L/s-pre3-s3.json"
    step "pre-doppler 3 slots 1" "$L/stream.log" 60 $S --slots 1 --cpis 2000 --algorithm pre-doppler --json "$L/s-pre3-s1.json"
    step "pre-doppler 2 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm pre-doppler --sub-cpi 2 --json "$L/s-pre2-s3.json"
    step "adpca 2 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm adpca --json "$L/s-ad2-s3.json"
    step "adpca 3 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm adpca --sub-cpi 3 --json "$L/s-ad3-s3.json"
    step "dpca 2 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm dpca --json "$L/s-dp2-s3.json"
    step "dpca 3 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --algorithm dpca --sub-cpi 3 --json "$L/s-dp3-s3.json"
    step "post-doppler slots 3 again" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --json "$L/s-pd2-s3.json"
    step "pre-doppler 3 cublas slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 1000 --algorithm pre-doppler --backend cublas --json "$L/s-pre3cb-s3.json"
    step "pre-doppler 3 sliding 16 slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 1000 --algorithm pre-doppler --training-window sliding --block 16 --training 120 --keep detections --json "$L/s-pre3sl16-s3.json"
    step "adpca 2 cublas slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 1000 --algorithm adpca --backend cublas --json "$L/s-ad2cb-s3.json"
    for a in pre-doppler adpca dpca; do
        step "$a cpu engine" "$L/stream.log" 120 $S --slots 1 --cpis 20 --algorithm $a --backend cpu --json "$L/s-$a-cpu.json"
    done
    nc=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
    step "ncu pre-doppler" "$L/ncu.log" 120 "$nc" --clock-control none -c 12 \
        --metrics gpu__time_duration.sum $S --slots 1 --cpis 2 --algorithm pre-doppler
    grep -h -E "^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY|all passed|failure" "$L"/tests.log "$L"/sanitize.log | cut -c1-160 | sort | uniq -c | head -40
    echo "---- stream"; grep -E "^rtstap stream|engine:|CPIs:|latency" "$L/stream.log" | cut -c1-220
    echo "---- ncu"; grep -E "^  [a-zA-Z<].*\(|gpu__time_duration" "$L/ncu.log" | sed -E 's/\(const.*\) \(/(/' | cut -c1-120 | head -30
    for j in "$L"/s-*.json; do
        printf '%s ' "$(basename "$j")"; tr -d ' \t\n' < "$j" | grep -o '"stage_ms_median":{[^}]*}'
    done
fi
if [ "$mode" = oscfar ]; then # the OS-CFAR kernel: checks, the stream, kernel times
    for t in test_gpu_cfar test_gpu_engine; do
        step "$t" "$L/tests.log" 300 "$BIN/$t"
    done
    for tool in memcheck racecheck; do
        step "$tool test_gpu_cfar" "$L/sanitize.log" 200 "$cs" --tool "$tool" --error-exitcode 9 "$BIN/test_gpu_cfar"
    done
    S="$BIN/rtstap stream --preset hard"
    for k in ca os; do
        step "cfar $k slots 3" "$L/stream.log" 60 $S --slots 3 --cpis 4000 --cfar $k --json "$L/os-$k-s3.json"
        step "cfar $k slots 1" "$L/stream.log" 60 $S --slots 1 --cpis 2000 --cfar $k --json "$L/os-$k-s1.json"
    done
    step "cfar os train 64" "$L/stream.log" 60 $S --slots 3 --cpis 2000 --cfar os --cfar-train 64 --json "$L/os-os64-s3.json"
    nc=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
    for k in ca os; do
        step "ncu $k" "$L/ncu.log" 120 "$nc" --clock-control none -k "regex:os_kernel|test_kernel|prefix_kernel" -c 6 \
            --metrics gpu__time_duration.sum $S --slots 1 --cpis 3 --cfar $k
    done
    grep -h -E "^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|all passed|failure|overflowing" "$L"/tests.log "$L"/sanitize.log | cut -c1-150 | sort | uniq -c | head -30
    echo "---- stream"; grep -E "^rtstap stream|CPIs:|latency" "$L/stream.log" | cut -c1-200
    for j in "$L"/os-*.json; do
        printf '%s ' "$(basename "$j")"; tr -d ' \t\n' < "$j" | grep -o '"stage_ms_median":{[^}]*}'
    done
    echo "---- ncu"; grep -E "os_kernel|test_kernel|prefix_kernel|gpu__time_duration" "$L/ncu.log" | head -40
fi
if [ "$mode" = robust ]; then # issue 10 on the GPU: faults, checks, stop, 10^5-CPI soak
    export RTSTAP_BIN=$BIN/rtstap RTSTAP_TOOLS_DIR=$BIN
    for t in test_gpu_engine test_engine test_gpu_weights test_gpu_qr; do
        step "$t" "$L/tests.log" 300 "$BIN/$t"
    done
    step cli_gpu_fault "$L/tests.log" 240 bash tests/cli/cli_gpu_fault.sh
    step cli_checks "$L/tests.log" 120 bash tests/cli/cli_checks.sh
    # SIGINT under job control on the GPU: the CPIs in flight finish, the report is written
    set -m
    "$BIN/rtstap" stream --preset hard --cpis 100000000 --json "$L/stream-sigint.json" > "$L/sigint.log" 2>&1 &
    pid=$!; sleep 6; kill -INT $pid; wait $pid; echo "stream SIGINT rc=$?" >> "$L/sigint.log"
    set +m
    summary+=("$(tail -1 "$L/sigint.log")")
    step "soak 1e5 CPIs" "$L/soak.log" 200 "$BIN/rtstap" stream --preset hard --cpis 100000 --slots 3 \
        --mem-every 1000 --json "$L/soak.json"
    step "stream hard" "$L/stream.log" 60 "$BIN/rtstap" stream --preset hard --cpis 4000 --slots 3 --deadline-ms 1
    step "bench-qr" "$L/benchqr.log" 120 "$BIN/rtstap" bench-qr --sizes 240x66x128,192x96x128,80x16x384 --backends gpu --weights 16
    for tool in memcheck synccheck racecheck; do
        step "$tool test_engine" "$L/sanitize.log" 150 "$cs" --tool "$tool" --error-exitcode 9 "$BIN/test_engine"
    done
    echo "---- verdicts"
    grep -h -E "^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY|all passed|failure|skipped|soak:|min.R_ii|cli_gpu_fault:|device allocations" "$L"/tests.log "$L"/sanitize.log | sort | uniq -c | sort -rn | head -40
    grep -E "memory samples|CPIs:|latency" "$L/soak.log" "$L/stream.log" "$L/sigint.log"
    grep -E "240x66|192x96|80x16" "$L/benchqr.log" | head
fi
if [ "$mode" = final ]; then # the engine's tests, then perf
    step test_gpu_engine "$L/tests.log" 300 "$BIN/test_gpu_engine"
    step test_engine "$L/tests.log" 200 "$BIN/test_engine"
    grep -h -E "^FAIL|all passed|failure|soak:|GEMMs vs" "$L"/tests.log | sort | uniq -c
    mode=perf
fi
if [ "$mode" = tests ]; then
    for t in test_gpu_engine test_engine test_gpu_qr test_gpu_weights test_gpu_cfar test_pipeline test_perfect test_sinr; do
        step "$t" "$L/tests.log" 300 "$BIN/$t"
    done
    for tool in memcheck racecheck synccheck; do
        step "$tool test_engine" "$L/sanitize.log" 200 "$cs" --tool "$tool" --error-exitcode 9 "$BIN/test_engine"
    done
    echo "---- verdicts"
    grep -h -E "^FAIL|ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY|all passed|failure|skipped|soak:|vs double|materialized" "$L"/tests.log "$L"/sanitize.log | sort | uniq -c | sort -rn | head -40
fi

if [ "$mode" = perf ]; then
    for w in hard easy medium perfect-small perfect-medium perfect-large; do
        step "stream $w" "$L/stream.log" 60 "$BIN/rtstap" stream --preset $w --cpis 4000 --slots 3 --deadline-ms 1 --json "$L/stream-$w.json"
    done
    for w in easy medium; do
        step "stream $w slots 4" "$L/stream.log" 60 "$BIN/rtstap" stream --preset $w --cpis 4000 --slots 4 --deadline-ms 1 --json "$L/stream-$w-s4.json"
    done
    for s in 1 2 4; do
        step "stream hard slots $s" "$L/stream.log" 60 "$BIN/rtstap" stream --preset hard --cpis 4000 --slots $s --deadline-ms 1 --json "$L/stream-hard-s$s.json"
    done
    step "stream hard keep output" "$L/stream.log" 60 "$BIN/rtstap" stream --preset hard --cpis 3000 --keep detections,weights,output
    step "stream hard cublas" "$L/stream.log" 60 "$BIN/rtstap" stream --preset hard --cpis 1000 --backend cublas
    # a recording from the page cache: 150 distinct hard CPIs (1.6 GB), replayed
    step "gen recording" "$L/stream.log" 200 "$BIN/rtstap" gen --preset hard --no-clutter --cpis 150 --out /tmp/hard150.h5 --quiet
    step "stream --input" "$L/stream.log" 120 "$BIN/rtstap" stream --input /tmp/hard150.h5 --cpis 1500 --slots 3 --json "$L/stream-input.json"
    step "run recording gpu" "$L/stream.log" 120 "$BIN/rtstap" run --input /tmp/hard150.h5 --output /tmp/r150.h5 --doppler-order 3 --training 240 --beams 16
    step bench "$L/bench.log" 400 "$BIN/rtstap" bench --cpis 400 --cpu-cpis 6 --json "$L/bench.json"
    step bench-qr "$L/benchqr.log" 200 "$BIN/rtstap" bench-qr --sizes 240x66x128,80x16x384,192x96x128,240x66x1280,32x12x4096,64x18x4096,64x24x16384 --backends gpu,cublas,cpu,lapack --repeat 20 --weights 16 --json "$L/benchqr.json"
    # RTSTAP_PERF_NO_SCALING=1: leave out the CPU scaling table (to fit one device call
    # beside the rest when only the GPU tables are refreshed)
    for t in $([ -n "${RTSTAP_PERF_NO_SCALING:-}" ] || echo 1 2 4 8 16); do
        step "scaling qr t$t" "$L/scaling.log" 120 "$BIN/rtstap" bench-qr --sizes 240x66x128 --backends cpu,lapack --repeat 10 --threads $t
        step "scaling cpi t$t" "$L/scaling.log" 120 "$BIN/rtstap" bench --workloads hard --backends cpu,lapack --cpu-cpis 5 --threads $t
    done
    echo "---- stream"; grep -E "^rtstap stream|engine:|CPIs:|latency|copy:|reading:" "$L/stream.log" | cut -c1-170
    echo "---- bench"; grep -v "^====\|^bench:" "$L/bench.log" | tail -28
    echo "---- bench-qr"; grep -v "^====" "$L/benchqr.log" | tail -30
    echo "---- scaling"; grep -E "^==== scaling|  240   66|^hard " "$L/scaling.log"
fi
echo "---- steps"; printf '%s\n' "${summary[@]}"
tar -C "$OUT" -czf "$OUT/logs-$mode.tgz" logs && rm -rf "$L"
