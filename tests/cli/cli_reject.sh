#!/usr/bin/env bash
# cli_reject: `rtstap run` on every malformed input of tests/tools/mkinput (exit 1, a
# message on stderr naming the file and the problem, no output and no temporary file
# left), on valid variants (exit 0), on an existing output (refused, unchanged), on
# parameters inconsistent with the input (exit 1) and on bad usage (exit 2).
# env: RTSTAP_BIN (the rtstap binary), RTSTAP_TOOLS_DIR (where mkinput was built).
set -u

if [[ -z "${RTSTAP_BIN:-}" || ! -x "${RTSTAP_BIN}" ]]; then
    echo "cli_reject: RTSTAP_BIN is unset or not executable; skipping"
    exit 77
fi
MKINPUT="${RTSTAP_TOOLS_DIR:-$(dirname "$RTSTAP_BIN")/tests}/mkinput"
H5SAME="$(dirname "$MKINPUT")/h5same"
if [[ ! -x "$MKINPUT" ]]; then
    echo "cli_reject: mkinput not found at '$MKINPUT' (set RTSTAP_TOOLS_DIR); skipping"
    exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/cli_reject.XXXXXX") || exit 1
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
indir="$work/in"
outdir="$work/out"
mkdir -p "$indir" "$outdir"
seed=${RTSTAP_SEED:-20261203} # fixed in CI; RTSTAP_SEED=N explores
echo "seed = $seed"

failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# Parameters that suit the 4 x 8 x 48 cubes of mkinput: N = C = 4, K = 24 <= R/S = 48.
params=(--preset easy --segments 1 --training 24 --doppler-order 1 --beams 4)

# run NAME EXPECTED_STATUS OUTPUT ARGS...: runs rtstap, checks the exit status, that
# a failure prints "rtstap: error: ..." (and no HDF5 diagnostics) and that a failure
# leaves neither OUTPUT nor a temporary file in $outdir. Leaves stderr in $work/err.
run() {
    local name=$1 want=$2 out=$3
    shift 3
    "$RTSTAP_BIN" "$@" >"$work/stdout" 2>"$work/err"
    local rc=$?
    if [[ $rc -ne $want ]]; then
        fail "$name: exit status $rc, expected $want; stderr: $(head -c 600 "$work/err")"
    fi
    if [[ $want -ne 0 ]]; then
        grep -q '^rtstap: error: ' "$work/err" ||
            fail "$name: no 'rtstap: error:' line on stderr: $(head -c 300 "$work/err")"
        [[ -n "$out" && -e "$out" ]] && fail "$name: output '$out' was created"
    fi
    grep -q 'HDF5-DIAG' "$work/err" && fail "$name: HDF5's own error stack was printed"
    local tmps
    tmps=$(find "$outdir" -maxdepth 1 -name '.*.tmp.*' | head -3)
    [[ -n "$tmps" ]] && fail "$name: temporary files left: $tmps"
    return 0
}

# stderr must contain each given fixed string
expect_words() {
    local name=$1
    shift
    local w
    for w in "$@"; do
        [[ -z "$w" ]] && continue
        grep -qF -- "$w" "$work/err" || fail "$name: stderr lacks '$w': $(head -c 600 "$work/err")"
    done
}

is_hdf5() { [[ "$(head -c 4 "$1" 2>/dev/null | tail -c 3)" == "HDF" ]]; }

