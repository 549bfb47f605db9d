#!/usr/bin/env bash
# Build the libFuzzer harnesses (clang, ASan + UBSan, no CUDA) in their own build directory,
# run each over its seed corpus once (the regression cases), then fuzz each for SECONDS on
# a copy of its corpus (the repository's corpus never grows here). Prints executions per
# harness; exits 1 on any finding (crash, leak, undefined behaviour, timeout, a harness
# check), with the input kept in BUILD_DIR/fuzz-artifacts. See tests/fuzz/README.md.
# usage: bash tests/fuzz/run.sh [BUILD_DIR] [SECONDS]
#   env: FUZZ_HARNESSES="fuzz_cli ..." (a subset), FUZZ_JOBS (build jobs, default 2),
#        FUZZ_H5_FILE_SEED (fuzz_h5_file's seed, default 1), CC (default clang)
set -euo pipefail
cd "$(dirname "$0")/../.."
src=$PWD
build=${1:-build-fuzz}
secs=${2:-60}
harnesses=${FUZZ_HARNESSES:-"fuzz_cli fuzz_perfect fuzz_sigmf fuzz_vrt fuzz_h5_cube fuzz_h5_meta fuzz_h5_file"}
cc=${CC:-clang}
command -v "$cc" >/dev/null || cc=clang-14
command -v "$cc" >/dev/null || { echo "fuzz: no clang (apt-get install clang libclang-rt-14-dev libomp-14-dev)"; exit 1; }

t0=$(date +%s)
mkdir -p "$build"
cmake -S . -B "$build" -DCMAKE_C_COMPILER="$cc" -DRTSTAP_FUZZ=ON -DRTSTAP_TESTS=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/fuzz-configure.log" 2>&1 ||
    { cat "$build/fuzz-configure.log"; exit 1; }
# shellcheck disable=SC2086
cmake --build "$build" -j "${FUZZ_JOBS:-2}" --target $harnesses
echo "fuzz: built in $(( $(date +%s) - t0 )) s"

work=$(mktemp -d "${TMPDIR:-/tmp}/rtstap-fuzz.XXXXXX")
build=$(cd "$build" && pwd)
trap 'rm -rf "$work"' EXIT
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts" "$work/tmp"
artifacts=$(cd "$artifacts" && pwd)
# the harnesses' scratch files (up to 40 MB at once): in memory when /dev/shm has room
if [[ -z "${FUZZ_TMPDIR:-}" ]]; then
    FUZZ_TMPDIR="$work/tmp"
    shm_free=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $4}')
    [[ -w /dev/shm && ${shm_free:-0} -gt 262144 ]] && FUZZ_TMPDIR=$(mktemp -d /dev/shm/rtstap-fuzz.XXXXXX)
