#!/usr/bin/env bash
# cli_send: `rtstap send` against a receiver written from docs/live.md alone
# (tests/cli/vrt_receive.py: Python's socket and struct, nothing of rtstap), over
# 127.0.0.1 (issue 45). A recording of int16 samples (mkraw, imported as complex64 whole
# numbers, and the same samples stored as int16 in another axis order) arrives bit for bit:
# the receiver's cube is the raw file. No packet arrives before its time (kernel
# timestamps: the packets are paced, not sent in bursts), and the rate achieved is never
# above the rate asked. A generated complex64 recording goes with the scale send names
# (its largest component as +-32767) and a context packet carrying the carrier. With
# --loss and --loop the receiver finds exactly the incomplete CPIs send named, and the
# complete ones equal to the recording. Usage errors exit 2, a missing input 1.
# Timing is never bounded from above: the rates are low and only "not early" is checked.
# env: RTSTAP_BIN, RTSTAP_TOOLS_DIR (mkraw, relayout).
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
tools=${RTSTAP_TOOLS_DIR:-$(dirname "$bin")/tests}
mkraw=$tools/mkraw
relayout=$tools/relayout
for t in "$mkraw" "$relayout"; do
    [ -x "$t" ] || { echo "cli_send: $t not built"; exit 77; }
done
python3 -c 'import socket, struct, json' 2>/dev/null || { echo "cli_send: no python3"; exit 77; }
recv=$(cd "$(dirname "$0")" && pwd)/vrt_receive.py
tmp=$(mktemp -d)
rpid=
trap '[ -n "$rpid" ] && kill "$rpid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
# fields of a JSON file by a Python expression on d (a tuple: its items separated by spaces)
jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=eval(sys.argv[2]); print(*(v if isinstance(v, tuple) else (v,)))' "$1" "$2"; }
C=2 P=4 R=24 N=4

# start the receiver (NAME CPIS [QUIET]): its port in $port
receive() {
    rm -f "$tmp/$1.port"
    python3 "$recv" "$tmp/$1.port" $C $P $R "$2" "$tmp/$1.bin" "$tmp/$1.json" "${3:-3}" 300 &
    rpid=$!
    for _ in $(seq 600); do [ -s "$tmp/$1.port" ] && break; sleep 0.1; done
    port=$(cat "$tmp/$1.port" 2>/dev/null)
    [ -n "$port" ] || { echo "FAIL: the receiver did not start"; exit 1; }
}
received() { wait "$rpid"; rpid=; }

# ---- int16 samples, bit for bit -------------------------------------------------------------
"$mkraw" ci16_le $C,$P,$R,$N C,P,R 7 "$tmp/raw.bin" "$tmp/ref.h5" > /dev/null
"$bin" import-raw --input "$tmp/raw.bin" --shape $C,$P,$R,$N --type ci16_le --output "$tmp/rec.h5" \
    --progress none > /dev/null
"$bin" import-raw --input "$tmp/raw.bin" --shape $C,$P,$R,$N --type ci16_le --scale 0.00390625 \
    --output "$tmp/rec256.h5" --progress none > /dev/null
"$relayout" "$tmp/rec256.h5" "$tmp/i16.h5" P,R,C ds i16 # int16 (cpi, P, R, C, iq), scale 1/256

receive a $N
"$bin" send --input "$tmp/rec.h5" --vrt "udp://127.0.0.1:$port" --rate 4 --gates-per-packet 5 \
    --json "$tmp/sa.json" > "$tmp/sa.out" 2> "$tmp/err"
check "send of complex64 whole numbers: exit 0" '[ $? -eq 0 ] && [ ! -s "$tmp/err" ]'
received
check "... the receiver's cube is the raw file, bit for bit" 'cmp -s "$tmp/raw.bin" "$tmp/a.bin"'
check "... every CPI complete, nothing malformed" \
    '[ "$(jget "$tmp/a.json" "d[\"complete\"], sorted(d[\"kinds\"])")" = "[0, 1, 2, 3] ['"'"'data'"'"']" ]'
check "... sent with scale 1, exactly" \
    '[ "$(jget "$tmp/sa.json" "d[\"scale\"], d[\"samples_as_stored\"], d[\"cpis\"], d[\"packets\"], d[\"packets_per_cpi\"]")" = "1 False 4 160 40" ] &&
     grep -q "samples: complex64 .* as int16: whole numbers, exact (scale 1)" "$tmp/sa.out"'
