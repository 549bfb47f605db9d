#!/usr/bin/env python3
"""ncu_summary.py CSV: one line per kernel (medians over its launches) from
`ncu --import REPORT --page raw --csv` — time, SM and memory throughput (% of peak), DRAM and
the L2 hit rate, issue activity, achieved occupancy, registers, block size and the top stall
reasons (warps stalled per issued instruction)."""
import csv, re, statistics, sys

def num(s):
    try:
        return float(str(s).replace(',', ''))
    except ValueError:
        return None

rows = list(csv.reader(open(sys.argv[1])))
hdr, units, data = rows[0], rows[1], rows[2:]
col = {h: i for i, h in enumerate(hdr)}

def get(r, name):
    i = col.get(name)
    return num(r[i]) if i is not None and i < len(r) else None

def tscale(name):
    i = col.get(name)
    u = units[i] if i is not None else ''
    return {'nsecond': 1e-3, 'usecond': 1.0, 'msecond': 1e3}.get(u, 1.0)

stall_cols = [h for h in hdr if re.match(r'smsp__average_warps_issue_stalled_(.*)_per_issue_active\.ratio$', h)]
by = {}
for r in data:
    name = r[col['Kernel Name']] if 'Kernel Name' in col else r[4]
    by.setdefault(name, []).append(r)

def med(rs, m, f=1.0):
    v = [get(r, m) for r in rs]
    v = [x for x in v if x is not None]
    return statistics.median(v) * f if v else float('nan')

def dram_mb(rs, t):  # the DRAM rate (ncu's unit) times the kernel's time
    m = 'dram__bytes.sum.per_second'
    i = col.get(m)
    f = {'byte/s': 1e-12, 'Kbyte/s': 1e-9, 'Mbyte/s': 1e-6, 'Gbyte/s': 1e-3, 'Tbyte/s': 1.0}.get(units[i], float('nan')) if i is not None else float('nan')
    return med(rs, m) * f * t  # TB/s x us = MB

lines = []
for name, rs in by.items():
    t = med(rs, 'gpu__time_duration.sum', tscale('gpu__time_duration.sum'))
    stalls = sorted(((med(rs, c), re.sub(r'smsp__average_warps_issue_stalled_|_per_issue_active\.ratio', '', c))
                     for c in stall_cols), reverse=True)
    tot = sum(s for s, _ in stalls if s == s)
    top = ', '.join('%s %.0f%%' % (n, 100 * s / tot) for s, n in stalls[:4] if tot > 0)
    lines.append((t, '%-44.44s n=%-3d %7.1f us  SM %4.1f%%  mem %4.1f%%  DRAM %6.2f MB  L2 hit %4.1f%%  issue %4.1f%%  '
                  'occ %4.1f%%  regs %3.0f  block %4.0f grid %6.0f  | %s' % (
                      name, len(rs), t, med(rs, 'sm__throughput.avg.pct_of_peak_sustained_elapsed'),
                      med(rs, 'gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed'),
                      dram_mb(rs, t), med(rs, 'lts__t_sector_hit_rate.pct'),
                      med(rs, 'smsp__issue_active.avg.pct_of_peak_sustained_active'),
                      med(rs, 'sm__warps_active.avg.pct_of_peak_sustained_active'),
                      med(rs, 'launch__registers_per_thread'), med(rs, 'launch__block_size'),
                      med(rs, 'launch__grid_size'), top)))
for _, l in sorted(lines, reverse=True):
    print(l)
print('sum of the kernels\' medians (one launch of each, as in one CPI): %.1f us' % sum(t for t, _ in lines))
