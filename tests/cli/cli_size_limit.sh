#!/usr/bin/env bash
# cli_size_limit: a file size limit (ulimit -f, RLIMIT_FSIZE) at any size ends a writer with
# exit 1 and "File too large", no temporary left, nothing published (issue 43, rows 1-2).
# Before the fix, SIGXFSZ killed rtstap (shell status 153) at limits under 64 kB and, for
# gen --cpis 8, at 2-6 MB, leaving a .NAME.tmp.* temporary; with SIGXFSZ ignored, HDF5's
# failed write crashed libhdf5 1.10.8 at exit (SIGSEGV) unless the limit is checked before
# every write. plot's pictures (row 2): cairo 1.16's PDF stream lost its write error (exit 0
# with a truncated range_doppler.pdf), and a set of which one failed was published in part
# (angle_doppler.pdf, truncated at that); now each limit gives either every picture whole
# (exit 0) or exit 1 with "File too large" and none published, in every format.
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
easy=(--preset easy --segments 1 --training 24 --doppler-order 1 --beams 4 --backend cpu --quiet)
"$bin" gen --preset easy -o "$tmp/one.h5" --quiet || { echo "FAIL: gen"; exit 1; }
mkdir "$tmp/out"
# nothing in the output directory but what a test put there
left() { ls -A "$tmp/out"; }
# under `ulimit -f KB`, the command writing OUT: exit 1, "File too large", nothing left
limited() { # KB OUT WHAT ARGS...
    local kb=$1 out=$2 what=$3 rc
    shift 3
    (ulimit -f "$kb"; exec "$bin" "$@" -o "$tmp/out/$out") 2> "$tmp/err"
    rc=$?
    check "$what, ulimit -f $kb: exit 1 with 'File too large' (rc $rc: $(head -c 200 "$tmp/err"))" \
        '[ $rc -eq 1 ] && grep -q "^rtstap: error: cannot write .*$out.: File too large" "$tmp/err"'
    check "$what, ulimit -f $kb: nothing left in the output directory: $(left)" '[ -z "$(left)" ]'
    rm -rf "$tmp/out" && mkdir "$tmp/out"
}
# run's output is 2 MB, gen's 16.8 MB: each limit below that
for kb in 1 4 16 64 256 1024 1536; do
    limited $kb o.h5 run run --input "$tmp/one.h5" "${easy[@]}"
done
gen8=(gen --preset easy --cpis 8 --range-gates 128 --quiet)
for kb in 1 4 16 64 256 1024 3072 6000 12000; do
    limited $kb g.h5 "gen --cpis 8" "${gen8[@]}"
done
# plot: 4 pictures of 11-250 kB each (a limit is per file)
"$bin" gen --preset ward --channels 6 --pulses 8 --range-gates 120 --seed 3 --target 61:0:75:10 \
    -o "$tmp/scene.h5" --quiet &&
    "$bin" run --input "$tmp/scene.h5" -o "$tmp/run.h5" --doppler-order 1 --segments 2 --training 60 \
        --beams 3 --backend cpu --quiet || { echo "FAIL: the plot's inputs"; exit 1; }
# whole: a PDF ends with %%EOF, an SVG with </svg>, a PNG with its IEND chunk
whole() {
    case $1 in
    *.pdf) tail -c 7 "$1" | grep -q '%%EOF' ;;
    *.svg) tail -c 8 "$1" | grep -q '</svg>' ;;
    *.png) [ "$(tail -c 12 "$1" | od -An -tx1 | tr -d ' \n')" = "0000000049454e44ae426082" ] ;;
    esac
}
for fmt in pdf svg png; do
    for kb in 1 8 16 24 32 48 64 96 128 192 256 1024; do
        (ulimit -f $kb; exec "$bin" plot --input "$tmp/scene.h5" --result "$tmp/run.h5" --format $fmt \
            --output-dir "$tmp/out" > /dev/null) 2> "$tmp/err"
        rc=$?
        pics=$(ls "$tmp/out" 2>/dev/null | wc -l) broken=""
        for f in "$tmp"/out/*."$fmt"; do [ -e "$f" ] && ! whole "$f" && broken="$broken ${f##*/}"; done
        check "plot --format $fmt, ulimit -f $kb: every picture whole, or none (rc $rc, $pics published, broken:$broken; $(head -c 200 "$tmp/err"))" \
            '[ -z "$broken" ] && { [ $rc -eq 0 ] && [ $pics -eq 4 ] ||
                { [ $rc -eq 1 ] && [ $pics -eq 0 ] && grep -q "^rtstap: error: cannot write .*: File too large" "$tmp/err"; }; }'
        check "plot --format $fmt, ulimit -f $kb: no temporary left: $(ls -A "$tmp/out" 2>/dev/null | grep '^\.')" \
            '[ -z "$(ls -A "$tmp/out" 2>/dev/null | grep "^\.")" ]'
        [ $kb = 1024 ] && check "plot --format $fmt, ulimit -f 1024: written (rc $rc)" '[ $rc -eq 0 ]'
        rm -rf "$tmp/out"
    done
done
# a limit with room to spare: both written
mkdir -p "$tmp/out"
(ulimit -f $((64 * 1024)); "$bin" "${gen8[@]}" -o "$tmp/out/g.h5" &&
    exec "$bin" run --input "$tmp/one.h5" -o "$tmp/out/o.h5" "${easy[@]}") 2> "$tmp/err"
rc=$?
check "ulimit -f 65536: gen and run write (rc $rc: $(head -c 200 "$tmp/err"))" \
    '[ $rc -eq 0 ] && [ -s "$tmp/out/g.h5" ] && [ -s "$tmp/out/o.h5" ]'
exit $fail
