#!/usr/bin/env python3
"""sass_hot.py: the hottest SASS instructions of one kernel from ncu's source page
(`ncu -i REP --page source --csv --print-source sass`): warp-stall samples per instruction,
the top N with their share, and the samples summed between barriers (BAR/WARPSYNC), so that
a kernel's phases can be weighed. usage: sass_hot.py SASS.csv [N]"""
import csv
import sys


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    cols = rows[head]
    src, samp = cols.index("Source"), cols.index("Warp Stall Sampling (All Samples)")
    ex = cols.index("Instructions Executed")
    ins = []
    for r in rows[head + 1:]:
        if len(r) <= samp or not r[0].startswith("0x"):
            continue
        n = int(r[samp] or 0)
        e = int(r[ex] or 0) if r[ex] not in ("", "-") else 0
        ins.append((r[0], r[src].strip(), n, e))
    total = sum(n for _, _, n, _ in ins) or 1
    print(f"{rows[0][1][:100]}\n{len(ins)} instructions, {total} stall samples")
    for a, s, n, e in sorted(ins, key=lambda t: -t[2])[:top]:
        print(f"  {100.0 * n / total:5.1f}%  {n:6d}  exec {e:8d}  {a[-5:]}  {s[:70]}")
    print("phases (samples between barriers):")
    acc, start = 0, ins[0][0] if ins else ""
    for a, s, n, e in ins:
        acc += n
        if s.startswith("BAR") or "WARPSYNC" in s or s.startswith("EXIT"):
            print(f"  {100.0 * acc / total:5.1f}%  ..{start[-5:]} - {a[-5:]}  ends at {s[:40]}")
            acc, start = 0, a
    if acc:
        print(f"  {100.0 * acc / total:5.1f}%  ..{start[-5:]} - end")


if __name__ == "__main__":
    main()
