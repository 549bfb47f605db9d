#!/usr/bin/env python3
"""live_ingest: what live input costs the engine, in one call (issue 45's targets; the
table in docs/live.md "Measured: ingest cost and added latency").

On one recording of int16 CPIs (the scene `rtstap gen` draws, written as interleaved int16
with its scale, so that `stream --input`, `send` and `listen` all hand the engine the same
int16 samples):
  1. `rtstap stream --input REC` (the CPU engine fed from the file by its reader threads):
     its rate R0 and its latency p99 (submit to results);
  2. `rtstap send --rate F x R0` -> `rtstap listen` over 127.0.0.1 into the same engine
     (same shape, processing options and slots): the processed rate, the CPIs lost and
     the latency p99 (a CPI's last packet to its results), for each fraction F asked.
Targets: at the engine's own rate the processed rate >= 0.95 x R0 with no CPI lost, and
listen's p99 minus stream's p99 <= 1 ms. The rows alternate stream and listen runs, so
that a busy machine weighs on both alike.

usage: live_ingest.py RTSTAP [--cpis N] [--fractions 0.9,1.0] [--runs K] [--shape C,P,R]
                      [--gates G] [--proc "OPTIONS"] [--json FILE]
The shape and processing must make the engine, not the loopback path, the limit: on a
2-core machine one sender and one receiver carry about 10^5 datagrams/s between them.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

SHAPE = (4, 32, 480)                       # channels, pulses, range gates
PROC = ["--preset", "easy", "--backend", "cpu", "--doppler-order", "1", "--training", "60",
        "--segments", "2", "--beams", "4", "--cfar", "ca", "--slots", "3"]
GATES = 240                                # two packets a pulse (968-byte datagrams)
PIN_SEND, PIN_ENGINE = [], []              # --pin: taskset prefixes


def sh(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw)


def make_recording(rtstap, tmp, cpis):
    """gen's scene, written again as interleaved int16 with a scale (h5py)"""
    import h5py
    import numpy as np
    src, dst = os.path.join(tmp, "c64.h5"), os.path.join(tmp, "ci16.h5")
    c, p, r = SHAPE
    sh([rtstap, "gen", "--preset", "ward", "--channels", str(c), "--pulses", str(p),
        "--range-gates", str(r), "--cpis", str(cpis), "--seed", "7", "-o", src, "--quiet"])
    with h5py.File(src, "r") as f:
        x = f["data/iq"][()]
        x = x["r"] + 1j * x["i"] if x.dtype.names else x
    scale = float(np.abs(np.stack([x.real, x.imag])).max()) / 32767.0
    q = np.stack([np.rint(x.real / scale), np.rint(x.imag / scale)], axis=-1).astype(np.int16)
    with h5py.File(dst, "w") as g:
        d = g.create_dataset("data/iq", data=q)
        d.attrs["scale"] = scale
        d.dims[0].label, d.dims[1].label, d.dims[2].label = "cpi", "channel", "pulse"
        d.dims[3].label, d.dims[4].label = "range", "iq"
    return dst, scale


def stream_run(rtstap, rec, tmp):
    out = os.path.join(tmp, "stream.json")
    sh(PIN_ENGINE + [rtstap, "stream", "--input", rec, "--json", out, "--quiet", "-f"] + PROC)
    d = json.load(open(out))
    return {"rate": d["cpis_per_s"], "p99": d["latency_ms"]["p99"], "p50": d["latency_ms"]["p50"],
            "cpis": d["cpis"]}


