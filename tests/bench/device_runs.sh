#!/usr/bin/env bash
# device_runs.sh: steady-state pipeline timing on the GPU machine — `rtstap run --repeat
# 20` for every preset and backend (plan made once, median of 19 CPIs after a warm-up).
# Packed and launched like device_all.sh.
set -uo pipefail
OUT=${OUT:-$PWD/out-device}
BIN=$PWD/.gpubin
mkdir -p "$OUT"
tar -xzf "$BIN/bin.tgz" -C "$BIN" || exit 1
"$BIN/rtstap" --version > "$OUT/device.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv >> "$OUT/device.txt" 2>&1
for p in easy medium hard; do
    for be in gpu cublas cpu lapack; do
        rm -f /tmp/run.h5
        "$BIN/rtstap" run --preset $p --backend $be --repeat 20 --output /tmp/run.h5 2> /tmp/run.err
        rc=$?
        { echo "==== $p $be rc=$rc"; cat /tmp/run.err; } >> "$OUT/runs.log"
    done
done
echo "| preset | backend | doppler | training | qr | weights | apply | transfer | detect | compute ms | CPIs/s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
awk '/^==== / {p=$2; b=$3} $1~/^(doppler|training|qr|weights|apply|transfer|detect)$/ {v[$1]=$2}
     /CPIs\/s/ {cps=$(NF-1)} /compute/ {c=$NF; sub(/\)/,"",c); c=$(NF-1)}
     /detections:/ {printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p, b, v["doppler"], v["training"], v["qr"], v["weights"], v["apply"], v["transfer"], v["detect"], c, cps}' "$OUT/runs.log"
