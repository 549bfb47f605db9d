#!/usr/bin/env bash
# cli_size_limit: a file size limit (ulimit -f, RLIMIT_FSIZE) at any size ends a writer with
# exit 1 and "File too large", no temporary left, nothing published (issue 43, row 1).
# Before the fix, SIGXFSZ killed rtstap (shell status 153) at limits under 64 kB and, for
# gen --cpis 8, at 2-6 MB, leaving a .NAME.tmp.* temporary; with SIGXFSZ ignored, HDF5's
# failed write crashed libhdf5 1.10.8 at exit (SIGSEGV) unless the limit is checked before
# every write.
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
# a limit with room to spare: both written
(ulimit -f $((64 * 1024)); "$bin" "${gen8[@]}" -o "$tmp/out/g.h5" &&
    exec "$bin" run --input "$tmp/one.h5" -o "$tmp/out/o.h5" "${easy[@]}") 2> "$tmp/err"
rc=$?
check "ulimit -f 65536: gen and run write (rc $rc: $(head -c 200 "$tmp/err"))" \
    '[ $rc -eq 0 ] && [ -s "$tmp/out/g.h5" ] && [ -s "$tmp/out/o.h5" ]'
exit $fail
