#!/usr/bin/env bash
# cli_build_quiet: a CUDA build is quiet (issue 42: every build printed ptxas's resource
# report, 523 "ptxas info" lines): -Xptxas=-v is on the CUDA compile lines only with
# -DRTSTAP_PTXAS_VERBOSE=ON (what tests/bench/gpu/ptxas_report.sh reads). Configures the
# tree with CUDA (no build) and reads the compile commands. Skipped (77) without nvcc.
src=${RTSTAP_SOURCE_DIR:-$(dirname "$0")/../..}
if ! command -v nvcc >/dev/null 2>&1; then
    echo "cli_build_quiet: no nvcc on PATH: nothing to check"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
count() { # VERBOSE: configure; prints "CUDA-COMMANDS WITH-Xptxas=-v"
    cmake -S "$src" -B "$tmp/b" -DRTSTAP_CUDA=ON -DRTSTAP_TESTS=OFF -DRTSTAP_PYTHON=OFF \
        -DRTSTAP_MPI=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DRTSTAP_PTXAS_VERBOSE="$1" \
        > "$tmp/cfg.log" 2>&1 || { cat "$tmp/cfg.log" >&2; echo "configure failed" >&2; return 1; }
    python3 -c 'import json, sys
cu = [e["command"] for e in json.load(open(sys.argv[1])) if e["file"].endswith(".cu")]
print(len(cu), sum("-Xptxas=-v" in c for c in cu))' "$tmp/b/compile_commands.json"
}
read -r n v <<< "$(count OFF)"
echo "default: ${n:-?} CUDA compile commands, ${v:-?} with -Xptxas=-v"
[ "${n:-0}" -gt 0 ] || { echo "FAIL: no CUDA compile command"; fail=1; }
[ "${v:-1}" -eq 0 ] || { echo "FAIL: -Xptxas=-v by default"; fail=1; }
read -r n v <<< "$(count ON)"
echo "RTSTAP_PTXAS_VERBOSE=ON: ${v:-?} of ${n:-?} with -Xptxas=-v"
[ "${n:-0}" -gt 0 ] && [ "$v" -eq "$n" ] || { echo "FAIL: RTSTAP_PTXAS_VERBOSE=ON: not every CUDA command has -Xptxas=-v"; fail=1; }
exit $fail
