#!/usr/bin/env bash
# Resource report of the CUDA kernels from a build log made with -Xptxas=-v (a CMake
# build configured with -DRTSTAP_PTXAS_VERBOSE=ON, e.g. cmake --preset gpu-h100
# -DRTSTAP_PTXAS_VERBOSE=ON, then cmake --build build-gpu 2>&1 | tee BUILD_LOG): one line per
# kernel with registers, spills, stack frame and static shared memory.
# usage: ptxas_report.sh BUILD_LOG
set -euo pipefail
log=${1:?usage: ptxas_report.sh BUILD_LOG}
python3 - "$log" <<'PY'
import re, subprocess, sys
rows, name, cur = {}, None, {}
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"Compiling entry function '([^']+)'", line)
    if m: name, cur = m.group(1), {}; continue
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m and name: cur.update(stack=m.group(1), st=m.group(2), ld=m.group(3)); continue
    m = re.search(r"Used (\d+) registers", line)
    if m and name and name not in rows:
        sm = re.search(r"(\d+) bytes smem", line)
        rows[name] = dict(cur, regs=m.group(1), smem=sm.group(1) if sm else "0")
names = list(rows)
try:
    dem = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
except OSError:
    dem = names
print("%-46s %5s %7s %7s %6s %5s" % ("kernel", "regs", "spillST", "spillLD", "stack", "smem"))
for raw, d in zip(names, dem):
    d = re.sub(r"\(.*\)$", "", d.replace("rtk::", ""))
    r = rows[raw]
    print("%-46s %5s %7s %7s %6s %5s" % (d[:46], r["regs"], r.get("st", "?"), r.get("ld", "?"), r.get("stack", "?"), r["smem"]))
PY