check "... the rate achieved is at most the rate asked, and the time at least 4 periods" \
    '[ "$(jget "$tmp/sa.json" "0 < d[\"rate_achieved\"] <= 4 * (1 + 1e-9) and d[\"elapsed_s\"] >= 1 - 1e-6")" = True ]'
# packet j of the 160 is due j/160 s after the first: none arrives more than 0.1 s early (a
# whole CPI in a burst would be 0.25 s early; the first packet itself may be late under load)
check "... paced: no packet arrived before its time (kernel timestamps)" \
    '[ "$(jget "$tmp/a.json" "len(d[\"arrivals\"]) == 160 and all(t - d[\"arrivals\"][0] >= j / 160.0 - 0.1 for j, t in enumerate(d[\"arrivals\"]))")" = True ]'

receive b $N
"$bin" send --input "$tmp/i16.h5" --vrt "udp://127.0.0.1:$port" --rate 8 --json - > "$tmp/sb.json" 2> "$tmp/sb.out"
check "send of an int16 recording (P, R, C, scale 1/256): exit 0" '[ $? -eq 0 ]'
received
check "... the integers as stored, bit for bit" 'cmp -s "$tmp/raw.bin" "$tmp/b.bin"'
check "... its scale named; default packets of all R gates" \
    '[ "$(jget "$tmp/sb.json" "d[\"scale\"], d[\"samples_as_stored\"], d[\"gates_per_packet\"], d[\"packets_per_cpi\"]")" = "0.00390625 True 24 8" ] &&
     grep -q "samples: int16.*the integers as stored (a sample is 0.00390625 x v)" "$tmp/sb.out"'

# ---- complex64 of any values: the scale chosen, a context packet ----------------------------
"$bin" gen --channels $C --pulses $P --range-gates $R --cpis 2 --patches 8 --seed 3 \
    --output "$tmp/gen.h5" --quiet
receive g 2
"$bin" send --input "$tmp/gen.h5" --vrt "udp://127.0.0.1:$port" --rate 8 --gates-per-packet 7 \
    --json "$tmp/sg.json" > "$tmp/sg.out"
check "send of a generated complex64 recording: exit 0" '[ $? -eq 0 ]'
received
check "... both CPIs complete, a context packet each carrying the carrier" \
    '[ "$(jget "$tmp/g.json" "d[\"complete\"], d[\"kinds\"].get(\"context\"), d[\"context\"].get(\"rf\")")" = "[0, 1] 2 450000000.0" ]'