# ---- every kind mkinput knows: valid ones run, malformed ones are rejected
nkinds=0
while IFS="|" read -r kind validity kw1 kw2 _what; do
    [[ -z "$kind" ]] && continue
    nkinds=$((nkinds + 1))
    in="$indir/$kind.h5"
    out="$outdir/$kind.out.h5"
    if ! "$MKINPUT" "$kind" "$in" "$seed" 2>"$work/mk.err"; then
        fail "mkinput $kind: $(cat "$work/mk.err")"
        continue
    fi
    if [[ "$validity" == valid ]]; then
        run "$kind (valid)" 0 "$out" run --input "$in" --output "$out" --quiet "${params[@]}"
        if [[ ! -s "$out" ]] || ! is_hdf5 "$out"; then fail "$kind: no HDF5 output written"; fi
        # every recorder format gives the result of its complex64 equivalent, bit for bit
        # (the samples the reader must give: stored values times `scale`)
        c64="$indir/$kind.complex64.h5"
        if "$MKINPUT" --complex64 "$kind" "$c64" "$seed" 2>"$work/mk.err"; then
            run "$kind (complex64 equivalent)" 0 "$out.c64" run --input "$c64" --output "$out.c64" --quiet "${params[@]}"
            "$H5SAME" "$out" "$out.c64" /weights /output/iq /detections /steering >"$work/same" ||
                fail "$kind: not the result of its complex64 equivalent: $(grep -v same "$work/same")"
        else
            fail "mkinput --complex64 $kind: $(cat "$work/mk.err")"
        fi
    else
        run "$kind" 1 "$out" run --input "$in" --output "$out" --quiet "${params[@]}"
        expect_words "$kind" "$in" "$kw1" "$kw2"
        echo "  $kind: $(head -c 200 "$work/err")"
    fi
done < <("$MKINPUT" --list)
[[ $nkinds -ge 20 ]] || fail "mkinput --list named only $nkinds kinds"

valid="$indir/valid.h5"
[[ -s "$valid" ]] || "$MKINPUT" valid "$valid" "$seed" 2>/dev/null

# ---- --scale overrides the `scale` attribute: int16 counts without one, read with
# --scale 0.001, are the scaled int16 cube's complex64 equivalent; a bad --scale is a usage error
"$MKINPUT" int16_interleaved_be "$indir/counts.h5" "$seed" &&
    "$MKINPUT" --complex64 int16_interleaved "$indir/scaled.c64.h5" "$seed" || fail "mkinput for --scale"
run "--scale" 0 "$outdir/scale.h5" run --input "$indir/counts.h5" --output "$outdir/scale.h5" --quiet "${params[@]}" --scale 0.001
run "--scale reference" 0 "$outdir/scale.c64.h5" run --input "$indir/scaled.c64.h5" --output "$outdir/scale.c64.h5" --quiet "${params[@]}"
"$H5SAME" "$outdir/scale.h5" "$outdir/scale.c64.h5" /weights /output/iq /detections >/dev/null ||
    fail "--scale 0.001 on int16 counts: not the result of the scaled cube"
"$MKINPUT" int16_ri "$indir/ri_scaled.h5" "$seed"
run "--scale over an attribute" 0 "$outdir/scale2.h5" run --input "$indir/ri_scaled.h5" --output "$outdir/scale2.h5" --quiet "${params[@]}" --scale 1
"$H5SAME" "$outdir/scale2.h5" "$outdir/int16_ri.out.h5" /weights >/dev/null &&
    fail "--scale 1 over scale 1e-3: the attribute was used"
for bad in 0 -1 nan inf abc; do
    run "--scale $bad" 2 "$outdir/scale_bad.h5" run --input "$indir/counts.h5" --output "$outdir/scale_bad.h5" --quiet "${params[@]}" --scale "$bad"
    expect_words "--scale $bad" "--scale"
done
run "--scale without --input" 2 "$outdir/scale_no.h5" run --output "$outdir/scale_no.h5" --quiet --scale 2
expect_words "--scale without --input" "--scale needs --input"

# ---- an existing output is never overwritten
existing="$outdir/existing.h5"
printf 'keep me\n' >"$existing"
run "existing output" 1 "" run --input "$valid" --output "$existing" --quiet "${params[@]}"
expect_words "existing output" "$existing" "already exists"
[[ "$(cat "$existing")" == "keep me" ]] || fail "existing output: content changed"
rm -f "$existing"

# ---- inputs that cannot be read at all
run "missing input" 1 "$outdir/m.h5" run --input "$indir/nope.h5" --output "$outdir/m.h5" --quiet "${params[@]}"
expect_words "missing input" "$indir/nope.h5" "No such file"
run "directory as input" 1 "$outdir/d.h5" run --input "$indir" --output "$outdir/d.h5" --quiet "${params[@]}"
expect_words "directory as input" "$indir"
run "output directory missing" 1 "" run --input "$valid" --output "$outdir/none/o.h5" --quiet "${params[@]}"
expect_words "output directory missing" "$outdir/none/o.h5"
[[ -e "$outdir/none" ]] && fail "output directory missing: a directory was created"

