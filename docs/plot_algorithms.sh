#!/usr/bin/env bash
# Draw docs/img/adapted_response.png and docs/img/sinr_compare.png (README "Airborne
# scenes") from Ward's example scene: the scene of the README recipe, run with the extended
# factored algorithm (Q = 3, the README's run) and with factored post-Doppler (Q = 1) behind
# a 60 dB Chebyshev taper and without one, and with JDL (5 beams x 3 bins), all with K = 150
# training cells; the SINR loss of the four on one plot, and the Q = 3 weights' angle-Doppler response beside the
# clairvoyant optimum in the first target's Doppler bin (bin 3, 50 Hz), broadside beam.
# docs/img/sinr_compare_subcpi.png: the sub-CPI families on the same scene and K — element-
# space pre-Doppler (M = 3), ADPCA (M = 2) and the non-adaptive DPCA (M = 2, shift 1 = the
# scene's beta) — beside the extended factored run; docs/img/adapted_response_predoppler.png:
# the pre-Doppler weights' response on the staggered snapshot beside its clairvoyant weights.
# The other pictures of docs/img come from the README recipe and are left as they are.
# usage: bash docs/plot_algorithms.sh [RTSTAP]   (default: build/rtstap)
set -euo pipefail
cd "$(dirname "$0")/.."
rtstap=$(realpath "${1:-build/rtstap}")
t=$(mktemp -d "${TMPDIR:-/tmp}/plot_algorithms.XXXXXX")
trap 'rm -rf "$t"' EXIT
cd "$t"
set -x
"$rtstap" gen --preset ward --seed 11 --target 151:0:50:-5 --target 75:0:-100:-8 \
    --target 221:0:116.667:-10 -o ward.h5 --quiet
"$rtstap" run --input ward.h5 -o run_q3.h5 --doppler-order 3 --training 150 --beams 5 \
    --cfar ca --cfar-pfa 1e-6 --quiet
"$rtstap" run --input ward.h5 -o run_q1_cheb.h5 --doppler-order 1 --training 150 --beams 5 \
    --window chebyshev:60 --quiet
"$rtstap" run --input ward.h5 -o run_q1.h5 --doppler-order 1 --training 150 --beams 5 --quiet
"$rtstap" run --input ward.h5 -o run_jdl.h5 --doppler-order 3 --training 150 --beams 5 \
    --algorithm jdl --angle-bins 5 --quiet
"$rtstap" run --input ward.h5 -o run_pre.h5 --algorithm pre-doppler --sub-cpi 3 --training 150 \
    --beams 5 --quiet
"$rtstap" run --input ward.h5 -o run_adpca.h5 --algorithm adpca --sub-cpi 2 --training 150 \
    --beams 5 --quiet
"$rtstap" run --input ward.h5 -o run_dpca.h5 --algorithm dpca --sub-cpi 2 --dpca-shift 1 \
    --beams 5 --quiet
for r in q3 q1_cheb q1 jdl pre adpca dpca; do
    "$rtstap" sinr --input ward.h5 --result "run_$r.h5" -o "sinr_$r.h5" --quiet
done
"$rtstap" plot --input ward.h5 --result run_q3.h5 --sinr sinr_q3.h5 --sinr sinr_q1_cheb.h5 \
    --sinr sinr_q1.h5 --sinr sinr_jdl.h5 --output-dir img
"$rtstap" plot --input ward.h5 --sinr sinr_q3.h5 --sinr sinr_pre.h5 --sinr sinr_adpca.h5 \
    --sinr sinr_dpca.h5 --output-dir img_sub
"$rtstap" plot --input ward.h5 --result run_pre.h5 --sinr sinr_pre.h5 --output-dir img_pre
{ set +x; } 2>/dev/null
cd - > /dev/null
cp "$t/img/adapted_response.png" "$t/img/sinr_compare.png" docs/img/
cp "$t/img_sub/sinr_compare.png" docs/img/sinr_compare_subcpi.png
cp "$t/img_pre/adapted_response.png" docs/img/adapted_response_predoppler.png
echo "wrote docs/img/adapted_response.png docs/img/sinr_compare.png docs/img/sinr_compare_subcpi.png" \
    "docs/img/adapted_response_predoppler.png"
