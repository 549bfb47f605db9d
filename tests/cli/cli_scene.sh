#!/usr/bin/env bash
# cli_scene: `rtstap gen -> run -> sinr -> plot` end to end on a small scene (exit
# statuses, files and their signatures, the SINR summary), plus usage errors (exit 2)
# and input errors (exit 1). Env: RTSTAP_BIN (the rtstap binary).
set -u
B=${RTSTAP_BIN:?RTSTAP_BIN must name the rtstap binary}
T=$(mktemp -d "${TMPDIR:-/tmp}/rtstap_cli_scene.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../support/cli_expect.sh" # fail, expect
signature() { head -c 8 "$1" | od -An -tx1 | tr -d ' \n'; }

SEED=${RTSTAP_SEED:-20261203} # fixed in CI; RTSTAP_SEED=N explores
echo "seed = $SEED" >&2

# --- the chain -----------------------------------------------------------------------
expect 0 "$B" gen --preset ward --channels 6 --pulses 8 --range-gates 120 --seed "$SEED" \
    --target 61:0:75:10 --target 31:0.5:-112.5:5 --out "$T/scene.h5"
[ -s "$T/scene.h5" ] || fail "gen wrote no file"
[ "$(signature "$T/scene.h5")" = "894844460d0a1a0a" ] || fail "scene.h5 is not an HDF5 file"
grep -q "beta = 1.0000" "$T/err" || fail "gen summary lacks beta = 1: $(cat "$T/err")"

expect 0 "$B" run --input "$T/scene.h5" --output "$T/run.h5" --doppler-order 1 --segments 2 \
    --training 60 --beams 3 --backend cpu --quiet
[ -s "$T/run.h5" ] || fail "run wrote no file"

expect 0 "$B" sinr --input "$T/scene.h5" --result "$T/run.h5" --out "$T/sinr.h5"
[ -s "$T/sinr.h5" ] || fail "sinr wrote no file"
grep -q "mean rho over 48 values" "$T/out" || fail "sinr summary: $(cat "$T/out")"
grep -q "RMB (K+2-N)/(K+1) = 0.9180" "$T/out" || fail "RMB expectation for K=60, N=6 missing"
# 8 Doppler bins in the table
[ "$(grep -cE '^ +[0-9]+ +-?[0-9.]+ +-?[0-9.]+ +-?[0-9.]+ +-?[0-9.]+$' "$T/out")" = 8 ] ||
    fail "sinr table does not have 8 bins: $(cat "$T/out")"

# the sliding window's blocks are the weights' segments: 8 bins x 30 blocks x 3 beams
expect 0 "$B" run --input "$T/scene.h5" --output "$T/run-sl.h5" --doppler-order 1 \
    --training-window sliding --block 4 --guard 2 --training 40 --beams 3 --backend cpu --quiet
expect 0 "$B" sinr --input "$T/scene.h5" --result "$T/run-sl.h5" --out "$T/sinr-sl.h5"
grep -q "mean rho over 720 values" "$T/out" || fail "sinr of a sliding run: $(cat "$T/out")"
grep -q "RMB (K+2-N)/(K+1) = 0.8780" "$T/out" || fail "RMB expectation for K=40, N=6 missing"

# a result without /detections: plot detects with the detector options run takes
expect 0 "$B" run --input "$T/scene.h5" --output "$T/run-nodet.h5" --doppler-order 1 --segments 2 \
    --training 60 --beams 3 --backend cpu --cfar none --quiet
expect 0 "$B" plot --input "$T/scene.h5" --result "$T/run-nodet.h5" --out-dir "$T/img-ca2d" \
    --cfar ca2d --cfar-guard 1 --cfar-train 8 --cfar-guard-doppler 0 --cfar-train-doppler 1
[ -s "$T/img-ca2d/range_doppler.png" ] || fail "plot with ca2d options made no range_doppler.png"
expect 2 "$B" plot --input "$T/scene.h5" --result "$T/run-nodet.h5" --out-dir "$T/img-bad" --cfar-train 0
expect 1 "$B" plot --input "$T/scene.h5" --result "$T/run-nodet.h5" --out-dir "$T/img-bad2" \
    --cfar ca2d --cfar-train-doppler 5
grep -q -- "--cfar-train-doppler" "$T/err" || fail "plot's CA2D window longer than the bins: $(cat "$T/err")"

# JDL (3 beams x 1 bin, Nt = 3): the table against its own clairvoyant weights, RMB with Nt
expect 0 "$B" run --input "$T/scene.h5" --output "$T/run-jdl.h5" --doppler-order 1 --segments 2 \
    --training 60 --beams 3 --algorithm jdl --angle-bins 3 --backend cpu --quiet
expect 0 "$B" sinr --input "$T/scene.h5" --result "$T/run-jdl.h5" --out "$T/sinr-jdl.h5"
grep -q "jdl NA=3" "$T/out" && grep -q "3 DOF adapted" "$T/out" || fail "sinr of a JDL run: $(cat "$T/out")"
grep -q "RMB (K+2-N)/(K+1) = 0.9672" "$T/out" || fail "RMB expectation for K=60, Nt=3 missing"
expect 0 "$B" plot --input "$T/scene.h5" --result "$T/run-jdl.h5" --sinr "$T/sinr-jdl.h5" \
    --out-dir "$T/img-jdl"
[ -s "$T/img-jdl/sinr_loss.png" ] || fail "plot of a JDL run made no sinr_loss.png"

# pre-Doppler (M' = 2: N = 12 over 7 sub-CPIs) and ADPCA (M' = 3): losses on the staggered
# snapshots, rho and RMB in the sub-CPI domain (K = 60, N = 12); plot's clairvoyant curve
expect 0 "$B" run --input "$T/scene.h5" --output "$T/run-pre.h5" --algorithm pre-doppler \
    --sub-cpi 2 --segments 2 --training 60 --beams 3 --backend cpu --quiet
expect 0 "$B" sinr --input "$T/scene.h5" --result "$T/run-pre.h5" --out "$T/sinr-pre.h5"
grep -q "pre-doppler M=2" "$T/out" && grep -q "12 DOF adapted (6 channels x 2 pulses of a sub-CPI, 7 sub-CPIs)" "$T/out" ||
    fail "sinr of a pre-Doppler run: $(cat "$T/out")"
grep -q "mean rho over 48 values" "$T/out" || fail "pre-Doppler sinr summary: $(cat "$T/out")"
grep -q "RMB (K+2-N)/(K+1) = 0.8197" "$T/out" || fail "RMB expectation for K=60, N=12 missing"
[ "$(grep -cE '^ +[0-9]+ +-?[0-9.]+ +-?[0-9.]+ +-?[0-9.]+ +-?[0-9.]+ +-?[0-9.]+$' "$T/out")" = 8 ] ||
    fail "pre-Doppler sinr table does not have 8 bins with an algorithm column: $(cat "$T/out")"
expect 0 "$B" plot --input "$T/scene.h5" --result "$T/run-pre.h5" --sinr "$T/sinr-pre.h5" \
    --out-dir "$T/img-pre"
[ -s "$T/img-pre/sinr_loss.png" ] || fail "plot of a pre-Doppler run made no sinr_loss.png"
[ -s "$T/img-pre/adapted_response.png" ] || fail "plot drew no adapted response of a pre-Doppler run"
expect 0 "$B" plot --input "$T/scene.h5" --result "$T/run-pre.h5" --out-dir "$T/img-pre2" \
    --response-bin 1
[ -s "$T/img-pre2/adapted_response.png" ] || fail "plot --response-bin 1 of a pre-Doppler run drew nothing"
expect 0 "$B" run --input "$T/scene.h5" --output "$T/run-adpca.h5" --algorithm adpca \
    --sub-cpi 3 --segments 2 --training 60 --beams 3 --backend cpu --quiet
expect 0 "$B" sinr --input "$T/scene.h5" --result "$T/run-adpca.h5" --out "$T/sinr-adpca.h5"
grep -q "adpca M=3" "$T/out" && grep -q "RMB (K+2-N)/(K+1) = 0.7213" "$T/out" ||
    fail "sinr of an ADPCA run: $(cat "$T/out")"
# DPCA (fixed weights: rho 1, no RMB law), its /config dpca_shift read back by sinr
expect 0 "$B" run --input "$T/scene.h5" --output "$T/run-dpca.h5" --algorithm dpca \
    --dpca-shift 1 --segments 2 --training 60 --beams 3 --backend cpu --quiet
if command -v h5dump >/dev/null; then # DPCA trains nothing: /config training 0 (issue 33)
    h5dump -a /config/training "$T/run-dpca.h5" | grep -q "(0): 0" ||
        fail "a DPCA result records training $(h5dump -a /config/training "$T/run-dpca.h5" | grep "(0)")"
elif [ "${RTSTAP_REQUIRE_READERS:-0}" = 1 ]; then
    fail "h5dump (hdf5-tools) is missing"
fi
expect 0 "$B" sinr --input "$T/scene.h5" --result "$T/run-dpca.h5" --out "$T/sinr-dpca.h5"
grep -q "dpca M=2 shift=1" "$T/out" && grep -q "RMB law: not applicable" "$T/out" &&
    grep -qE "mean rho over 48 values \(all beams, bins and segments\): 1.0000 " "$T/out" ||
    fail "sinr of a DPCA run: $(cat "$T/out")"
# the clairvoyant curve computed from /truth (no --sinr), and both tables compared
expect 0 "$B" plot --input "$T/scene.h5" --result "$T/run-adpca.h5" --out-dir "$T/img-adpca"
[ -s "$T/img-adpca/sinr_loss.png" ] || fail "plot of an ADPCA run made no sinr_loss.png"
expect 0 "$B" plot --input "$T/scene.h5" --sinr "$T/sinr-pre.h5" --sinr "$T/sinr-adpca.h5" \
    --sinr "$T/sinr.h5" --out-dir "$T/img-sub"
[ -s "$T/img-sub/sinr_compare.png" ] || fail "plot made no sinr_compare.png of the sub-CPI tables"

expect 0 "$B" plot --input "$T/scene.h5" --result "$T/run.h5" --sinr "$T/sinr.h5" \
    --out-dir "$T/img" --range-cell 61
for p in angle_doppler sinr_loss range_doppler; do
    f="$T/img/$p.png"
    [ -s "$f" ] || { fail "plot wrote no $p.png"; continue; }
    [ "$(signature "$f")" = "89504e470d0a1a0a" ] || fail "$p.png is not a PNG"
    grep -q "$f" "$T/out" || fail "plot did not list $f"
done
# without --sinr the loss is computed from /truth; the input alone gives one picture
expect 0 "$B" plot --input "$T/scene.h5" --result "$T/run.h5" --out-dir "$T/img2"
[ -s "$T/img2/sinr_loss.png" ] || fail "plot without --sinr made no sinr_loss.png"
expect 0 "$B" plot --input "$T/scene.h5" --out-dir "$T/img3"
[ -s "$T/img3/angle_doppler.png" ] && [ ! -e "$T/img3/range_doppler.png" ] ||
    fail "plot with --input only: wrong set of pictures"

# never overwrite
expect 1 "$B" gen --preset ward --range-gates 60 --out "$T/scene.h5"
expect 1 "$B" sinr --input "$T/scene.h5" --result "$T/run.h5" --out "$T/sinr.h5"
expect 1 "$B" plot --input "$T/scene.h5" --out-dir "$T/img3"

# --- help ------------------------------------------------------------------------------
for c in gen sinr plot; do
    expect 0 "$B" "$c" --help && grep -q "usage: rtstap $c" "$T/out" || fail "$c --help"
done

# --- usage errors: exit 2 ----------------------------------------------------------------
expect 2 "$B" gen --preset ward
expect 2 "$B" gen --out "$T/x.h5" --preset nope
expect 2 "$B" gen --out "$T/x.h5" --jammer 1.5:30
expect 2 "$B" gen --out "$T/x.h5" --jammer 0.2
expect 2 "$B" gen --out "$T/x.h5" --target 10:0:0
expect 2 "$B" gen --out "$T/x.h5" --target 500:0:0:0 --range-gates 100
expect 2 "$B" gen --out "$T/x.h5" --channels 0
expect 2 "$B" gen --out "$T/x.h5" --bogus
expect 2 "$B" gen --out "$T/x.h5" stray
[ ! -e "$T/x.h5" ] || fail "a failed gen left $T/x.h5"
expect 2 "$B" sinr --input "$T/scene.h5" --result "$T/run.h5"
expect 2 "$B" sinr --input "$T/scene.h5" --result "$T/run.h5" --out "$T/s2.h5" --beam 3
expect 2 "$B" sinr --input "$T/scene.h5" --result "$T/run.h5" --out "$T/s2.h5" --beam x
expect 2 "$B" plot --input "$T/scene.h5"
expect 2 "$B" plot --input "$T/scene.h5" --out-dir "$T/i4" --cfar xx
expect 2 "$B" plot --input "$T/scene.h5" --out-dir "$T/i4" --range-cell 120

# --- input errors: exit 1 ----------------------------------------------------------------
expect 1 "$B" sinr --input "$T/run.h5" --result "$T/run.h5" --out "$T/s3.h5"
grep -q "/truth" "$T/err" || fail "sinr on a file without /truth: $(cat "$T/err")"
expect 1 "$B" sinr --input "$T/scene.h5" --result "$T/scene.h5" --out "$T/s3.h5"
grep -q "/config" "$T/err" || fail "sinr with a non-result: $(cat "$T/err")"
expect 1 "$B" plot --input "$T/missing.h5" --out-dir "$T/i5"
expect 1 "$B" plot --input "$T/scene.h5" --sinr "$T/run.h5" --out-dir "$T/i6"
[ ! -e "$T/s3.h5" ] || fail "a failed sinr left $T/s3.h5"
# a run on another cube
expect 0 "$B" gen --preset ward --channels 6 --pulses 8 --range-gates 60 --out "$T/other.h5"
expect 1 "$B" plot --input "$T/other.h5" --result "$T/run.h5" --out-dir "$T/i7"
expect 1 "$B" sinr --input "$T/other.h5" --result "$T/run.h5" --out "$T/s4.h5"

# the RMB statistic of the sub-CPI algorithms (issue 33 item 8): their bins and beams share
# one covariance estimate per segment, so z counts the segments, not the 90 values (Ward's
# seed 11: z was -6.3 for ADPCA and -4.65 for pre-Doppler counting every value as
# independent; the mean of rho is the RMB law's, tested over trials in test_sinr)
expect 0 "$B" gen --preset ward --seed 11 --target 151:0:50:-5 -o "$T/ward.h5"
for alg in "adpca --sub-cpi 2" "pre-doppler --sub-cpi 3"; do
    expect 0 "$B" run --input "$T/ward.h5" -o "$T/sub.h5" -f --algorithm $alg --training 150 --beams 5 \
        --backend cpu --quiet
    expect 0 "$B" sinr --input "$T/ward.h5" --result "$T/sub.h5" -o "$T/sub_sinr.h5" -f --json "$T/sub.json"
    grep -q "over the 1 independent covariance estimate (a segment's bins and beams share one)" "$T/err" "$T/out" ||
        fail "sinr $alg: the estimates not said: $(cat "$T/out")"
    python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))['summary']
sys.exit(0 if s['estimates'] == 1 and abs(s['z']) < 3 else 1)" "$T/sub.json" ||
        fail "sinr $alg: $(tr -d '\n' < "$T/sub.json" | grep -o '"summary".\{0,300\}')"
done

if [ "$fails" -gt 0 ]; then
    echo "cli_scene: $fails failure(s) (seed $SEED)" >&2
    exit 1
fi
echo "cli_scene: all passed" >&2
exit 0
