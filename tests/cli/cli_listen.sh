#!/usr/bin/env bash
# cli_listen: `rtstap listen --discard`, the receive path alone, over 127.0.0.1 (issue 45), and
# listen into the engine (the stream runtime): every CPI processed as `run` processes it.
# `rtstap send` -> `listen`: every CPI complete without loss; with --loss and --loop,
# listen's lost_cpis are exactly the incomplete CPIs send names (the last one too, by the
# timeout). Datagrams written here in Python from docs/live.md (socket, struct): malformed
# ones counted and nothing else, a CPI's packets reversed and duplicated still complete,
# duplicates counted (a copy that comes after its CPI completed is late). The readiness line names the port chosen for port 0.
# SIGINT stops it with the report written (exit 130); --duration ends it (exit 0). Usage
# errors exit 2, a port in use 1. Every listen runs under `timeout`: a hang fails.
# env: RTSTAP_BIN.
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
python3 -c 'import socket, struct, json' 2>/dev/null || { echo "cli_listen: no python3"; exit 77; }
tmp=$(mktemp -d)
lpid=
trap '[ -n "$lpid" ] && kill "$lpid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=eval(sys.argv[2]); print(*(v if isinstance(v, tuple) else (v,)))' "$1" "$2"; }
C=2 P=4 R=24