check "... its scale named, the largest component sent as +-32767" \
    '[ "$(python3 -c "import struct,sys; b=open(sys.argv[1],\"rb\").read(); print(max(abs(v) for v in struct.unpack(\"<%dh\" % (len(b) // 2), b)))" "$tmp/g.bin")" = 32767 ] &&
     [ "$(jget "$tmp/sg.json" "d[\"scale\"] > 0 and not d[\"samples_as_stored\"] and d[\"context_packets\"]")" = True ] &&
     grep -q "as int16, rounded (a sample is [0-9.e-]* x v)" "$tmp/sg.out"'

# ---- --loss and --loop: exactly the CPIs send named -----------------------------------------
receive l 8 4
"$bin" send --input "$tmp/rec.h5" --vrt "udp://127.0.0.1:$port" --rate 8 --gates-per-packet 3 \
    --loop 2 --loss 0.01 --seed 4 --json "$tmp/sl.json" > "$tmp/sl.out"
check "send --loss --loop: exit 0" '[ $? -eq 0 ]'
received
sent=$(jget "$tmp/sl.json" 'd["incomplete_cpis"]')
got=$(jget "$tmp/l.json" 'd["incomplete"]')
check "... the receiver finds exactly the incomplete CPIs send named ($sent; found $got)" \
    '[ "$sent" = "$got" ] && [ "$sent" != "[]" ] && [ "$(jget "$tmp/sl.json" "len(d[\"incomplete_cpis\"]) < 8 and d[\"cpis\"] == 8 and d[\"packets_dropped\"] > 0")" = True ]'
check "... the report lists them" 'grep -q "CPIs made incomplete: $(echo "$sent" | tr -d "[],")\$" "$tmp/sl.out"'
check "... every complete CPI equals the recording's (pass 2 numbered on)" \
    '[ "$(python3 -c "
import json, sys
raw = open(sys.argv[1], \"rb\").read(); got = open(sys.argv[2], \"rb\").read()
n = len(raw) // 4
print(all(got[k * n:(k + 1) * n] == raw[(k % 4) * n:(k % 4 + 1) * n] for k in json.load(open(sys.argv[3]))[\"complete\"]))
" "$tmp/raw.bin" "$tmp/l.bin" "$tmp/l.json")" = True ]'

# ---- errors ---------------------------------------------------------------------------------
"$bin" send -h > "$tmp/h" 2>&1
check "send -h: exit 0, a usage within 90 columns" \
    '[ $? -eq 0 ] && head -1 "$tmp/h" | grep -q "^usage: rtstap send " && [ "$(awk "length > 90" "$tmp/h" | wc -l)" -eq 0 ]'
usage() { # WHAT EXPECTED-TEXT ARGS...
    local what=$1 text=$2
    shift 2
    "$bin" send "$@" > /dev/null 2> "$tmp/e"
    check "send $what: exit 2" '[ $? -eq 2 ] && grep -q -- "$text" "$tmp/e"'
}
ok=(--input "$tmp/rec.h5" --rate 1)
usage "--vrt http://" "--vrt expects udp://HOST:PORT" "${ok[@]}" --vrt http://127.0.0.1:9
usage "--vrt without a port" "with a port 1..65535" "${ok[@]}" --vrt udp://127.0.0.1
usage "--vrt port 0" "with a port 1..65535" "${ok[@]}" --vrt udp://127.0.0.1:0
usage "--vrt [::1" "udp://HOST:PORT" "${ok[@]}" --vrt "udp://[::1:9"
usage "--rate 0" "--rate" --input "$tmp/rec.h5" --vrt udp://127.0.0.1:9 --rate 0
usage "without --rate" "send needs --rate" --input "$tmp/rec.h5" --vrt udp://127.0.0.1:9
usage "--seed without --loss" "give --loss P" "${ok[@]}" --vrt udp://127.0.0.1:9 --seed 3
usage "--loss 2" "--loss" "${ok[@]}" --vrt udp://127.0.0.1:9 --loss 2
usage "--iq-scale on int16" "applies to complex64 recordings" --input "$tmp/i16.h5" --rate 1 \
    --vrt udp://127.0.0.1:9 --iq-scale 2
"$bin" send --input "$tmp/none.h5" --vrt udp://127.0.0.1:9 --rate 1 2> "$tmp/e"
check "send of a missing input: exit 1" '[ $? -eq 1 ] && grep -q "none.h5" "$tmp/e"'
"$bin" send "${ok[@]}" --vrt udp://127.0.0.1:9 --json "$tmp/sa.json" 2> "$tmp/e"
check "send --json over an existing file without -f: exit 1" '[ $? -eq 1 ] && grep -q "already exists" "$tmp/e"'
"$bin" send "${ok[@]}" --vrt udp://127.0.0.1:9 --json "$tmp/rec.h5" -f 2> "$tmp/e"
check "send --json over its input: refused" '[ $? -ne 0 ] && [ -s "$tmp/rec.h5" ] && cmp -s <("$bin" info "$tmp/rec.h5" 2>&1 | head -1) <(echo "$tmp/rec.h5")'

# a recording with CPIs never written: the warning says what send does with the written ones
"$tools/mkpartial" recording "$tmp/gaps.h5" 4,8,48 6 1 0,1,3,5
"$bin" send --input "$tmp/gaps.h5" --vrt udp://127.0.0.1:9 --rate 50 > /dev/null 2> "$tmp/e"
check "send of a recording with gaps: exit 0, the warning names the 4 sent as stream CPIs 0, 1, ...: $(head -c 300 "$tmp/e")" \
    '[ $? -eq 0 ] && grep -qF "2 of its 6 CPIs were never written (CPI 2, 4): sending the 4 written as stream CPIs 0, 1, ... in order" "$tmp/e" && ! grep -q "axes/input_cpi" "$tmp/e"'

[ $fail -eq 0 ] && echo "cli_send: all checks passed"
exit $fail
