#!/usr/bin/env bash
# cli_never_destroy: a user's data is never destroyed, a full disk never crashes rtstap, and
# data never written is never a sample (issue 29). Each part failed before its fix:
#  - an output that is an input (the same path, through dir/.., a symbolic or a hard link; a
#    SigMF data file; a PERFECT input; plot's pictures), or two outputs naming one file:
#    exit 2 naming both options, even with -f, the input's bytes unchanged;
#  - a full disk (a small tmpfs: mounted as root, or inside `unshare -rm` when user
#    namespaces allow; otherwise RLIMIT_FSIZE, whose writes fail with "File too large"):
#    run, a recording's run, gen, gen --cpis, import-raw, import-sigmf, stream --json and
#    --timeline end with exit 1 and one line naming the output and the system's words; an
#    existing output replaced with -f stays as it was; no temporary is left (the suite's
#    invariants, app/cli_files.h, check the rest of every run: no HDF5 object open, inputs
#    unchanged, exit status);
#  - unwritten data: a 10^6-CPI recording with one CPI written runs that CPI (in seconds,
#    not minutes), warns with the count and the first unwritten, --strict refuses it; a
#    recording with gaps records each row's input CPI; a one-CPI cube of unwritten chunks
#    is refused at open in under a second;
#  - stream --input meeting a corrupt chunk mid-recording: exit 1, one error line, nothing
#    else on stderr;
#  - a device fault mid-recording (RTSTAP_TEST_FAIL_ENGINE): --backend auto moves to the
#    CPU and writes what a clean run writes; a named backend publishes the CPIs before the
#    fault with /config stopped and exits 1;
#  - the damaged-header regression file, --sub-cpi's, --threads 0's and --cfar-rank 0's
#    messages, a NUL inside a 'dims' label.
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
tools=${RTSTAP_TOOLS_DIR:-$(dirname "$bin")/tests}
same=$tools/h5same
shape=$tools/h5shape
attr=$tools/h5attr
mkpartial=$tools/mkpartial
src=${RTSTAP_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
fail=0
if [ "${1:-}" = --diskfull-only ]; then # the full-disk part inside a user namespace (below)
    small=$2
    tmp=$3
    inner=1
else
    tmp=$(mktemp -d)
    small=$tmp/small
    inner=0
fi
# every rtstap command of this test runs under a time limit: a command that hangs (a full
# disk, a device fault and a corrupt chunk all stop threads) fails here by name, at once,
# instead of holding CTest's whole --timeout with nothing said (CI, 2026-12-03: this test
# ran out its 900 s after "full disk by tmpfs" on a machine where it could not be repeated)
real_bin=$bin
bin=$tmp/rtstap-timed-$$
step_limit=${RTSTAP_TEST_STEP_TIMEOUT:-300}
cat > "$bin" <<EOF
#!/usr/bin/env bash
timeout -k 10 $step_limit "$real_bin" "\$@"
rc=\$?
if [ \$rc -eq 124 ] || [ \$rc -eq 137 ]; then
    echo "FAIL: rtstap \$* did not end in $step_limit s (killed)" >> "$tmp/hung.log"
fi
exit \$rc
EOF
chmod +x "$bin"
mounted=0
cleanup() {
    [ -s "$tmp/hung.log" ] && [ $inner = 0 ] && cat "$tmp/hung.log"
    [ $mounted = 1 ] && umount "$small" 2>/dev/null
    [ $inner = 1 ] || rm -rf "$tmp"
}
trap cleanup EXIT
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
sum() { md5sum < "$1"; }
# the command's stderr has exactly one line, the error, containing each word
one_error() { # FILE WORDS...
    local f=$1 w
    shift
    [ "$(wc -l < "$f")" -eq 1 ] && grep -q '^rtstap: error: ' "$f" || return 1
    for w in "$@"; do grep -qF -- "$w" "$f" || return 1; done
}
easy=(--preset easy --segments 1 --training 24 --doppler-order 1 --beams 4 --backend cpu --quiet)

diskfull_part() { # runs where $small holds 8 MiB (or under a 8 MiB file size limit)
    local words="No space left on device"
    [ "$fs_mode" = rlimit ] && words="File too large"
    local out=$small
    full() { # NAME OUTPUT ARGS...: exit 1, one line naming OUTPUT and the system's words
        local name=$1 o=$2
        shift 2
        "$bin" "$@" > /dev/null 2> "$tmp/err"
        local rc=$?
        check "full disk, $name: exit 1 (got $rc)" '[ $rc -eq 1 ]'
        check "full disk, $name: one line naming the output and '$words': $(head -c 300 "$tmp/err")" \
            'one_error "$tmp/err" "$o" "$words"'
        check "full disk, $name: no temporary left" '[ -z "$(ls -A "$out" | grep "\.tmp\.")" ]'
    }
    # one CPI of the hard preset (about 9.5 MB of results): the old file, replaced with -f,
    # stays as it was
    echo "the old results" > "$out/hard.h5"
    full "run, hard" "$out/hard.h5" run --preset hard --output "$out/hard.h5" -f --backend cpu --quiet
    check "full disk, run -f: the old file is intact" '[ "$(cat "$out/hard.h5")" = "the old results" ]'
    rm -f "$out/hard.h5"
    full "gen, hard" "$out/g.h5" gen --preset hard --output "$out/g.h5" --quiet
    full "gen --cpis" "$out/gc.h5" gen --preset easy --cpis 4 --output "$out/gc.h5" --quiet
    full "a recording's run" "$out/rr.h5" run --input "$tmp/big.h5" --output "$out/rr.h5" \
        --keep-output --backend cpu --quiet
    full "import-raw, a recording" "$out/raw.h5" import-raw --input "$tmp/raw3.bin" \
        --shape 22,128,480,3 --type ci16_le --output "$out/raw.h5"
    full "import-sigmf" "$out/sig.h5" import-sigmf --meta "$tmp/z.sigmf-meta" --pulses 128 \
        --range-gates 480 --output "$out/sig.h5"
    # the small writers, on a disk filled to the last block (a file size limit has no
    # such state: those need a file system)
    if [ "$fs_mode" = rlimit ]; then
        echo "cli_never_destroy: under RLIMIT_FSIZE the small writers on a full disk (stream --json, --timeline, run --json) are not run"
        return
    fi
    head -c $((8 << 20)) /dev/zero > "$out/filler" 2>/dev/null
    full "stream --json" "$out/s.json" stream --preset easy --cpis 4 --backend cpu --json "$out/s.json" --quiet
    full "stream --timeline" "$out/t.csv" stream --preset easy --cpis 4 --backend cpu --timeline "$out/t.csv" --quiet
    full "run --json" "$out/r.json" run --input "$tmp/in.h5" --output "$tmp/r_ok.h5" --json "$out/r.json" -f "${easy[@]}"
    rm -f "$out/filler"
}
# the full-disk part's inputs (made before any limit)
diskfull_inputs() {
    "$bin" gen --preset easy --cpis 3 --out "$tmp/big.h5" -f --quiet
    head -c $((22 * 128 * 480 * 4 * 3)) /dev/zero > "$tmp/raw3.bin"
    cp "$tmp/raw3.bin" "$tmp/z.sigmf-data"
    printf '{"global": {"core:datatype": "ci16_le", "core:num_channels": 22}}' > "$tmp/z.sigmf-meta"
}
if [ $inner = 1 ]; then
    fs_mode=namespace
    diskfull_part
    [ -s "$tmp/hung.log" ] && fail=1
    exit $fail
fi

# ---- inputs -------------------------------------------------------------------------------
"$bin" gen --preset easy --channels 4 --pulses 8 --range-gates 48 --cpis 4 --seed 3 \
    --out "$tmp/rec.h5" --quiet
"$bin" gen --preset easy --channels 4 --pulses 8 --range-gates 48 --seed 3 --out "$tmp/in.h5" --quiet
check "inputs made" '[ -s "$tmp/rec.h5" ] && [ -s "$tmp/in.h5" ]'

# ---- no output is an input --------------------------------------------------------------
refuse() { # NAME FILE-THAT-MUST-NOT-CHANGE WORDS... -- ARGS...
    local name=$1 keep=$2 before words=()
    shift 2
    while [ "$1" != -- ]; do words+=("$1"); shift; done
    shift
    before=$(sum "$keep")
    "$bin" "$@" > /dev/null 2> "$tmp/err"
    local rc=$?
    check "$name: exit 2 (got $rc)" '[ $rc -eq 2 ]'
    check "$name: one error naming ${words[*]}: $(head -c 300 "$tmp/err")" 'one_error "$tmp/err" "${words[@]}"'
    check "$name: the input is unchanged" '[ "$(sum "$keep")" = "$before" ]'
}
refuse "run -o input -f" "$tmp/in.h5" "--output '$tmp/in.h5' is the input --input" "not even with -f" -- \
    run --input "$tmp/in.h5" --output "$tmp/in.h5" -f "${easy[@]}"
mkdir -p "$tmp/dir"
refuse "run -o dir/../input -f" "$tmp/in.h5" "--output '$tmp/dir/../in.h5'" "(the same file)" -- \
    run --input "$tmp/in.h5" --output "$tmp/dir/../in.h5" -f "${easy[@]}"
refuse "run --json input -f" "$tmp/in.h5" "--json '$tmp/in.h5' is the input --input" -- \
    run --input "$tmp/in.h5" --output "$tmp/o.h5" --json "$tmp/in.h5" -f "${easy[@]}"
ln -s "$tmp/in.h5" "$tmp/link.h5"
ln "$tmp/in.h5" "$tmp/hard.h5"
refuse "run through a symbolic link" "$tmp/in.h5" "--output '$tmp/link.h5'" -- \
    run --input "$tmp/in.h5" --output "$tmp/link.h5" -f "${easy[@]}"
refuse "run through a hard link" "$tmp/in.h5" "--output '$tmp/hard.h5'" "(the same file)" -- \
    run --input "$tmp/link.h5" --output "$tmp/hard.h5" -f "${easy[@]}"
refuse "recording: run -o input -f" "$tmp/rec.h5" "--output '$tmp/rec.h5' is the input" -- \
    run --input "$tmp/rec.h5" --output "$tmp/rec.h5" -f "${easy[@]}"
refuse "stream --timeline input" "$tmp/rec.h5" "--timeline '$tmp/rec.h5' is the input --input" -- \
    stream --input "$tmp/rec.h5" --timeline "$tmp/rec.h5" -f --preset easy --backend cpu --quiet
refuse "two outputs, one file" "$tmp/in.h5" "--output '$tmp/x.h5' and --json '$tmp/x.h5' name the same file" -- \
    run --input "$tmp/in.h5" --output "$tmp/x.h5" --json "$tmp/x.h5" "${easy[@]}"
check "two outputs: nothing written" '[ ! -e "$tmp/x.h5" ]'
head -c $((4 * 8 * 48 * 4)) /dev/urandom > "$tmp/r.bin"
refuse "import-raw --output input -f" "$tmp/r.bin" "--output '$tmp/r.bin' is the input --input" -- \
    import-raw --input "$tmp/r.bin" --shape 4,8,48 --type ci16_le --output "$tmp/r.bin" -f
cp "$tmp/r.bin" "$tmp/s.sigmf-data"
printf '{"global": {"core:datatype": "ci16_le", "core:num_channels": 4}}' > "$tmp/s.sigmf-meta"
refuse "import-sigmf --output its data file -f" "$tmp/s.sigmf-data" \
    "--output '$tmp/s.sigmf-data' is the input the data file of --meta" -- \
    import-sigmf --meta "$tmp/s.sigmf-meta" --pulses 8 --range-gates 48 --output "$tmp/s.sigmf-data" -f
refuse "import-sigmf --output its metadata -f" "$tmp/s.sigmf-meta" "is the input --meta" -- \
    import-sigmf --meta "$tmp/s.sigmf-meta" --pulses 8 --range-gates 48 --output "$tmp/s.sigmf-meta" -f
if [ -f "$src/datasets/perfect/small_app_input.bin" ]; then
    mkdir -p "$tmp/perfect"
    cp "$src"/datasets/perfect/small_app_*.bin "$tmp/perfect/"
    refuse "perfect --output its input file -f" "$tmp/perfect/small_app_input.bin" \
        "--output '$tmp/perfect/small_app_input.bin' is the input --input-dir" -- \
        perfect --size small --input-dir "$tmp/perfect" --output "$tmp/perfect/small_app_input.bin" -f --backend cpu --quiet
fi
mkdir -p "$tmp/pics"
cp "$tmp/in.h5" "$tmp/pics/range_doppler.png"
refuse "plot over its input" "$tmp/pics/range_doppler.png" \
    "--output-dir '$tmp/pics/range_doppler.png' is the input --input" -- \
    plot --input "$tmp/pics/range_doppler.png" --output-dir "$tmp/pics" -f

# ---- a full disk ----------------------------------------------------------------------------
# a small tmpfs: as root, mounted here; else inside a user and mount namespace (the whole
# part runs in it); else RLIMIT_FSIZE (writes past the size fail with EFBIG, "File too
# large": the same paths, a file system's own ENOSPC not exercised)
mkdir -p "$small"
fs_mode=""
force=${RTSTAP_TEST_FULLDISK:-} # tmpfs, namespace or rlimit: one way, to test each
if [ "$force" = rlimit ]; then
    fs_mode=rlimit
elif [ "$force" != namespace ] && [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=8m tmpfs "$small" 2>/dev/null; then
    mounted=1
    fs_mode=tmpfs
elif [ -z "${RTSTAP_IN_NAMESPACE:-}" ] && unshare -rm true 2>/dev/null; then
    fs_mode=namespace
else
    fs_mode=rlimit
fi
echo "cli_never_destroy: full disk by $fs_mode"
diskfull_inputs
if [ $fs_mode = namespace ]; then
    # the whole part again, inside the namespace, where this script mounts its tmpfs
    RTSTAP_IN_NAMESPACE=1 unshare -rm bash -c '
        mount -t tmpfs -o size=8m tmpfs "$1" && exec bash "$2" --diskfull-only "$1" "$3"' \
        _ "$small" "$0" "$tmp" > "$tmp/ns.log" 2>&1
    rc=$?
    cat "$tmp/ns.log"
    check "full disk in a user namespace (exit $rc)" '[ $rc -eq 0 ]'
elif [ $fs_mode = rlimit ]; then
    # 8 MiB per file; SIGXFSZ ignored, so that a write past it fails with EFBIG
    ( ulimit -f $((8 * 1024)); trap '' XFSZ; diskfull_part; exit $fail )
    [ $? -eq 0 ] || fail=1
else
    diskfull_part
fi

# ---- unwritten data ---------------------------------------------------------------------
# 10^6 CPIs declared, CPI 0 written (40 KB): the written CPI runs, nothing else is read
"$mkpartial" recording "$tmp/sparse.h5" 4,8,48 1000000 1 0
start=$(date +%s%N)
timeout 60 "$bin" run --input "$tmp/sparse.h5" --output "$tmp/sparse_out.h5" "${easy[@]}" --loading 0.1 2> "$tmp/err"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
check "10^6 declared, 1 written: exit 0 in seconds (rc $rc, ${ms} ms)" '[ $rc -eq 0 ] && [ $ms -lt 20000 ]'
check "10^6 declared, 1 written: warns with the count and the first unwritten CPIs" \
    'grep -qF "999999 of its 1000000 CPIs were never written (CPI 1, 2, 3, 4, 5, 6, 7, 8, ...)" "$tmp/err"'
check "10^6 declared, 1 written: one result row" \
    '[ "$("$shape" "$tmp/sparse_out.h5" /weights | cut -d" " -f2 | cut -dx -f1)" = 1 ]'
check "10^6 declared, 1 written: /config cpis_unwritten 999999" \
    '[ "$("$attr" "$tmp/sparse_out.h5" /config cpis_unwritten)" = "cpis_unwritten 999999" ]'
"$bin" run --input "$tmp/sparse.h5" --output "$tmp/sparse_strict.h5" "${easy[@]}" --loading 0.1 --strict 2> "$tmp/err"
rc=$?
check "--strict refuses unwritten CPIs (rc $rc)" \
    '[ $rc -eq 1 ] && one_error "$tmp/err" "999999 of its 1000000 CPIs were never written" "--strict" && [ ! -e "$tmp/sparse_strict.h5" ]'
# gaps: CPIs 0, 1, 3, 5 of 6 written; each row says which CPI it is
"$mkpartial" recording "$tmp/gaps.h5" 4,8,48 6 1 0,1,3,5
"$bin" run --input "$tmp/gaps.h5" --output "$tmp/gaps_out.h5" "${easy[@]}" --loading 0.1 2> "$tmp/err"
check "gaps: exit 0, the unwritten CPIs named" '[ $? -eq 0 ] && grep -qF "2 of its 6 CPIs were never written (CPI 2, 4)" "$tmp/err"'
check "gaps: /axes/input_cpi is 0 1 3 5, /config cpis 4" \
    '[ "$("$mkpartial" ints "$tmp/gaps_out.h5" /axes/input_cpi)" = "0 1 3 5" ] && [ "$("$attr" "$tmp/gaps_out.h5" /config cpis)" = "cpis 4" ]'
# the same CPIs of a complete recording give the same results (the rows are the right CPIs)
"$mkpartial" recording "$tmp/whole.h5" 4,8,48 6 1 all
"$bin" run --input "$tmp/whole.h5" --output "$tmp/whole_out.h5" "${easy[@]}" --loading 0.1 2>/dev/null
"$shape" "$tmp/whole_out.h5" --detections | awk '$1 == 0 || $1 == 1 || $1 == 3 || $1 == 5' > "$tmp/whole.det"
"$shape" "$tmp/gaps_out.h5" --detections > "$tmp/gaps.det"
check "gaps: the detections of CPIs 0, 1, 3 and 5 are a complete run's, by input CPI" \
    'cmp -s "$tmp/whole.det" "$tmp/gaps.det"'
# one CPI declaring 4 GiB with nothing written: refused at open, fast
start=$(date +%s%N)
"$tools/mkfill" "$tmp/fill.h5"
"$bin" run --input "$tmp/fill.h5" --output "$tmp/fill_out.h5" --quiet 2> "$tmp/err"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
check "one CPI never written: exit 1 in under a second (rc $rc, ${ms} ms)" \
    '[ $rc -eq 1 ] && [ $ms -lt 1000 ] && one_error "$tmp/err" "was never written in full: 0 of its 512 chunks hold data"'

# ---- stream --input meets a corrupt chunk --------------------------------------------------
"$mkpartial" recording "$tmp/gz.h5" 4,8,144 6 1 all gzip
read -r off size < <("$mkpartial" chunk "$tmp/gz.h5" 3)
printf 'UUUUUUUUUUUUUUUUUUUUUUUUUUUUUUUU' | dd of="$tmp/gz.h5" bs=1 seek=$((off + 8)) conv=notrunc 2>/dev/null
for k in 1 2 3 4; do
    "$bin" stream --input "$tmp/gz.h5" --preset easy --training 24 --doppler-order 1 --backend cpu \
        --cpis 6 --quiet > /dev/null 2> "$tmp/err"
    rc=$?
    check "stream over a corrupt chunk, run $k: exit 1, one error line naming CPI 3 (rc $rc): $(head -c 300 "$tmp/err")" \
        '[ $rc -eq 1 ] && one_error "$tmp/err" "CPI 3"'
done

# ---- a device fault in the middle of a recording --------------------------------------------
"$mkpartial" recording "$tmp/rec8.h5" 4,8,48 8 1 all
"$bin" run --input "$tmp/rec8.h5" --output "$tmp/clean.h5" "${easy[@]}" --backend auto --loading 0.1
RTSTAP_TEST_FAIL_ENGINE=4 "$bin" run --input "$tmp/rec8.h5" --output "$tmp/moved.h5" "${easy[@]}" \
    --backend auto --loading 0.1 2> "$tmp/err"
rc=$?
check "device fault, auto: exit 0, said once (rc $rc)" \
    '[ $rc -eq 0 ] && [ "$(grep -c "running on the CPU from CPI 3 on" "$tmp/err")" = 1 ]'
check "device fault, auto: every CPI, what a clean run writes" \
    '"$same" "$tmp/clean.h5" "$tmp/moved.h5" /weights /detections /axes/input_cpi > /dev/null'
RTSTAP_TEST_FAIL_ENGINE=4 "$bin" run --input "$tmp/rec8.h5" --output "$tmp/stopped.h5" "${easy[@]}" \
    --loading 0.1 2> "$tmp/err"
rc=$?
check "device fault, --backend cpu: exit 1 naming the CPI and the file (rc $rc)" \
    '[ $rc -eq 1 ] && one_error "$tmp/err" "CPI 3" "the 3 CPIs before it are in $tmp/stopped.h5"'
check "device fault, --backend cpu: /config stopped, 3 CPIs" \
    '"$attr" "$tmp/stopped.h5" /config stopped cpis | grep -q "by a device fault at input CPI 3, after 3 of the 8" && [ "$("$attr" "$tmp/stopped.h5" /config cpis)" = "cpis 3" ]'
"$shape" "$tmp/clean.h5" --detections | awk '$1 < 3' > "$tmp/clean3.det"
"$shape" "$tmp/stopped.h5" --detections > "$tmp/stopped.det"
check "device fault, --backend cpu: the 3 CPIs are a clean run's" 'cmp -s "$tmp/clean3.det" "$tmp/stopped.det"'
# run --devices (issue 43): a device fault names the input's CPI — in the error and in /config
# stopped — not the engine's, and the other engines finish the CPIs before it, those in
# flight included: the file holds exactly the rows before the faulting one. Two CPU engines
# (RTSTAP_TEST_DEVICES_CPU=1: CPI g on engine g mod 2), a recording whose CPIs 4 and 5 were
# never written (row r is input CPI r, from row 4 on r + 2), the K-th collect of the process
# failing (whose engine's it is, the threads decide: each K is checked for consistency)
"$mkpartial" recording "$tmp/rec16.h5" 4,8,48 16 1 0-3,6-15
for K in 5 8 11; do
    RTSTAP_TEST_DEVICES_CPU=1 RTSTAP_TEST_FAIL_ENGINE=$K "$bin" run --input "$tmp/rec16.h5" \
        --output "$tmp/devf$K.h5" "${easy[@]}" --loading 0.1 --devices 0,1 2> "$tmp/err"
    rc=$?
    x=$(sed -n 's/^rtstap: error: .*: device -[12]: CPI \([0-9]*\): injected device fault.*/\1/p' "$tmp/err")
    row=$((${x:-0} < 4 ? ${x:-0} : ${x:-0} - 2))
    before=$(echo 0 1 2 3 6 7 8 9 10 11 12 13 14 15 | cut -d" " -f"1-$((row > 0 ? row : 1))")
    [ "$row" -gt 0 ] || before=
    check "--devices, fault at collect $K: exit 1, one error naming the input's CPI $x and its $row rows (rc $rc)" \
        '[ $rc -eq 1 ] && [ -n "$x" ] && [ "$x" != 4 ] && [ "$x" != 5 ] && [ "$(grep -c "^rtstap: error: " "$tmp/err")" = 1 ] &&
         grep -qF "the $row CPIs before it are in $tmp/devf$K.h5" "$tmp/err" || { cat "$tmp/err"; false; }'
    check "--devices, fault at collect $K: /config stopped at input CPI $x after $row rows, /config cpis $row" \
        '"$attr" "$tmp/devf$K.h5" /config stopped | grep -q "by a device fault at input CPI $x, after $row of the 14 written CPIs: device -[12]: CPI $x: injected" &&
         [ "$("$attr" "$tmp/devf$K.h5" /config cpis)" = "cpis $row" ]'
    check "--devices, fault at collect $K: the rows are every CPI before it, in order (the healthy engine's in flight too)" \
        '[ "$("$mkpartial" ints "$tmp/devf$K.h5" /axes/input_cpi)" = "$before" ]'
done

# ---- messages -------------------------------------------------------------------------------
"$bin" run --preset hard --algorithm pre-doppler --sub-cpi 300 --output "$tmp/m.h5" --quiet 2> "$tmp/err"
check "--sub-cpi 300: named as --sub-cpi" '[ $? -eq 1 ] && one_error "$tmp/err" "--sub-cpi 300" && ! grep -q doppler-order "$tmp/err"'
for bad in "--threads 0" "--cfar-rank 0"; do
    "$bin" run --preset easy --cfar os $bad --output "$tmp/m.h5" --quiet 2> "$tmp/err"
    check "$bad: exit 2 naming it" '[ $? -eq 2 ] && one_error "$tmp/err" "${bad% *}"'
done
"$mkpartial" dimsnul "$tmp/dimsnul.h5"
"$bin" run --input "$tmp/dimsnul.h5" --output "$tmp/m.h5" "${easy[@]}" 2> "$tmp/err"
check "a NUL inside a 'dims' name: exit 1 naming the attribute" \
    '[ $? -eq 1 ] && one_error "$tmp/err" "its '"'"'dims'"'"' attribute has a NUL byte inside a name"'
"$bin" run --input "$src/tests/fuzz/corpus/fuzz_h5_file/regress-damaged-header-label-lookup" \
    --output "$tmp/m.h5" --quiet 2> "$tmp/err"
check "damaged object header: exit 1, refused by name" \
    '[ $? -eq 1 ] && one_error "$tmp/err" "its object header is damaged (attribute message"'

[ -s "$tmp/hung.log" ] && fail=1
exit $fail
