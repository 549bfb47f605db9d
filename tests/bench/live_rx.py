#!/usr/bin/env python3
"""live_rx: the receive path alone (`rtstap listen --discard`) against iperf3's lossless UDP
rate on loopback, in one call (issue 45's target: >= 0.8 x iperf3; docs/live.md has the
table).

Both move 1472-byte datagrams (one Ethernet frame's UDP payload; rtstap's 363 gates a
packet) over 127.0.0.1 with the same socket receive buffer (iperf3 -w, listen --rcvbuf-mib:
4 MiB by default, the usual net.core.rmem_max of this machine). For each, a bisection on
the rate asked: a run of SECONDS is lossless when iperf3's server lost no datagram, or when
listen got every CPI `rtstap send` sent, complete (C=4, P=32, R=1452: 512 datagrams a
CPI). A side's lossless rate is the highest datagram rate received in a lossless run. The
two alternate, step by step, so that a busy machine weighs on both alike.

usage: live_rx.py RTSTAP [--seconds S] [--steps N] [--rcvbuf-mib M] [--json FILE]
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

DGRAM = 1472
C, P, R, G = 4, 32, 1452, 363
PER_CPI = C * P * (R // G)  # 512 datagrams a CPI


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def iperf_run(pps, seconds, rcvbuf):
    """(lossless, datagrams/s received) of one iperf3 run asking pps datagrams a second"""
    port = free_port()
    srv = subprocess.Popen(["iperf3", "-s", "-1", "-p", str(port), "-J"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    bw = int(pps * DGRAM * 8)
    cli = subprocess.run(["iperf3", "-c", "127.0.0.1", "-p", str(port), "-u", "-b", str(bw), "-l", str(DGRAM),
                          "-t", str(seconds), "-w", "%dM" % rcvbuf, "-J"], capture_output=True, text=True,
                         timeout=seconds + 30)
    try:
        out, _ = srv.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        srv.kill()
        return False, 0.0
    try:
        s = json.loads(out)["end"]["sum"]
    except (ValueError, KeyError):
        print("iperf3: no report: %s" % cli.stderr[-300:], file=sys.stderr)
        return False, 0.0
    got = s["packets"] - s["lost_packets"]
    return s["lost_packets"] == 0 and s["packets"] > 0, got / s["seconds"] if s["seconds"] else 0.0


def listen_run(rtstap, rec, pps, seconds, rcvbuf, tmp):
    """(lossless, datagrams/s received) of one send -> listen --discard run"""
    rate = pps / PER_CPI
    loop = max(1, int(round(rate * seconds / 4)))
    cpis = 4 * loop
    lj, sj = os.path.join(tmp, "l.json"), os.path.join(tmp, "s.json")
    for f in (lj, sj):
        if os.path.exists(f):
            os.remove(f)
    lis = subprocess.Popen([rtstap, "listen", "--vrt", "udp://127.0.0.1:0", "--shape", "%d,%d,%d" % (C, P, R),
                            "--discard", "--cpis", str(cpis), "--rcvbuf-mib", str(rcvbuf), "--timeout-ms", "500",
                            "--json", lj], stderr=subprocess.PIPE, text=True)
    port = None
    while port is None:
        line = lis.stderr.readline()
        if not line:
            return False, 0.0
        if "listening on udp://127.0.0.1:" in line:
            port = int(line.split("udp://127.0.0.1:")[1].split()[0])
    subprocess.run([rtstap, "send", "--input", rec, "--vrt", "udp://127.0.0.1:%d" % port, "--rate", repr(rate),
                    "--loop", str(loop), "--gates-per-packet", str(G), "--json", sj], stdout=subprocess.DEVNULL,
                   timeout=seconds * 3 + 60)
    try:
        lis.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        lis.kill()
        return False, 0.0
    d = json.load(open(lj))
    ok = d["cpis"] == cpis and d["cpis_lost"] == 0
    return ok, d["packets_per_s"]


def bisect(run, lo, hi, steps):
    """(the highest rate received losslessly, the rate asked then), asking between lo and hi
    datagrams/s"""
    best = (0.0, 0.0)
    for _ in range(steps):
        mid = (lo * hi) ** 0.5
        ok, got = run(mid)
        print("  ask %9.0f/s: %s, received %9.0f/s" % (mid, "lossless" if ok else "loss    ", got), file=sys.stderr)
        if ok:
            best = max(best, (got, mid))
            lo = mid
        else:
            hi = mid
        yield best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rtstap")
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--rcvbuf-mib", type=int, default=4)
    ap.add_argument("--lo", type=float, default=20e3, help="datagrams/s")
    ap.add_argument("--hi", type=float, default=2e6)
    ap.add_argument("--json")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    rec = os.path.join(tmp, "rec.h5")
    subprocess.run([a.rtstap, "gen", "--channels", str(C), "--pulses", str(P), "--range-gates", str(R), "--cpis",
                    "4", "--patches", "8", "--seed", "3", "--output", rec, "--quiet"], check=True)
    ip = bisect(lambda pps: iperf_run(pps, a.seconds, a.rcvbuf_mib), a.lo, a.hi, a.steps)
    li = bisect(lambda pps: listen_run(a.rtstap, rec, pps, a.seconds, a.rcvbuf_mib, tmp), a.lo, a.hi, a.steps)
    best_ip = best_li = (0.0, 0.0)
    for step in range(a.steps):  # alternate: one iperf3 run, one listen run
        print("step %d: iperf3" % (step + 1), file=sys.stderr)
        best_ip = next(ip)
        print("step %d: listen" % (step + 1), file=sys.stderr)
        best_li = next(li)
    (best_ip, ask_ip), (best_li, ask_li) = best_ip, best_li
    ratio = best_li / best_ip if best_ip else 0.0
    # a side that received much less than it asked, losslessly, was held back by its sender
    res = {"datagram_bytes": DGRAM, "seconds": a.seconds, "steps": a.steps, "rcvbuf_mib": a.rcvbuf_mib,
           "iperf3_lossless_pps": best_ip, "listen_lossless_pps": best_li, "ratio": ratio,
           "iperf3_asked_pps": ask_ip, "listen_asked_pps": ask_li,
           "iperf3_gbit_s": best_ip * DGRAM * 8 / 1e9, "listen_gbit_s": best_li * DGRAM * 8 / 1e9,
           "host": socket.gethostname(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "cpus": os.cpu_count(), "load_1min": os.getloadavg()[0]}
    print("iperf3 %.0f datagrams/s (%.2f Gbit/s), listen --discard %.0f datagrams/s (%.2f Gbit/s): %.2f x"
          % (best_ip, res["iperf3_gbit_s"], best_li, res["listen_gbit_s"], ratio))
    if a.json:
        json.dump(res, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
