#!/usr/bin/env bash
# cli_listen_zmq: live input over ZeroMQ (issue 45, docs/live.md). `send --zmq` (a PUB socket,
# one VRT packet a message) -> `listen --zmq` (SUB) gives the weights, detections and input
# CPIs of `run` over the same recording bit for bit (the CPU engine, the same options), and
# with --loss the file omits exactly the CPIs send made incomplete. Raw mode: a Python PUSH
# sender of complex64 items in P,R,C order and of int16 items, in messages that do not align
# with CPIs -> `listen --zmq --zmq-pull --raw`: run's results again. Usage errors exit 2.
# Skipped (77) without python3-zmq, h5py or a build with ZeroMQ. Every process runs under
# `timeout`. env: RTSTAP_BIN, RTSTAP_TOOLS_DIR.
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
tools=${RTSTAP_TOOLS_DIR:-$(dirname "$bin")/tests}
py=
for p in /usr/bin/python3 python3; do "$p" -c "import zmq, h5py, numpy" 2>/dev/null && { py=$p; break; }; done
[ -n "$py" ] || { echo "cli_listen_zmq: no python3 with zmq, h5py and numpy (python3-zmq)"; exit 77; }
[ -x "$tools/mkraw" ] && [ -x "$tools/h5same" ] || { echo "cli_listen_zmq: no mkraw/h5same"; exit 77; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
jget() { "$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
timeout 30 "$bin" listen --zmq tcp://127.0.0.1:1 --shape 1,1,1 --discard --duration 0.01 2> "$tmp/e"
if grep -q "no ZeroMQ" "$tmp/e"; then echo "cli_listen_zmq: this build has no ZeroMQ"; exit 77; fi

. "$(dirname "$0")/live_env.sh"
live_recording 7
check "the recording and run's file of it: exit 0" '[ $? -eq 0 ]'
rows() { "$py" "$(dirname "$0")/../tools/live_rows.py" "$1" "$tmp/run.h5"; }

# ---- VRT over ZeroMQ: send --zmq (PUB) -> listen --zmq (SUB) ----------------------------------
timeout 60 "$bin" send --input "$tmp/rec.h5" --zmq tcp://127.0.0.1:0 --rate 40 --json "$tmp/s.json" \
    > /dev/null 2> "$tmp/s.err" &
spid=$!
addr=$(live_bound "$tmp/s.err")
timeout 60 "$bin" listen --zmq "$addr" --shape $C,$P,$R --cpis $N --buffers 32 "${proc[@]}" -o "$tmp/z.h5" --json "$tmp/z.json" \
    2> "$tmp/z.err"
st=$?
wait "$spid"
sst=$?
check "send --zmq -> listen --zmq: exit 0 and 0, $N CPIs, none lost ($(tail -c 300 "$tmp/z.err"))" \
    '[ $st -eq 0 ] && [ $sst -eq 0 ] && [ "$(jget "$tmp/z.json" "d[\"cpis\"], d[\"lost_cpis\"], d[\"malformed_packets\"]")" = "($N, [], 0)" ]'
check "... the weights, detections and input CPIs of run, bit for bit" \
    '"$tools/h5same" "$tmp/z.h5" "$tmp/run.h5" /weights /detections /axes/input_cpi > /dev/null'
check "... the report names the ZeroMQ address" \
    'grep -q "listening on zmq+tcp://127.0.0.1:[0-9]* (SUB)" "$tmp/z.err" && [ "$(jget "$tmp/z.json" "d[\"zmq\"]")" = "$addr" ]'

# --loss: the CPIs send made incomplete, and only those, missing from the file
timeout 60 "$bin" send --input "$tmp/rec.h5" --zmq tcp://127.0.0.1:0 --rate 40 --loop 3 --loss 0.03 --seed 5 \
    --json "$tmp/sl.json" > /dev/null 2> "$tmp/sl.err" &
spid=$!
addr=$(live_bound "$tmp/sl.err")
timeout 60 "$bin" listen --zmq "$addr" --shape $C,$P,$R --cpis 12 --timeout-ms 1000 --buffers 32 "${proc[@]}" -o "$tmp/zl.h5" --json "$tmp/zl.json" \
    2> "$tmp/zl.err"
st=$?
wait "$spid"
sent=$(jget "$tmp/sl.json" 'd["incomplete_cpis"]')
got=$(rows "$tmp/zl.h5" 2>&1)
want=$("$py" -c 'import sys, json; l = json.loads(sys.argv[1]); print([c for c in range(12) if c not in l], l, len(l), "-")' "$sent")
check "send --zmq --loss -> listen --zmq -o: exit 0, the rows run's, the lost CPIs send's ($sent; $got)" \
    '[ $st -eq 0 ] && [ "$sent" != "[]" ] && [ "$got" = "$want" ]'

# ---- raw mode: a Python PUSH sender, messages not aligned with CPIs ----------------------------
# TYPE LAYOUT(numpy axes of (cpi, C, P, R)) CHUNK: the recording's CPIs as raw items
raw_send() {
    timeout 60 "$py" - "$tmp/rec.h5" "$@" 2> "$tmp/r.err" <<'EOF' &
import h5py, numpy as np, sys, zmq
x = h5py.File(sys.argv[1], "r")["data/iq"][()]
kind, axes, chunk = sys.argv[2], [int(a) for a in sys.argv[3].split(",")], int(sys.argv[4])
x = np.ascontiguousarray(x.transpose(axes))
if kind == "cf32":
    b = x.astype("<c8").tobytes()
else:
    q = np.empty(x.shape + (2,), "<i2")
    q[..., 0], q[..., 1] = x.real * 4, x.imag * 4  # whole numbers; listen --scale 0.25
    b = q.tobytes()
s = zmq.Context().socket(zmq.PUSH)
s.bind("tcp://127.0.0.1:*")
print("publishing on zmq+" + s.getsockopt_string(zmq.LAST_ENDPOINT), file=sys.stderr, flush=True)
for k in range(0, len(b), chunk):
    s.send(b[k:k + chunk])
s.close(linger=20000)
EOF
    rpid=$!
    addr=$(live_bound "$tmp/r.err")
}
raw_send cf32 0,2,3,1 5000
timeout 60 "$bin" listen --zmq "$addr" --zmq-pull --raw cf32 --layout P,R,C --shape $C,$P,$R --cpis $N "${proc[@]}" \
    -o "$tmp/r1.h5" --json "$tmp/r1.json" 2> "$tmp/r1.err"
st=$?
wait "$rpid"
check "raw complex64 in P,R,C order, 5000-byte messages -> listen --raw cf32 --layout P,R,C: run's file bit for bit ($(tail -c 300 "$tmp/r1.err"))" \
    '[ $st -eq 0 ] && "$tools/h5same" "$tmp/r1.h5" "$tmp/run.h5" /weights /detections /axes/input_cpi > /dev/null'
ndet=$(live_detections "$tmp/run.h5")
check "... detections there to compare ($ndet)" '[ "$ndet" -gt 0 ]'
check "... the messages counted, no CPI lost" \
    '[ "$(jget "$tmp/r1.json" "d[\"packets\"], d[\"cpis_lost\"]")" = "($(( (N * C * P * R * 8 + 4999) / 5000 )), 0)" ]'
raw_send ci16 0,1,2,3 3001
timeout 60 "$bin" listen --zmq "$addr" --zmq-pull --raw ci16 --scale 0.25 --shape $C,$P,$R --cpis $N "${proc[@]}" \
    -o "$tmp/r2.h5" 2> "$tmp/r2.err"
st=$?
wait "$rpid"
check "raw int16 x 4, 3001-byte messages -> listen --raw ci16 --scale 0.25: run's file bit for bit ($(tail -c 300 "$tmp/r2.err"))" \
    '[ $st -eq 0 ] && "$tools/h5same" "$tmp/r2.h5" "$tmp/run.h5" /weights /detections /axes/input_cpi > /dev/null'

# a message longer than --zmq-max-message: raw framing lost, listen ends with an error, no file
raw_send cf32 0,1,2,3 70000
timeout 60 "$bin" listen --zmq "$addr" --zmq-pull --raw cf32 --zmq-max-message 65536 --shape $C,$P,$R --cpis $N \
    "${proc[@]}" -o "$tmp/r3.h5" 2> "$tmp/r3.err"
st=$?
kill "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null
check "raw: a 70000-byte message over --zmq-max-message 65536: exit 1 naming it, no file ($(tail -c 300 "$tmp/r3.err"))" \
    '[ $st -eq 1 ] && grep -q "longer than 65536 bytes" "$tmp/r3.err" && [ ! -e "$tmp/r3.h5" ]'

# ---- usage ------------------------------------------------------------------------------------
usage() { # WHAT TEXT ARGS...
    local what=$1 text=$2
    shift 2
    timeout 30 "$bin" "$@" > /dev/null 2> "$tmp/e"
    local st=$?
    check "$what: exit 2 ($(head -c 300 "$tmp/e"))" '[ $st -eq 2 ] && grep -q -- "$text" "$tmp/e"'
}
usage "listen with --vrt and --zmq" "give one of" listen --vrt udp://127.0.0.1:0 --zmq tcp://127.0.0.1:5 --shape 1,1,1 --discard
usage "listen with neither" "give one of" listen --shape 1,1,1 --discard
usage "listen --zmq to port 0" "not 0" listen --zmq tcp://127.0.0.1:0 --shape 1,1,1 --discard
usage "listen --zmq udp://" "expected tcp://HOST:PORT" listen --zmq udp://127.0.0.1:5 --shape 1,1,1 --discard
usage "listen --raw without --zmq" "with --zmq" listen --vrt udp://127.0.0.1:0 --raw cf32 --shape 1,1,1 --discard
usage "listen --raw cs8" "cf32 or ci16" listen --zmq tcp://127.0.0.1:5 --raw cs8 --shape 1,1,1 --discard
usage "listen --layout without --raw" "with --raw" listen --zmq tcp://127.0.0.1:5 --layout P,R,C --shape 1,1,1 --discard
usage "send with --vrt and --zmq" "give one of" send --input "$tmp/rec.h5" --vrt udp://127.0.0.1:9 --zmq tcp://127.0.0.1:0 --rate 1
timeout 30 "$bin" send --input "$tmp/rec.h5" --zmq tcp://127.0.0.1:0 --rate 40 --wait-subscriber 0.2 > /dev/null 2> "$tmp/e"
check "send --zmq with no subscriber: exit 1 after --wait-subscriber" '[ $? -eq 1 ] && grep -q "no subscriber" "$tmp/e"'

[ $fail -eq 0 ] && echo "cli_listen_zmq: all checks passed"
exit $fail