# start listen (NAME ARGS...) in the background: its port in $port
listen() {
    local name=$1
    shift
    [ "$name" = "${name#engine}" ] && set -- --discard "$@" # engine*: into the engine
    # --foreground: a signal sent to timeout reaches listen once (without it timeout also
    # signals its whole group, so listen could get a second SIGINT: the one that ends it)
    timeout --foreground 60 "$bin" listen --vrt udp://127.0.0.1:0 "$@" 2> "$tmp/$name.err" &
    lpid=$!
    port=
    for _ in $(seq 200); do
        port=$(sed -n 's/.*listening on udp:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/$name.err")
        [ -n "$port" ] && break
        sleep 0.05
    done
    [ -n "$port" ] || { echo "FAIL: listen did not say it was listening: $(cat "$tmp/$name.err")"; exit 1; }
}
listened() { wait "$lpid"; local st=$?; lpid=; return $st; }

"$bin" gen --channels $C --pulses $P --range-gates $R --cpis 4 --patches 8 --seed 3 --output "$tmp/gen.h5" --quiet

# ---- whole CPIs -------------------------------------------------------------------------------
listen a --shape $C,$P,$R --cpis 8 --buffers 32 --json "$tmp/a.json"
"$bin" send --input "$tmp/gen.h5" --vrt "udp://127.0.0.1:$port" --rate 40 --loop 2 --gates-per-packet 7 > /dev/null
check "send: exit 0" '[ $? -eq 0 ]'
listened
st=$?
check "listen --cpis 8: exit 0 after 8 complete CPIs, none lost: $(tail -c 600 "$tmp/a.err")" \
    '[ $st -eq 0 ] && [ "$(jget "$tmp/a.json" "d[\"cpis\"], d[\"lost_cpis\"], d[\"first_cpi\"], d[\"malformed_packets\"], d[\"duplicates\"], d[\"late\"]")" = "8 [] 0 0 0 0" ]'
check "... every packet counted (8 CPIs of 32 data packets and a context packet)" \
    '[ "$(jget "$tmp/a.json" "d[\"packets\"], d[\"kinds\"][\"data\"], d[\"kinds\"][\"context\"], d[\"rf_hz\"]")" = "264 256 8 450000000" ]'
check "... rates and the socket buffer reported" \
    '[ "$(jget "$tmp/a.json" "d[\"offered_cpis_per_s\"] > 0 and d[\"processed_cpis_per_s\"] == d[\"offered_cpis_per_s\"] and d[\"rcvbuf_asked\"] == 64 << 20 and 0 < d[\"rcvbuf_got\"] and d[\"rcvbuf_capped\"] == (d[\"rcvbuf_got\"] < d[\"rcvbuf_asked\"])")" = True ] &&
     grep -q "cpis: 8 complete, 0 lost" "$tmp/a.err" && grep -q "socket buffer: 67108864 bytes asked" "$tmp/a.err"'

# ---- --loss: exactly the CPIs send named ------------------------------------------------------
for seed in 4 9; do
    listen l$seed --shape $C,$P,$R --cpis 12 --timeout-ms 1000 --buffers 32 --json "$tmp/l$seed.json"
    "$bin" send --input "$tmp/gen.h5" --vrt "udp://127.0.0.1:$port" --rate 40 --loop 3 --gates-per-packet 3 \
        --loss 0.01 --seed $seed --json "$tmp/s$seed.json" > /dev/null
    check "send --loss --seed $seed: exit 0" '[ $? -eq 0 ]'
    listened
    st=$?
    sent=$(jget "$tmp/s$seed.json" 'd["incomplete_cpis"]')
    got=$(jget "$tmp/l$seed.json" 'd["lost_cpis"]')
    check "listen, seed $seed: exit 0, lost exactly the CPIs send made incomplete (send $sent, listen $got)" \
        '[ $st -eq 0 ] && [ "$sent" = "$got" ] && [ "$sent" != "[]" ]'
    check "... the others complete, the reason 'missing', the report names them" \
        '[ "$(jget "$tmp/l$seed.json" "d[\"cpis\"] + d[\"cpis_lost\"] == 12 and all(r[\"reason\"] == \"missing\" for r in d[\"lost_ranges\"])")" = True ] &&
         grep -q "lost: $(echo "$sent" | tr -d "[],")\$" "$tmp/l$seed.err"'
done

# ---- datagrams from docs/live.md: malformed, reversed, duplicated, late -----------------------
listen m --shape 1,2,3 --cpis 4 --timeout-ms 500 --json "$tmp/m.json"
python3 - "$port" <<'EOF'
import socket, struct, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
dst = ("127.0.0.1", int(sys.argv[1]))
def data(chan, pulse, gate, iq, count=0):  # docs/live.md: header, stream ID, TSI, TSF (2), payload
    words = 5 + len(iq)
    return struct.pack(">IIIQ", 0x10D00000 | (count & 15) << 16 | words, chan, pulse, gate) + \
        b"".join(struct.pack(">hh", i, q) for i, q in iq)
def put(b):
    s.sendto(b, dst)
    time.sleep(0.002)
cpi = lambda k: [data(0, 2 * k + p, g, [(k, p + g)]) for p in range(2) for g in range(3)]
put(b"\x10")                                           # short
put(struct.pack(">I", 0x20000001))                     # type 0010
put(data(1, 0, 0, [(1, 1)]))                           # channel 1 of 1
put(data(0, 0, 2, [(1, 1), (2, 2)]))                   # gates past R
put(data(0, 0, 0, [(1, 1)])[:-4])                      # size word disagrees
for b in cpi(0): put(b)                                # CPI 0 (the stream starts at its first pulse)
for b in reversed(cpi(1)): put(b)                      # CPI 1 reversed
for b in cpi(2): put(b); put(b)                        # CPI 2, each packet twice
for b in cpi(3)[:-1]: put(b)                           # CPI 3: its last packet missing
time.sleep(1.2)                                        # (lost by the timeout)
put(cpi(3)[0])                                         # late
EOF
listened
st=$?
check "listen of datagrams from docs/live.md: exit 0: $(tail -c 600 "$tmp/m.err")" '[ $st -eq 0 ]'
check "... 5 malformed by class, CPIs 0 to 2 complete, CPI 3 lost, 5 duplicates and 1 late (the copy of CPI 2's last packet) ($(jget "$tmp/m.json" "d[\"kinds\"], d[\"cpis\"], d[\"lost_cpis\"], d[\"duplicates\"]"))" \
    '[ "$(jget "$tmp/m.json" "d[\"malformed_packets\"], d[\"kinds\"][\"short\"], d[\"kinds\"][\"type\"], d[\"kinds\"][\"channel\"], d[\"kinds\"][\"gates\"], d[\"kinds\"][\"size\"], d[\"cpis\"], d[\"lost_cpis\"], d[\"duplicates\"], d[\"late\"]")" = "5 1 1 1 1 1 3 [3] 5 1" ]'

