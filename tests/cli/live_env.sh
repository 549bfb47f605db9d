# live_env.sh: what the ZeroMQ tests of live input (cli_listen_zmq.sh, cli_gnuradio.sh)
# share, sourced after bin, tools, py (a python3 with h5py and numpy) and tmp are set.

# An int16 recording of whole numbers ($tmp/rec.h5, C x P x R, N CPIs, mkraw's seed $1) and
# run's file of it ($tmp/run.h5) with the options proc (the CPU engine, detections at Pfa 0.01)
C=4 P=8 R=96 N=4
proc=(--preset easy --backend cpu --doppler-order 1 --segments 1 --training 48 --beams 4 --cfar-pfa 0.01)
live_recording() {
    "$tools/mkraw" ci16_le $C,$P,$R,$N C,P,R "$1" "$tmp/raw.bin" "$tmp/ref.h5" > /dev/null &&
        "$bin" import-raw --input "$tmp/raw.bin" --shape $C,$P,$R,$N --type ci16_le --output "$tmp/rec.h5" \
            --progress none > /dev/null &&
        "$bin" run --input "$tmp/rec.h5" -o "$tmp/run.h5" "${proc[@]}" --quiet
}
# the address a sender bound, from the line "publishing on zmq+tcp://..." of the file $1,
# waited for (up to 30 s: GNU Radio's start)
live_bound() {
    local a=
    for _ in $(seq 600); do
        a=$(sed -n 's/.*publishing on zmq+\(tcp:\/\/127\.0\.0\.1:[0-9]*\).*/\1/p' "$1")
        [ -n "$a" ] && break
        sleep 0.05
    done
    echo "$a"
}
# the detections of a result file
live_detections() {
    "$py" -c 'import h5py, sys; print(h5py.File(sys.argv[1], "r")["detections"].shape[0])' "$1"
}