# ---- a truncated file: HDF5's own words say where it broke (the message was "HDF5 error")
head -c $(( $(stat -c %s "$valid") / 2 )) "$valid" > "$indir/truncated.h5"
run "truncated file" 1 "$outdir/t.h5" run --input "$indir/truncated.h5" --output "$outdir/t.h5" --quiet "${params[@]}"
expect_words "truncated file" "$indir/truncated.h5" "truncated file: eof"

# ---- a damaged file (fuzz_h5_file's finding): 16 bytes of compact raw data standing for a
# 167 772 160 x 1 x 1 x 1 recording; HDF5 1.10.8 copied the last CPI from 2.7 GB past its
# buffer (SEGV). Refused when the dataset is opened, before any read.
short="${RTSTAP_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/fuzz/corpus/fuzz_h5_file/regress-compact-storage-short"
run "compact storage short" 1 "$outdir/cs.h5" run --input "$short" --output "$outdir/cs.h5" --quiet "${params[@]}"
expect_words "compact storage short" "stores 16 bytes of compact data for 167772160 elements" "damaged"

# ---- a few-KB file declaring a 4 GiB cube of fill values: the configuration (segments not
# dividing its 2^29 cells) is refused before any sample is read (it read 4 GiB first)
if "$RTSTAP_TOOLS_DIR/mkfill" "$indir/fill.h5"; then
    timeout 10 "$RTSTAP_BIN" run --input "$indir/fill.h5" --output "$outdir/fill.h5" --quiet \
        --doppler-order 1 --segments 3 --training 24 --beams 2 2>"$work/err"
    rc=$?
    [[ $rc -eq 1 ]] || fail "fill-value cube: exit status $rc (124 = still reading after 10 s), expected 1"
    expect_words "fill-value cube" "was never written in full: 0 of its 512 chunks hold data"
else
    fail "mkfill failed"
fi

# ---- not a regular file: refused at once, never waited on
if mkfifo "$work/fifo"; then
    timeout 20 "$RTSTAP_BIN" run --input "$work/fifo" --output "$outdir/f.h5" --quiet "${params[@]}" 2>"$work/err"
    rc=$?
    [[ $rc -eq 1 ]] || fail "FIFO as input: exit status $rc (124 = it waited), expected 1"
    expect_words "FIFO as input" "not a regular file"
fi

# ---- parameters inconsistent with the input: processing errors, exit 1
out="$outdir/p.h5"
run "segments not dividing R" 1 "$out" run --input "$valid" --output "$out" --quiet "${params[@]}" --segments 5
expect_words "segments not dividing R" "--segments"
run "training > R/S" 1 "$out" run --input "$valid" --output "$out" --quiet "${params[@]}" --segments 2 --training 25
expect_words "training > R/S" "--training"
run "absurd zero padding" 1 "$out" run --input "$valid" --output "$out" --quiet "${params[@]}" --doppler-bins 1048576
expect_words "absurd zero padding" "--doppler-bins"
run "absurd thread count" 1 "$out" run --input "$valid" --output "$out" --quiet "${params[@]}" --threads 4096
expect_words "absurd thread count" "--threads"
sparams=(--preset easy --doppler-order 1 --beams 4) # no --segments with a sliding window
run "sliding: K beyond the cells outside a block" 1 "$out" run --input "$valid" --output "$out" --quiet "${sparams[@]}" --training-window sliding --block 2 --guard 3 --training 41
expect_words "sliding: K beyond the cells outside a block" "--training 41" "40 range cells" "guard cells"
run "sliding: block not dividing R" 1 "$out" run --input "$valid" --output "$out" --quiet "${sparams[@]}" --training 24 --training-window sliding --block 5
expect_words "sliding: block not dividing R" "--block 5"
run "steering length != C*Q" 1 "$out" run --input "$indir/steering.h5" --output "$out" --quiet "${params[@]}" --doppler-order 3
expect_words "steering length != C*Q" "/steering"

