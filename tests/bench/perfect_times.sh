#!/usr/bin/env bash
# Time `rtstap perfect` for every PERFECT size and backend (median of N runs of the
# compute time the stage table reports, i.e. without file reading and writing), and
# print a Markdown table. Medium and large inputs are synthesized by mkperfect.
# usage: perfect_times.sh RTSTAP MKPERFECT SOURCE_DIR "BACKENDS" [RUNS]
set -euo pipefail
bin=$1 mk=$2 src=$3 backends=$4 runs=${5:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$src"/datasets/perfect/small_app_*.bin "$tmp"/
"$mk" medium "$tmp" 7
"$mk" large "$tmp" 8
echo "| size | C | R | N_R | QR batch | backend | compute ms (median of $runs) | qr ms | weights ms | total ms |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for size in small medium large; do
  case $size in small) C=4 R=512 NR=32;; medium) C=6 R=1024 NR=64;; large) C=8 R=4096 NR=64;; esac
  for be in $backends; do
    rm -f "$tmp"/times
    for i in $(seq "$runs"); do
      rm -f "$tmp/out.bin"
      "$bin" perfect --size $size --input-dir "$tmp" --output "$tmp/out.bin" --backend "$be" \
          2> "$tmp/err" > /dev/null || { echo "| $size | | | | | $be | failed: $(tail -1 "$tmp/err") |"; continue 2; }
      awk '/compute/ {gsub(/\)/,""); c=$NF=="ms"?$(NF-1):$NF} / qr /{q=$2} / weights /{w=$2} / total /{t=$2} END{print c, q, w, t}' "$tmp/err" >> "$tmp/times"
    done
    sort -n "$tmp/times" | awk -v n="$runs" -v s=$size -v C=$C -v R=$R -v nr=$NR -v be=$be \
      'NR==int((n+1)/2) {printf "| %s | %d | %d | %d | %d x %dx%d | %s | %.2f | %.2f | %.2f | %.2f |\n", s, C, R, nr, 256*R/nr, nr, 3*C, be, $1, $2, $3, $4}'
  done
done
