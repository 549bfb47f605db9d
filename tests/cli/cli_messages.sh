#!/usr/bin/env bash
# cli_messages: the library's messages name parameters as the C API spells them
# (stap_config.training, stap_cfar_config.pfa, scene_config.targets[0]); the command line
# shows its flags in their place (app/cli.c, cli_flag_names). Each case makes the library
# refuse a value the option parser lets through, and the message must name the flag and
# no C field. Env: RTSTAP_BIN (the rtstap binary).
set -u
B=${RTSTAP_BIN:?RTSTAP_BIN must name the rtstap binary}
T=$(mktemp -d "${TMPDIR:-/tmp}/rtstap_cli_messages.XXXXXX")
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# says STATUS TEXT CMD...: exit status STATUS, TEXT on stderr, no C parameter name there
says() {
    local want=$1 text=$2
    shift 2
    "$@" >"$T/out" 2>"$T/err"
    local got=$?
    [ "$got" = "$want" ] || fail "'$*' exited $got, expected $want: $(head -c 400 "$T/err")"
    grep -qF -- "$text" "$T/err" || fail "'$*': stderr lacks '$text': $(head -c 400 "$T/err")"
    if grep -Eq "(stap_config|stap_cfar_config|scene_config)\." "$T/err"; then
        fail "'$*': stderr names a C field: $(head -c 400 "$T/err")"
    fi
}

scene=(gen --preset ward --channels 4 --pulses 8 --quiet)
says 2 "--target 1: range cell 60 outside 0..39" \
    "$B" "${scene[@]}" --range-gates 40 --target 60:0:10:5 --target 5:0:10:5 --out "$T/a.h5"
says 2 "--target 2: range cell 60 outside 0..39" \
    "$B" "${scene[@]}" --range-gates 40 --target 5:0:10:5 --target 60:0:10:5 --out "$T/a.h5"
says 2 "--slant-range (4000 m) must exceed the altitude (5000 m)" \
    "$B" "${scene[@]}" --range-gates 40 --altitude 5000 --slant-range 4000 --out "$T/a.h5"

run=(run --preset easy --backend cpu --quiet)
says 1 "--segments 7 must divide the 480 range gates" "$B" "${run[@]}" --segments 7 --output "$T/b.h5"
says 1 "use --training >= 16 or --loading > 0" "$B" "${run[@]}" --training 10 --output "$T/b.h5"
says 1 "--cfar-rank 9 must be between 1 and 2 x --cfar-train = 8" \
    "$B" "${run[@]}" --cfar os --cfar-train 4 --cfar-rank 9 --output "$T/b.h5"
says 1 "(2 x (--cfar-guard-doppler 40 + --cfar-train-doppler 30) + 1 = 141 bins) is longer than" \
    "$B" "${run[@]}" --cfar ca2d --cfar-guard-doppler 40 --cfar-train-doppler 30 --output "$T/b.h5"
says 2 "unknown CFAR kind 'xx' (expected none, ca, os, go, so or ca2d)" \
    "$B" "${run[@]}" --cfar xx --output "$T/b.h5"
[ ! -e "$T/b.h5" ] || fail "a refused run wrote its output"

# the default detector steps aside on a range line shorter than its window, with a note
"$B" "${scene[@]}" --range-gates 30 --out "$T/short.h5" 2>"$T/err" || fail "gen short: $(cat "$T/err")"
says 0 "no CFAR detection (CFAR window (2 x (--cfar-guard 2 + --cfar-train 16) + 1 = 37 cells)" \
    "$B" run --input "$T/short.h5" --output "$T/c.h5" --doppler-order 1 --segments 1 \
    --training 8 --beams 2 --backend cpu

[ $fails -eq 0 ] && echo "cli_messages: all passed"
exit $((fails > 0))
