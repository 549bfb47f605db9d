#!/usr/bin/env bash
# device_slots34.sh: how many CPIs in flight the compute-bound streams want — `stream` hard
# and medium with int16 over the link and resident, 2 to 6 slots, alternated twice — and the
# stage times of a resident hard stream under load (--timeline, CUDA events a stage) against
# one slot, to see whether a stage stretches when CPIs overlap. Logs under $OUT; table last.
. "$(dirname "$0")/device_common.sh"
mkdir -p "$OUT/logs"
L=$OUT/logs
device_facts "$L/device.txt"
S="$BIN/rtstap stream --backend gpu --cpis 6000 --keep detections"
rows=()
for p in hard medium; do
    for mode in link16 resident; do
        args=(--format ci16); [ $mode = resident ] && args=(--resident)
        row="$(printf '%-6s %-8s' $p $mode)"
        for round in 1 2; do
            for s in 2 3 4 6; do
                step "$p $mode slots $s #$round" "$L/$p-$mode-$s-$round.log" 60 $S --preset $p --slots $s "${args[@]}"
            done
        done
        for s in 2 3 4 6; do row="$row | $s: $(rate "$L/$p-$mode-$s-1.log") / $(rate "$L/$p-$mode-$s-2.log")"; done
        rows+=("$row")
    done
done
step "timeline 3 slots" "$L/tl3.log" 60 $S --preset hard --resident --slots 3 --cpis 3000 --timeline "$OUT/tl3.csv"
step "timeline 1 slot" "$L/tl1.log" 60 $S --preset hard --resident --slots 1 --cpis 3000 --timeline "$OUT/tl1.csv"
echo "---- $(head -1 "$L/device.txt"); $(grep -m1 NVIDIA "$L/device.txt"); $(grep -m1 commit "$L/device.txt")"
echo "CPIs/s by slots (two rounds):"
printf '%s\n' "${rows[@]}"
for f in tl1 tl3; do
    python3 - "$OUT/$f.csv" <<'PY'
import csv, sys, statistics
rows = list(csv.DictReader(open(sys.argv[1])))
keys = [k for k in rows[0] if k not in ("cpi", "slot", "submit_ms", "done_ms")]
print(sys.argv[1].split("/")[-1], "medians ms:", ", ".join(f"{k} {statistics.median(float(r[k]) for r in rows):.4f}" for k in keys))
PY
done
printf '%s\n' "${summary[@]}" | grep -v "rc=0 " | head