# ---- SIGINT, --duration -----------------------------------------------------------------------
set -m # (a non-interactive shell starts background jobs with SIGINT ignored)
listen i --shape $C,$P,$R --json "$tmp/i.json"
kill -INT "$lpid"
listened
st=$?
set +m
check "listen stopped by SIGINT: exit 130, the report written" \
    '[ $st -eq 130 ] && [ "$(jget "$tmp/i.json" "d[\"stopped_by_signal\"], d[\"cpis\"]")" = "2 0" ] && grep -q "cpis: 0 complete" "$tmp/i.err"'
t0=$(date +%s.%N)
timeout 30 "$bin" listen --vrt udp://127.0.0.1:0 --shape 1,1,1 --discard --duration 0.3 2> "$tmp/d.err"
st=$?
check "listen --duration 0.3: exit 0 within 0.3..10 s" \
    '[ $st -eq 0 ] && python3 -c "import sys; t = float(sys.argv[2]) - float(sys.argv[1]); sys.exit(not 0.3 <= t < 10)" "$t0" "$(date +%s.%N)"'
t0=$(date +%s.%N)
timeout 30 "$bin" listen --vrt udp://127.0.0.1:0 --shape 2,8,64 --backend cpu --training 16 --duration 0.5 \
    --json "$tmp/dd.json" -f 2> "$tmp/dd.err"
st=$?
check "listen into the engine --duration 0.5 (a silent feed): exit 0 within 0.5..10 s, nothing processed" \
    '[ $st -eq 0 ] && python3 -c "import sys; t = float(sys.argv[2]) - float(sys.argv[1]); sys.exit(not 0.5 <= t < 10)" "$t0" "$(date +%s.%N)" && [ "$(jget "$tmp/dd.json" "d[\"cpis_processed\"], d[\"cpis\"]")" = "0 0" ]'

# ---- errors -----------------------------------------------------------------------------------
"$bin" listen -h > "$tmp/h" 2>&1
check "listen -h: exit 0, within 90 columns" \
    '[ $? -eq 0 ] && head -1 "$tmp/h" | grep -q "^usage: rtstap listen " && [ "$(awk "length > 90" "$tmp/h" | wc -l)" -eq 0 ]'
