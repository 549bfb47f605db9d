#!/usr/bin/env bash
# cli_python_live: rtstap.Stream over a live feed (issue 45: the stream runtime's
# STAP_STREAM_LIVE source) — `rtstap send` -> Stream("udp://127.0.0.1:0", shape=, scale=,
# cpis=) over 127.0.0.1 gives, CPI by CPI (numbered by the feed's CPI), the weights and
# detections `rtstap listen -o` gives for the same feed, bit for bit; with --loss the CPIs
# send made incomplete are exactly the report's lost_cpis and are never run; an output file
# names them (/lost_cpis) and holds the others; stop() ends a feed that never comes. Every
# process runs under `timeout`: a hang fails.
# env: as cli_python.sh (RTSTAP_BIN, RTSTAP_REQUIRE_PYTHON, RTSTAP_PYTHON_WANTED).
NAME=cli_python_live
# shellcheck source=tests/cli/python_env.sh
. "$(dirname "$0")/python_env.sh"

C=4 P=16 R=64 S=0.05
"$bin" gen --preset ward --channels $C --pulses $P --range-gates $R --cpis 6 --seed 5 -o "$tmp/rec.h5" --quiet
opts=(--backend cpu --doppler-order 1 --training 24 --beams 3 --cfar ca --cfar-pfa 1e-3)

# the reference: listen -o over the same feed (send's int16 at --iq-scale S)
timeout --foreground 60 "$bin" listen --vrt udp://127.0.0.1:0 --shape $C,$P,$R --scale $S --cpis 12 \
    --timeout-ms 1000 --buffers 32 -o "$tmp/listen.h5" "${opts[@]}" 2> "$tmp/listen.err" &
lpid=$!
port=
for _ in $(seq 200); do
    port=$(sed -n 's/.*listening on udp:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/listen.err")
    [ -n "$port" ] && break
    sleep 0.05
done
check "listen said it was listening: $(cat "$tmp/listen.err")" '[ -n "$port" ]'
timeout 60 "$bin" send --input "$tmp/rec.h5" --vrt "udp://127.0.0.1:$port" --rate 40 --loop 2 --iq-scale $S \
    --gates-per-packet 40 > /dev/null
wait $lpid
check "listen -o: exit 0 $(tail -c 400 "$tmp/listen.err")" '[ $? -eq 0 ] && [ -s "$tmp/listen.h5" ]'

timeout 120 "$python3" - "$bin" "$tmp" $C $P $R $S > "$tmp/py.out" 2>&1 <<'PY'
import os, subprocess, sys, threading
import h5py
import numpy as np
import rtstap

rtstap_bin, tmp, C, P, R, S = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6]), float(sys.argv[6])
opts = dict(backend="cpu", doppler_order=1, training=24, beams=3, cfar="ca", cfar_pfa=1e-3)
rec = os.path.join(tmp, "rec.h5")
bad = []

def live(cpis, send_args, output=None):
    got = {}
    def each(cpi, input_cpi, r):
        got[input_cpi] = r
    s = rtstap.Stream("udp://127.0.0.1:0", each, shape=(C, P, R), scale=S, cpis=cpis,
                      output=output, **opts)
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("rep", s.run()))
    t.start()
    sent = subprocess.run([rtstap_bin, "send", "--input", rec, "--vrt", s.address, "--rate", "40",
                           "--iq-scale", str(S), "--gates-per-packet", "40"] + send_args,
                          capture_output=True, text=True, timeout=60)
    t.join(60)
    if t.is_alive():
        s.stop()
        t.join(10)
        bad.append("run() did not end after the feed")
    s.close()
    return got, out.get("rep"), sent

# whole CPIs: every one as listen -o computed it
got, rep, _ = live(12, ["--loop", "2"])
with h5py.File(os.path.join(tmp, "listen.h5"), "r") as f:
    W, D, ins = f["weights"][()], f["detections"][()], f["axes/input_cpi"][()]
# (listen may lose a CPI as overload on a busy machine: its own counts are cli_listen's; the
# rows it has are compared, and they must be most of them)
if rep is None or rep["live"]["complete"] != 12 or rep["live"]["lost"] != 0 or \
        sorted(got) != list(range(12)) or not set(int(c) for c in ins) <= set(got) or len(ins) < 6:
    bad.append("whole CPIs: report %s, CPIs %s against listen's %s" % (rep and rep["live"], sorted(got), list(ins)))
for row, cpi in enumerate(ins):
    r = got.get(int(cpi))
    if r is None:
        continue
    dk = D[D["cpi"] == cpi]
    if r.weights.tobytes() != W[row].tobytes():
        bad.append("CPI %d: weights differ from listen -o's" % cpi)
    if len(dk) != len(r.detections) or dk["range_cell"].tobytes() != r.detections["range_cell"].tobytes() \
            or dk["power"].tobytes() != r.detections["power"].tobytes():
        bad.append("CPI %d: detections differ from listen -o's" % cpi)
if rep and not (rep["live"]["packets"] > 0 and rep["live"]["malformed_packets"] == 0 and
                rep["live"]["latency_ms"]["p99"] > 0):
    bad.append("whole CPIs: counts %s" % rep["live"])

# --loss: exactly the CPIs send made incomplete are lost, never run; the file names them
out = os.path.join(tmp, "py_live.h5")
got, rep, sent = live(18, ["--loop", "3", "--loss", "0.01", "--seed", "4", "--json", "-"], output=out)
import json
incomplete = json.loads(sent.stdout)["incomplete_cpis"]
if rep is None or rep["live"]["lost_cpis"] != incomplete or not incomplete or \
        set(got) & set(incomplete) or len(got) + len(incomplete) != 18:
    bad.append("--loss: send %s, lost %s, ran %s" % (incomplete, rep and rep["live"]["lost_cpis"], sorted(got)))
with h5py.File(out, "r") as f:
    if list(f["lost_cpis"][()]) != incomplete or sorted(f["axes/input_cpi"][()]) != sorted(got):
        bad.append("--loss: the file's /lost_cpis %s, rows %s" % (list(f["lost_cpis"][()]), list(f["axes/input_cpi"][()])))

# stop(): a feed that never comes ends
s = rtstap.Stream("udp://127.0.0.1:0", None, shape=(C, P, R), scale=S, cpis=5, **opts)
threading.Timer(0.5, s.stop).start()
rep = s.run()
s.close()
if rep["live"]["complete"] != 0 or rep["cpis"] != 0:
    bad.append("stop() on a silent feed: %s" % rep)
print("\n".join(bad) if bad else "python live: 12 CPIs as listen -o's bit for bit; --loss lost exactly "
      "send's incomplete CPIs (%d), never run, named in the file; stop() ends a silent feed" % len(incomplete))
sys.exit(1 if bad else 0)
PY
check "rtstap.Stream over a live feed" '[ $? -eq 0 ] || { cat "$tmp/py.out"; false; }'
cat "$tmp/py.out"
exit $fail
