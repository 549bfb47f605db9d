#!/usr/bin/env bash
# cli_gnuradio: interoperability with a sender the project did not write (issue 45,
# docs/live.md "GNU Radio"): a GNU Radio flowgraph — Debian's gnuradio, a file source of the
# recording's complex64 samples into its ZMQ PUSH sink — feeds `listen --zmq --zmq-pull --raw
# cf32`, which gives the weights, detections and input CPIs of `run` over the recording it
# played, bit for bit (the CPU engine, the same options). Skipped (77) where gnuradio (its
# Python modules), h5py or ZeroMQ in the build is missing. env: RTSTAP_BIN, RTSTAP_TOOLS_DIR.
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
tools=${RTSTAP_TOOLS_DIR:-$(dirname "$bin")/tests}
py=
for p in /usr/bin/python3 python3; do
    "$p" -c "from gnuradio import gr, blocks, zeromq; import h5py, numpy" 2>/dev/null && { py=$p; break; }
done
[ -n "$py" ] || { echo "cli_gnuradio: no gnuradio (Debian: gnuradio) with h5py and numpy"; exit 77; }
[ -x "$tools/mkraw" ] && [ -x "$tools/h5same" ] || { echo "cli_gnuradio: no mkraw/h5same"; exit 77; }
tmp=$(mktemp -d)
gpid=
trap '[ -n "$gpid" ] && kill "$gpid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
timeout 30 "$bin" listen --zmq tcp://127.0.0.1:1 --shape 1,1,1 --discard --duration 0.01 2> "$tmp/e"
if grep -q "no ZeroMQ" "$tmp/e"; then echo "cli_gnuradio: this build has no ZeroMQ"; exit 77; fi
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }

# an int16 recording of whole numbers, run's file of it, and its samples as GNU Radio's
# complex64 items in (cpi, channel, pulse, range) order
. "$(dirname "$0")/live_env.sh"
live_recording 11
check "the recording and run's file of it: exit 0" '[ $? -eq 0 ]'
"$py" -c 'import h5py, sys; h5py.File(sys.argv[1], "r")["data/iq"][()].astype("<c8").tofile(sys.argv[2])' \
    "$tmp/rec.h5" "$tmp/items.cf32"

# the flowgraph: file source -> ZMQ PUSH sink (bound to a free port, named on stderr); the
# sink sends what it has once a PULL peer connects, then the flowgraph ends
timeout 120 "$py" - "$tmp/items.cf32" 2> "$tmp/gr.err" <<'EOF' &
import sys, time
from gnuradio import gr, blocks, zeromq
tb = gr.top_block()
src = blocks.file_source(gr.sizeof_gr_complex, sys.argv[1], False)
sink = zeromq.push_sink(gr.sizeof_gr_complex, 1, "tcp://127.0.0.1:*", 100, False, -1)
tb.connect(src, sink)
print("publishing on zmq+" + sink.last_endpoint(), file=sys.stderr, flush=True)
tb.run()
time.sleep(1)  # (the last messages leave)
EOF
gpid=$!
addr=$(live_bound "$tmp/gr.err")
check "the flowgraph bound its PUSH sink ($(head -c 300 "$tmp/gr.err"))" '[ -n "$addr" ]'
timeout 60 "$bin" listen --zmq "$addr" --zmq-pull --raw cf32 --shape $C,$P,$R --cpis $N "${proc[@]}" \
    -o "$tmp/gr.h5" 2> "$tmp/l.err"
st=$?
wait "$gpid"
gst=$?
gpid=
check "GNU Radio -> listen --zmq --raw cf32: exit 0 and 0, $N CPIs, none lost ($(tail -c 300 "$tmp/l.err"))" \
    '[ $st -eq 0 ] && [ $gst -eq 0 ] && grep -q "cpis: $N complete, 0 lost" "$tmp/l.err"'
check "... the weights, detections and input CPIs of run over the recording played, bit for bit" \
    '"$tools/h5same" "$tmp/gr.h5" "$tmp/run.h5" /weights /detections /axes/input_cpi > /dev/null'
ndet=$(live_detections "$tmp/gr.h5")
check "... detections there to compare ($ndet)" '[ "$ndet" -gt 0 ]'

[ $fail -eq 0 ] && echo "cli_gnuradio: all checks passed"
exit $fail