usage() { # WHAT EXPECTED-TEXT ARGS...
    local what=$1 text=$2
    shift 2
    timeout 30 "$bin" listen "$@" > /dev/null 2> "$tmp/e"
    local st=$?
    check "listen $what: exit 2 ($(head -c 300 "$tmp/e"))" '[ $st -eq 2 ] && grep -q -- "$text" "$tmp/e"'
}
ok=(--vrt udp://127.0.0.1:0 --shape 2,4,24)
usage "into the engine, lines too short for its CFAR" "longer than the 24 range gates" "${ok[@]}"
usage "--shape 2,4" "--shape expects C,P,R" --vrt udp://127.0.0.1:0 --shape 2,4 --discard
usage "--shape 2,0,4" "--shape expects C,P,R" --vrt udp://127.0.0.1:0 --shape 2,0,4 --discard
usage "--vrt tcp://" "expected udp://HOST:PORT" --vrt tcp://127.0.0.1:0 --shape 2,4,24 --discard
usage "--vrt without a port" "expected udp://HOST:PORT" --vrt udp://127.0.0.1 --shape 2,4,24 --discard
usage "--cpis 0" "--cpis" "${ok[@]}" --discard --cpis 0
usage "--keep without -o" "give -o FILE" "${ok[@]}" --keep weights
listen busy --shape 1,1,1
timeout 30 "$bin" listen --vrt "udp://127.0.0.1:$port" --shape 1,1,1 --discard --duration 1 2> "$tmp/e"
st=$?
check "listen on a port in use: exit 1 ($(head -c 300 "$tmp/e"))" '[ $st -eq 1 ] && grep -q "cannot bind" "$tmp/e"'
kill -TERM "$lpid"
listened
st=$?
check "listen stopped by SIGTERM: exit 143" '[ $st -eq 143 ]'

[ $fail -eq 0 ] && echo "cli_listen: all checks passed"
# ---- listen -o: the file of `run` over the recording sent, bit for bit (called below, with
# the int16 recording $tmp/erec.h5, its run $tmp/erun.h5 and the options proc) ---------------
h5py=
for p in /usr/bin/python3 python3; do "$p" -c "import h5py, numpy" 2>/dev/null && { h5py=$p; break; }; done
h5same=${RTSTAP_TOOLS_DIR:-$(dirname "$bin")/tests}/h5same
h5attr=${RTSTAP_TOOLS_DIR:-$(dirname "$bin")/tests}/h5attr
# FILE RUN: every row of FILE run's of the same recording CPI (tests/tools/live_rows.py)
rows_of_run() { "$h5py" "$(dirname "$0")/../tools/live_rows.py" "$1" "$2"; }
listen_out_checks() {
    [ -x "$h5same" ] && [ -x "$h5attr" ] || { echo "cli_listen: no h5same/h5attr: listen -o not checked"; return; }
    # whole CPIs: the file of run, bit for bit (h5same: the same bytes and shapes)
    listen engineo --shape $EC,$EP,$ER --cpis $EN --buffers 32 "${proc[@]}" -o "$tmp/lo.h5" --json "$tmp/lo.json"
    "$bin" send --input "$tmp/erec.h5" --vrt "udp://127.0.0.1:$port" --rate 40 > /dev/null 2>&1
    listened
    st=$?
    check "listen -o: exit 0, the weights, detections and input CPIs of run bit for bit: $(tail -c 400 "$tmp/engineo.err")" \
        '[ $st -eq 0 ] && "$h5same" "$tmp/lo.h5" "$tmp/erun.h5" /weights /detections /axes/input_cpi > "$tmp/same.txt" 2>&1'
    check "... detections there to compare ($(jget "$tmp/lo.json" "d[\"detections\"]"))" \
        '[ "$(jget "$tmp/lo.json" "d[\"detections\"] > 0")" = True ]'
    check "... /config cpis_lost 0, cpis $EN, no stopped" \
        '[ "$("$h5attr" "$tmp/lo.h5" /config cpis_lost cpis)" = "$(printf "cpis_lost 0\ncpis $EN")" ] &&
         ! "$h5attr" "$tmp/lo.h5" /config stopped > /dev/null'
    timeout 30 "$bin" listen --vrt udp://127.0.0.1:0 --shape $EC,$EP,$ER -o "$tmp/lo.h5" "${proc[@]}" --cpis 1 2> "$tmp/e"
    check "listen -o onto an existing file without -f: exit 1 before listening, the file kept" \
        '[ $? -eq 1 ] && ! grep -q listening "$tmp/e" && "$h5same" "$tmp/lo.h5" "$tmp/erun.h5" /weights > /dev/null'
    [ -n "$h5py" ] || { echo "cli_listen: no h5py: listen -o with losses not checked"; return; }
    # --loss: the rows are exactly the CPIs not lost, each run's; the lost ones named
    listen enginel --shape $EC,$EP,$ER --cpis 12 --timeout-ms 1000 --buffers 32 "${proc[@]}" -o "$tmp/ll.h5" --json "$tmp/ll.json"
    "$bin" send --input "$tmp/erec.h5" --vrt "udp://127.0.0.1:$port" --rate 40 --loop 3 --loss 0.03 --seed 5 \
        --json "$tmp/sl.json" > /dev/null 2>&1
    listened
    st=$?
    sent=$(jget "$tmp/sl.json" 'd["incomplete_cpis"]')
    got=$(rows_of_run "$tmp/ll.h5" "$tmp/erun.h5" 2>&1)
    want=$("$h5py" -c 'import sys, json; l = json.loads(sys.argv[1]); print([c for c in range(12) if c not in l], l, len(l), "-")' "$sent")
    check "listen -o, send --loss: exit 0, the rows run's for the CPIs not lost, the lost named (send: $sent; file: $got)" \
        '[ $st -eq 0 ] && [ "$sent" != "[]" ] && [ "$got" = "$want" ]'
    "$bin" info "$tmp/ll.h5" --json "$tmp/info.json" > "$tmp/info.txt" 2>&1
    check "... rtstap info names the lost CPIs" \
        '[ "$(jget "$tmp/info.json" "d[\"cpis_lost\"]")" = "$(jget "$tmp/sl.json" "len(d[\"incomplete_cpis\"])")" ] &&
         grep -q "a result of a live stream (rtstap listen -o)" "$tmp/info.txt" && [ "$(jget "$tmp/info.json" "d[\"live\"]")" = True ] &&
         grep -q "CPIs: [0-9]* processed, [0-9]* lost and never processed" "$tmp/info.txt" && ! grep -q "CPIs: one" "$tmp/info.txt"'
    # SIGINT: the CPIs done published, complete and readable, with /config stopped
    set -m
    listen enginei --shape $EC,$EP,$ER --buffers 32 "${proc[@]}" -o "$tmp/li.h5" --json "$tmp/li.json"
    "$bin" send --input "$tmp/erec.h5" --vrt "udp://127.0.0.1:$port" --rate 40 --loop 50 > /dev/null 2>&1 &
    spid=$!
    sleep 0.6
    kill -INT "$lpid"
    listened
    st=$?
    set +m
    kill "$spid" 2>/dev/null
    wait "$spid" 2>/dev/null
    got=$(rows_of_run "$tmp/li.h5" "$tmp/erun.h5" 2>&1)
    n=$(jget "$tmp/li.json" 'd["cpis_processed"]')
    # (a loaded machine may lose CPIs on the way: the file names them, as the report does)
    want=$("$h5py" -c 'import json, sys
d = json.load(open(sys.argv[1]))
lost = d["lost_cpis"]
print([c for c in range(d["cpis"] + len(lost)) if c not in lost], lost, len(lost),
      "by SIGINT after %d CPIs processed, %d lost" % (d["cpis_processed"], len(lost)))' "$tmp/li.json")
    check "listen -o stopped by SIGINT: exit 130, the $n CPIs processed in the file, each run's, /config stopped ($got)" \
        '[ $st -eq 130 ] && [ "$n" -gt 0 ] && [ "$got" = "$want" ]'
}

# ---- listen --publish: each CPI's detections as one JSON message on a ZeroMQ PUB socket, the
# file's detections exactly (floats as %.9g read back as the same float32s) ------------------
listen_pub_checks() {
    if [ -z "$h5py" ] || ! "$h5py" -c "import zmq" 2>/dev/null; then
        echo "cli_listen: no python3-zmq: --publish not checked"; return
    fi
    timeout 30 "$bin" listen --zmq tcp://127.0.0.1:1 --shape 1,1,1 --discard --duration 0.01 2> "$tmp/e"
    if grep -q "no ZeroMQ" "$tmp/e"; then echo "cli_listen: this build has no ZeroMQ: --publish not checked"; return; fi
    timeout 30 "$bin" listen --vrt udp://127.0.0.1:0 --shape 1,1,1 --discard --publish zmq+tcp://127.0.0.1:0 \
        --cpis 1 2> "$tmp/e"
    check "listen --discard --publish: exit 2" '[ $? -eq 2 ] && grep -q "takes no" "$tmp/e"'
    listen enginep --shape $EC,$EP,$ER --cpis $EN --buffers 32 "${proc[@]}" -o "$tmp/lp.h5" --json "$tmp/lp.json" \
        --publish zmq+tcp://127.0.0.1:0
    local pub
    pub=$(sed -n 's/.*publishing on zmq+\(tcp:\/\/127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/enginep.err")
    # the subscriber: connected (and its subscription through) before send starts
    timeout 30 "$h5py" - "$pub" "$EN" "$tmp/sub.ready" > "$tmp/msgs.txt" 2> "$tmp/sub.err" <<'EOF' &
import sys, time, zmq
s = zmq.Context().socket(zmq.SUB)
s.connect(sys.argv[1])
s.setsockopt(zmq.SUBSCRIBE, b"")
s.setsockopt(zmq.RCVTIMEO, 20000)
time.sleep(0.5)
open(sys.argv[3], "w").close()
for _ in range(int(sys.argv[2])):
    print(s.recv().decode())
EOF
    local subpid=$!
    for _ in $(seq 100); do [ -e "$tmp/sub.ready" ] && break; sleep 0.05; done
    "$bin" send --input "$tmp/erec.h5" --vrt "udp://127.0.0.1:$port" --rate 40 > /dev/null 2>&1
    listened
    st=$?
    wait "$subpid"
    local sst=$?
    check "listen --publish: exit 0, the subscriber got $EN messages ($sst: $(head -c 300 "$tmp/sub.err"))" \
        '[ $st -eq 0 ] && [ $sst -eq 0 ] && [ "$(wc -l < "$tmp/msgs.txt")" -eq $EN ]'
    local cmp
    cmp=$("$h5py" - "$tmp/msgs.txt" "$tmp/lp.h5" 2>&1 <<'EOF'
import h5py, json, numpy as np, sys
msgs = [json.loads(line) for line in open(sys.argv[1])]
det = h5py.File(sys.argv[2], "r")["detections"][()]
fields = ["beam", "doppler_bin", "range_cell", "power", "snr_db", "statistic", "threshold"]
for row, m in enumerate(msgs):
    assert m["cpi"] == row and m["row"] == row and m["cpis_lost"] == 0 and m["latency_ms"] > 0, m
    mine = det[det["cpi"] == row]
    assert m["detection_count"] == len(mine) == len(m["detections"]), (row, len(mine))
    for d, f in zip(m["detections"], mine):
        assert all(np.array(d[k], dtype=f.dtype[k]) == f[k] for k in fields), (row, d, f)
print(sum(len(m["detections"]) for m in msgs))
EOF
)
    check "... each message its CPI's detections in the file, exactly ($cmp)" \
        '[ "$cmp" = "$(jget "$tmp/lp.json" "d[\"detections\"]")" ] && [ "$cmp" -gt 0 ]'
    check "... the report: $EN published, none dropped" \
        '[ "$(jget "$tmp/lp.json" "d[\"published\"], d[\"publish_dropped\"]")" = "$EN 0" ] &&
         grep -q "published on zmq+tcp://127.0.0.1:[0-9]*: $EN messages, 0 dropped" "$tmp/enginep.err"'
    # a subscriber that takes one message and then reads no more: with --publish-hwm 1 and
    # messages of ~3 MB (24 000 detections a CPI at pfa 0.4) its queue and the TCP buffers
    # fill, and listen drops messages (counted) and never waits: every CPI is processed
    "$bin" gen --preset ward --channels 4 --pulses 8 --range-gates 512 --cpis 40 --seed 3 -o "$tmp/drop.h5" --quiet
    listen enginedrop --shape 4,8,512 --scale 0.001 --cpis 40 --buffers 48 --backend cpu --training 32 --beams 16 \
        --cfar-pfa 0.4 --publish zmq+tcp://127.0.0.1:0 --publish-hwm 1 --json "$tmp/drop.json"
    pub=$(sed -n 's/.*publishing on zmq+\(tcp:\/\/127\.0\.0\.1:[0-9]*\).*/\1/p' "$tmp/enginedrop.err")
    rm -f "$tmp/sub.ready"
    timeout 60 "$h5py" - "$pub" "$tmp/sub.ready" "$tmp/sub.done" 2> "$tmp/subd.err" <<'EOF' &
import os, sys, time, zmq
s = zmq.Context().socket(zmq.SUB)
s.setsockopt(zmq.RCVHWM, 1)
s.setsockopt(zmq.RCVBUF, 4096)
s.connect(sys.argv[1])
s.setsockopt(zmq.SUBSCRIBE, b"")
s.setsockopt(zmq.RCVTIMEO, 30000)
time.sleep(0.5)
open(sys.argv[2], "w").close()
s.recv()                          # one message, then none until listen has ended
while not os.path.exists(sys.argv[3]):
    time.sleep(0.1)
EOF
    subpid=$!
    for _ in $(seq 100); do [ -e "$tmp/sub.ready" ] && break; sleep 0.05; done
    "$bin" send --input "$tmp/drop.h5" --vrt "udp://127.0.0.1:$port" --rate 40 --iq-scale 0.001 > /dev/null 2>&1
    listened
    st=$?
    touch "$tmp/sub.done"
    wait "$subpid"
    check "listen --publish to a subscriber that stopped reading: exit 0, every CPI processed, messages dropped and counted ($(jget "$tmp/drop.json" "d[\"cpis_processed\"], d[\"published\"], d[\"publish_dropped\"]"))" \
        '[ $st -eq 0 ] && python3 -c "import json, sys; d = json.load(open(sys.argv[1])); sys.exit(not (d[\"cpis_processed\"] == 40 and d[\"cpis_lost\"] == 0 and d[\"publish_dropped\"] > 0 and d[\"published\"] + d[\"publish_dropped\"] == 40))" "$tmp/drop.json" &&
         grep -q "published on zmq+tcp://127.0.0.1:[0-9]*: [0-9]* messages, [1-9][0-9]* dropped" "$tmp/enginedrop.err"'
}

# ---- into the engine (issue 44's stream runtime): every CPI processed as `run` processes the
# recording — int16 whole numbers (scale 1, sent exactly), so the engine's input is the same
# values: the same detections; latency from the last packet reported ---------------------------
mkraw=${RTSTAP_TOOLS_DIR:-$(dirname "$bin")/tests}/mkraw
if [ -x "$mkraw" ]; then
    EC=4 EP=8 ER=96 EN=4
    "$mkraw" ci16_le $EC,$EP,$ER,$EN C,P,R 7 "$tmp/eraw.bin" "$tmp/eref.h5" > /dev/null
    "$bin" import-raw --input "$tmp/eraw.bin" --shape $EC,$EP,$ER,$EN --type ci16_le --output "$tmp/erec.h5" \
        --progress none > /dev/null
    proc=(--preset easy --backend cpu --doppler-order 1 --segments 1 --training 48 --beams 4 --cfar-pfa 0.01)
    "$bin" run --input "$tmp/erec.h5" -o "$tmp/erun.h5" "${proc[@]}" --quiet
    check "run on the int16 recording: exit 0" '[ $? -eq 0 ]'
    ndet=$(python3 -c 'import h5py,sys; print(h5py.File(sys.argv[1])["detections"].shape[0])' "$tmp/erun.h5" 2>/dev/null ||
           /usr/bin/python3 -c 'import h5py,sys; print(h5py.File(sys.argv[1])["detections"].shape[0])' "$tmp/erun.h5")
    listen engine --shape $EC,$EP,$ER --cpis 8 --scale 1 --deadline-ms 10000 --buffers 32 "${proc[@]}" --json "$tmp/e.json"
    "$bin" send --input "$tmp/erec.h5" --vrt "udp://127.0.0.1:$port" --rate 40 --loop 2 > "$tmp/esend.out" 2>&1
    check "send of the int16 recording: exit 0" '[ $? -eq 0 ]'
    listened
    st=$?
    check "listen into the engine: exit 0, 8 CPIs processed, none lost: $(tail -c 600 "$tmp/engine.err")" \
        '[ $st -eq 0 ] && [ "$(jget "$tmp/e.json" "d[\"discard\"], d[\"cpis\"], d[\"cpis_processed\"], d[\"lost_cpis\"], d[\"deadline_misses\"]")" = "False 8 8 [] 0" ]'
    check "... the detections of run, twice (the recording sent twice): $ndet x 2" \
        '[ -n "$ndet" ] && [ "$(jget "$tmp/e.json" "d[\"detections\"]")" = "$((2 * ndet))" ]'
    check "... latency from the last packet to results reported" \
        '[ "$(jget "$tmp/e.json" "0 < d[\"latency_ms\"][\"p50\"] <= d[\"latency_ms\"][\"p99\"] <= d[\"latency_ms\"][\"max\"]")" = True ] &&
         grep -q "into the engine" "$tmp/engine.err" && grep -q "latency from the last packet" "$tmp/engine.err"'
    timeout 60 "$bin" listen --vrt udp://127.0.0.1:0 --shape $EC,$EP,$ER --cpis 8 --buffers 3 --slots 3 \
        "${proc[@]}" 2> "$tmp/engine2.err"
    check "listen into the engine: --buffers below slots + 2 is a usage error" \
        '[ $? -eq 2 ] && grep -q "give at least 5" "$tmp/engine2.err"'
    listen_out_checks
    listen_pub_checks
else
    echo "cli_listen: no mkraw ($mkraw): the engine-fed listen not checked"
fi

exit $fail
