#!/usr/bin/env bash
# ncu_tc.sh (GPU machine): qr_tc once, then ncu's full set with source counters over the
# first tensor-core kernel launch (240x66 x 128, 3xTF32; ARGS: qr_tc's --size and --panel to
# pick another), summarized: the details page's key
# lines, the stall samples and instructions between block barriers (the kernel's phases), and
# the hottest SASS lines. Writes the report, details and SASS csv under $OUT.
set -u
mkdir -p .gpulibs && tar -xzf .gpulibs.tgz -C .gpulibs && export LD_LIBRARY_PATH=$PWD/.gpulibs:${LD_LIBRARY_PATH:-}
tar -xJf .gpubin/bin.txz -C .gpubin
OUT=${OUT:-$PWD/out-device}
mkdir -p "$OUT"
args=("$@")
[ -n "${NOQR:-}" ] || timeout 200 stdbuf -oL .gpubin/qr_tc --repeat 20 > "$OUT/tc.log" 2>&1; echo "qr_tc rc=$?"
grep -v "ok$" "$OUT/tc.log" | grep -v "^time"
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu | head -1)
timeout 300 "$ncu" --clock-control none --set full --import-source yes -k regex:tc_qr_kernel -c 1 -o "$OUT/tc" \
    .gpubin/qr_tc --repeat 1 "${args[@]}" > "$OUT/ncu_run.log" 2>&1
rc=$?
echo "ncu rc=$rc"
[ "$rc" = 0 ] && [ -f "$OUT/tc.ncu-rep" ] || { tail -20 "$OUT/ncu_run.log"; exit 1; }
"$ncu" -i "$OUT/tc.ncu-rep" --page details > "$OUT/details.txt" 2>&1
"$ncu" -i "$OUT/tc.ncu-rep" --page source --csv --print-source sass > "$OUT/sass.csv" 2>&1
grep -E "Duration|Issue Slots Busy|Eligible Warps|Warp Cycles Per Issued|Executed Instructions  " "$OUT/details.txt"
python3 - "$OUT/sass.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hi = [i for i, r in enumerate(rows) if 'Source' in r and 'Address' in r][0]
h = rows[hi]; data = [r for r in rows[hi + 1:] if len(r) == len(h)]
si = h.index('Warp Stall Sampling (All Samples)'); src = h.index('Source'); ex = h.index('Instructions Executed')
stalls = [k for k, x in enumerate(h) if x.startswith('stall_') and 'Not Issued' not in x]
tot = sum(float(r[si] or 0) for r in data)
a = 0
for i, r in enumerate(data):
    if 'BAR.SYNC' in r[src] or i == len(data) - 1:
        S = sum(float(data[k][si] or 0) for k in range(a, i + 1))
        if S / tot >= 0.01:
            n = sum(int(data[k][ex] or 0) for k in range(a, i + 1))
            hm = sum(int(data[k][ex] or 0) for k in range(a, i + 1) if 'HMMA' in data[k][src])
            st = sorted(((sum(float(data[k][j] or 0) for k in range(a, i + 1)), h[j][6:]) for j in stalls), reverse=True)[:4]
            print(f"SASS {a}-{i}: samples {S / tot * 100:5.1f}%  instr {n}  HMMA {hm}  stalls", [(x, round(v / S * 100)) for v, x in st])
        a = i + 1
PY