# ---- bad usage: exit 2, nothing written
run "unknown flag" 2 "$out" run --input "$valid" --output "$out" --quiet --bogus-flag
run "missing --output" 2 "" run --input "$valid" --quiet
expect_words "missing --output" "--output"
run "non-numeric value" 2 "$out" run --input "$valid" --output "$out" --quiet --segments abc
expect_words "non-numeric value" "--segments"
run "even --doppler-order" 2 "$out" run --input "$valid" --output "$out" --quiet --doppler-order 2
expect_words "even --doppler-order" "--doppler-order"
run "unknown preset" 2 "$out" run --input "$valid" --output "$out" --quiet --preset impossible
run "unknown window" 2 "$out" run --input "$valid" --output "$out" --quiet --window triangle
run "unknown backend" 2 "$out" run --input "$valid" --output "$out" --quiet --backend abacus
run "unknown training window" 2 "$out" run --input "$valid" --output "$out" --quiet --training-window moving
expect_words "unknown training window" "--training-window" "segment or sliding"
run "--block without sliding" 2 "$out" run --input "$valid" --output "$out" --quiet --block 4
expect_words "--block without sliding" "--block applies to --training-window sliding"
run "--segments with sliding" 2 "$out" run --input "$valid" --output "$out" --quiet --training-window sliding --segments 2
expect_words "--segments with sliding" "--segments applies to --training-window segment"
run "stream --guard without sliding" 2 "" stream --guard 1 --cpis 1
run "--angle-bins without jdl" 2 "$out" run --input "$valid" --output "$out" --quiet --angle-bins 3
expect_words "--angle-bins without jdl" "--angle-bins applies to --algorithm jdl"
run "unknown algorithm" 2 "$out" run --input "$valid" --output "$out" --quiet --algorithm stap
expect_words "unknown algorithm" "--algorithm" "post-doppler, jdl, pre-doppler, adpca or dpca"
run "--sub-cpi without a sub-CPI algorithm" 2 "$out" run --input "$valid" --output "$out" --quiet --sub-cpi 2
expect_words "--sub-cpi without a sub-CPI algorithm" "--sub-cpi applies to --algorithm pre-doppler, adpca and dpca"
run "--doppler-order with pre-doppler" 2 "$out" run --input "$valid" --output "$out" --quiet --algorithm pre-doppler --doppler-order 3
expect_words "--doppler-order with pre-doppler" "--doppler-order applies to post-doppler and jdl" "--sub-cpi"
run "adpca over 4 pulses" 2 "$out" run --input "$valid" --output "$out" --quiet --algorithm adpca --sub-cpi 4
expect_words "adpca over 4 pulses" "--sub-cpi 4: adpca cancels over 2 or 3 pulses"
run "--dpca-shift without dpca" 2 "$out" run --input "$valid" --output "$out" --quiet --algorithm adpca --dpca-shift 1
expect_words "--dpca-shift without dpca" "--dpca-shift applies to --algorithm dpca"
run "dpca shift beyond the array" 1 "$out" run --input "$valid" --output "$out" --quiet --algorithm dpca --dpca-shift 99
expect_words "dpca shift beyond the array" "--dpca-shift 99" "channels"
run "even --angle-bins" 1 "$out" run --input "$valid" --output "$out" --quiet --algorithm jdl --angle-bins 2
expect_words "even --angle-bins" "--angle-bins 2 must be odd"
run "stream --cfar-train 0" 2 "" stream --cfar os --cfar-train 0 --cpis 1
expect_words "stream --cfar-train 0" "--cfar-train"
run "stream --cfar-rank above 2N" 1 "" stream --preset easy --cfar os --cfar-train 4 --cfar-rank 9 --cpis 1 --backend cpu
expect_words "stream --cfar-rank above 2N" "--cfar-rank 9" "2 x --cfar-train = 8"

# ---- and the valid file with the same parameters still runs (nothing above leaked)
out="$outdir/final.h5"
run "valid final" 0 "$out" run --input "$valid" --output "$out" --quiet "${params[@]}"
is_hdf5 "$out" || fail "valid final: no HDF5 output"

leftover=$(find "$outdir" -name '.*.tmp.*')
[[ -n "$leftover" ]] && fail "temporary files left in the output directory: $leftover"

if [[ $failures -ne 0 ]]; then
    echo "cli_reject: $failures failure(s) (seed $seed)"
    exit 1
fi
echo "cli_reject: all checks passed ($nkinds input kinds)"
exit 0