def listen_run(rtstap, rec, scale, cpis, rate, tmp):
    out = os.path.join(tmp, "listen.json")
    err = open(os.path.join(tmp, "listen.err"), "w+")
    c, p, r = SHAPE
    lp = subprocess.Popen(PIN_ENGINE + ["timeout", "--foreground", "300", rtstap, "listen", "--vrt",
                           "udp://127.0.0.1:0", "--shape", "%d,%d,%d" % SHAPE, "--scale",
                           repr(scale), "--cpis", str(cpis), "--timeout-ms", "2000", "--json",
                           out, "-f"] + PROC, stderr=err)
    port = None
    for _ in range(400):
        err.seek(0)
        for line in err:
            if "listening on udp://127.0.0.1:" in line:
                port = int(line.split("127.0.0.1:")[1].split()[0].strip(",;)"))
        if port:
            break
        time.sleep(0.05)
    if not port:
        lp.kill()
        raise SystemExit("listen did not say it was listening")
    sjson = os.path.join(tmp, "send.json")
    sh(PIN_SEND + [rtstap, "send", "--input", rec, "--vrt", "udp://127.0.0.1:%d" % port, "--rate",
                   "%.3f" % rate, "--gates-per-packet", str(GATES), "--json", sjson, "-f"])
    lp.wait()
    lag = json.load(open(sjson))["max_lag_ms"]
    d = json.load(open(out))
    return {"offered": d["offered_cpis_per_s"], "rate": d["processed_cpis_per_s"],
            "lost": len(d["lost_cpis"]), "p99": d["latency_ms"]["p99"],
            "p50": d["latency_ms"]["p50"], "cpis": d["cpis"],
            "wait_p50": d["wait_ms"]["p50"], "wait_p99": d["wait_ms"]["p99"],
            "handoff_p50": d["handoff_ms"]["p50"], "handoff_p99": d["handoff_ms"]["p99"],
            "send_max_lag_ms": lag}


def main():
    global SHAPE, GATES, PROC, PIN_SEND, PIN_ENGINE
    ap = argparse.ArgumentParser()
    ap.add_argument("rtstap")
    ap.add_argument("--cpis", type=int, default=300)
    ap.add_argument("--fractions", default="0.9,1.0")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--shape", default="%d,%d,%d" % SHAPE)
    ap.add_argument("--gates", type=int, default=GATES)
    ap.add_argument("--proc", default=" ".join(PROC))
    ap.add_argument("--pin", help="SEND_CPUS/ENGINE_CPUS: taskset lists for the sender and for "
                    "stream and listen (e.g. 15/0-7)")
    ap.add_argument("--json")
    a = ap.parse_args()
    SHAPE = tuple(int(x) for x in a.shape.split(","))
    GATES = a.gates
    PROC = a.proc.split()
    if a.pin:
        send_cpus, engine_cpus = a.pin.split("/")
        PIN_SEND, PIN_ENGINE = ["taskset", "-c", send_cpus], ["taskset", "-c", engine_cpus]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        rec, scale = make_recording(a.rtstap, tmp, a.cpis)
        for run in range(a.runs):
            for f in [float(x) for x in a.fractions.split(",")]:
                s = stream_run(a.rtstap, rec, tmp)   # each listen run right after its own
                li = listen_run(a.rtstap, rec, scale, a.cpis, f * s["rate"], tmp)
                rows.append({"run": run, "fraction": f, "stream": s, "listen": li,
                             "ratio": li["rate"] / s["rate"], "added_p99_ms": li["p99"] - s["p99"]})
    load = os.getloadavg()[0]
    print("shape %s, %d CPIs, load %.1f" % ("x".join(map(str, SHAPE)), a.cpis, load))
    print("| run | offered / stream's rate | stream CPIs/s | listen processed CPIs/s | ratio | lost | "
          "stream p50 / p99 ms | listen p50 / p99 ms | to submit p50 / p99 ms | hand-over p50 / p99 ms | "
          "added p99 ms | send's worst lag ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        s, li = r["stream"], r["listen"]
        print("| %d | %.2f | %.1f | %.1f | %.3f | %d | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.3f / %.3f "
              "| %+.2f | %.1f |" % (r["run"], r["fraction"], s["rate"], li["rate"], r["ratio"], li["lost"], s["p50"],
                                    s["p99"], li["p50"], li["p99"], li["wait_p50"], li["wait_p99"],
                                    li["handoff_p50"], li["handoff_p99"], r["added_p99_ms"],
                                    li["send_max_lag_ms"]))
    if a.json:
        json.dump({"shape": SHAPE, "cpis": a.cpis, "load": load, "options": PROC, "rows": rows},
                  open(a.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