fi
export FUZZ_TMPDIR
trap 'rm -rf "$work"; [[ $FUZZ_TMPDIR == /dev/shm/* ]] && rm -rf "$FUZZ_TMPDIR"' EXIT
# leaks inside libhdf5 on corrupt files: lsan.supp (README.md); fast unwinding keeps the
# HDF5 harnesses at speed (their stacks stop at libhdf5, which has no frame pointers)
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=0:${ASAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$src/tests/fuzz/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"

failed=0
summary=""
# the harnesses run in the scratch folder: whatever libFuzzer writes beside itself (fuzz-N.log
# of -jobs, crash-* without an -artifact_prefix) never lands in the repository
cd "$work"
for h in $harnesses; do
    bin="$build/tests/fuzz/$h"
    corpus="$src/tests/fuzz/corpus/$h"
    opts=(-rss_limit_mb=2048 -timeout=10 -artifact_prefix="$artifacts/$h-")
    [[ -f "$src/tests/fuzz/$h.dict" ]] && opts+=(-dict="$src/tests/fuzz/$h.dict")
    [[ $h == fuzz_cli ]] && opts+=(-close_fd_mask=2) # the commands' own messages
    # 1. the corpus once: regression cases of earlier findings, and the seeds
    if ! "$bin" "${opts[@]}" -runs=0 "$corpus" >"$work/$h.regress.log" 2>&1; then
        echo "fuzz: $h FAILED on its corpus (a regression):"
        tail -n 60 "$work/$h.regress.log"
        failed=1
        continue
    fi
    # 2. fuzzing, on a copy of the corpus
    mkdir -p "$work/corpus-$h"
    cp -r "$corpus/." "$work/corpus-$h/"
    run=(-max_total_time="$secs")
    if [[ $h == fuzz_h5_file ]]; then
        # byte-level mutations soon crash libhdf5 1.10.8 itself (README.md): fork mode goes
        # on after a crash, and each crash is replayed below and counted as HDF5's own only
        # when it happens inside libhdf5 under a call that hands HDF5 no buffer of ours
        run+=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -max_len=20480 -seed="${FUZZ_H5_FILE_SEED:-1}")
        : > "$work/$h.before"
        ls "$artifacts" > "$work/$h.before" 2>/dev/null || true
    fi
    rc=0
    "$bin" "${opts[@]}" "${run[@]}" "$work/corpus-$h" >"$work/$h.log" 2>&1 || rc=$?
    if [[ $h == fuzz_h5_file ]]; then
        hdf5_own=0
        rc=0 # libFuzzer's exit says that there were crashes; the replays say whose
        for a in $(ls "$artifacts" | grep "^$h-" | grep -vxF -f "$work/$h.before" || true); do
            ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0" "$bin" "${opts[@]}" -runs=1 \
                "$artifacts/$a" > "$work/replay.log" 2>&1 && continue # not reproducible: HDF5's state
            # whose fault: the access stack's first frame past the allocator, interceptors
            # and libc, and for a bad access to memory, who allocated that memory
            skip='sanitizer|fuzzer::|__interceptor_|__asan|sysdeps|libc\.so|__libc_start|_start |malloc|calloc|realloc|strdup'
            access=$(awk '/allocated by thread|freed by thread/{exit} {print}' "$work/replay.log" | grep -E '^ +#[0-9]+ ' || true)
            alloc=$(awk 'f{print} /allocated by thread/{f=1}' "$work/replay.log" | grep -E '^ +#[0-9]+ ' || true)
            frames=$access
            at=$(grep -vE "$skip" <<<"$access" | head -1)
            by=$(grep -vE "$skip" <<<"$alloc" | head -1)
            hdf5=0
            # a watchdog stall (deadly signal, no bad access) whose first named libhdf5 frame
            # is libhdf5's own allocator (H5FL_*, H5MM_*: a huge block sized from a corrupt
            # header, zero-filled on allocation or on release) is HDF5's own even under
            # H5Dread: HDF5 never allocates or frees a buffer of ours
            first=$(grep libhdf5 <<<"$access" | grep -oE ' in H5[A-Za-z0-9_]+' | head -1)
            if grep -q libhdf5 <<<"$at"; then
                if [[ -n $by ]]; then grep -q libhdf5 <<<"$by" && hdf5=1
                elif ! grep -qE 'H5Dread|H5Aread|H5Tconvert|H5Dwrite|H5Awrite' <<<"$access"; then hdf5=1
                elif grep -q 'deadly signal' "$work/replay.log" &&
                     grep -qE ' in H5(FL|MM)_' <<<"$first"; then hdf5=1; fi
            fi
            if [[ $hdf5 -eq 1 ]]; then
                hdf5_own=$((hdf5_own + 1))
                rm -f "$artifacts/$a"
            else
                echo "fuzz: $h: $a is rtstap's:"; grep -E 'ERROR|SUMMARY' "$work/replay.log" | head -3
                sed -n 1,14p <<<"$frames"
                rc=1
            fi
        done
        runs=$(grep -oE '^#[0-9]+' "$work/$h.log" | tail -1 | tr -d '#')
        echo "Done ${runs:-0} runs in $secs second(s) ($hdf5_own crashes inside libhdf5 1.10.8, not ours)" >> "$work/$h.log"
    fi
    done_line=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$work/$h.log" | tail -1 || true)
    runs=$(sed -E 's/^Done ([0-9]+) runs in ([0-9]+) second.*/\1/' <<<"$done_line")
    took=$(sed -E 's/^Done ([0-9]+) runs in ([0-9]+) second.*/\2/' <<<"$done_line")
    rate=$(grep -oE 'exec/s:? [0-9]+' "$work/$h.log" | tail -1 | cut -d' ' -f2 || true)
    cov=$(grep -oE 'cov: [0-9]+' "$work/$h.log" | tail -1 | cut -d' ' -f2 || true)
    line=$(printf '%-13s %9s execs in %4s s  %6s exec/s  cov %s' "$h" "${runs:-?}" "${took:-?}" \
           "${rate:-?}" "${cov:-?}")
    [[ $h == fuzz_h5_file ]] && line="$line  (libhdf5's own crashes: $hdf5_own)"
    if [[ $rc -ne 0 ]]; then
        echo "fuzz: $h FOUND SOMETHING (exit $rc); the input is in $artifacts:"
        grep -vE '^#[0-9]+ +(NEW|REDUCE|pulse)|NEW_FUNC' "$work/$h.log" | tail -n 80
        line="$line  FINDING"
        failed=1
    fi
    echo "fuzz: $line"
    summary+="$line"$'\n'
done
echo "fuzz: summary ($(( $(date +%s) - t0 )) s in all)"
printf '%s' "$summary"
exit $failed
