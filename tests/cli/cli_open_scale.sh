#!/usr/bin/env bash
# cli_open_scale: opening a recording of many small CPIs is linear in its CPIs (issue 43,
# row 10). HDF5 1.10 (Debian 12) places a chunk by walking the chunk index up to it
# (H5Dget_chunk_info_by_coord), so placing every CPI for the direct reader was quadratic:
# `info` on 12 000 CPIs took 10-29 s, on 50 000 minutes. Now, without H5Dchunk_iter (HDF5
# 1.14), a recording of more than 1 024 chunks (of small CPIs) keeps the HDF5 path (each read looks its
# chunk up), and which CPIs were written is looked up chunk by chunk
# (H5Dget_chunk_storage_size). 50 000 CPIs open in well under a second here; the bound
# below is 30 s (a quadratic open took over 60 s on the machine of docs/benchmarks.md).
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
mkpartial=$RTSTAP_TOOLS_DIR/mkpartial
. "$(dirname "$0")/../support/cli_check.sh" # tmp, fail, check, no_temp

# 50 000 CPIs of 1 x 2 x 1 samples, one CPI per chunk, every one written; and one with a
# gap (CPIs 20 000-29 999 never written): the written map is still right
"$mkpartial" recording "$tmp/many.h5" 1,2,1 50000 1 all >/dev/null
"$mkpartial" recording "$tmp/gaps.h5" 1,2,1 50000 1 0-19999,30000-49999 >/dev/null
# open NAME: `info` on $tmp/NAME.h5 (a hang killed after 120 s) into $tmp/NAME.txt; rc, secs
open() {
    local t0=$SECONDS
    timeout -k 5 120 "$bin" info --input "$tmp/$1.h5" >"$tmp/$1.txt" 2>&1
    rc=$?
    secs=$((SECONDS - t0))
}
open many
check "info on 50 000 CPIs: exit 0 ($rc) in under 30 s ($secs s), every CPI written" \
    '[ $rc -eq 0 ] && [ $secs -lt 30 ] && grep -q "CPIs: 50000 written, 0 never written" "$tmp/many.txt"'
check "info on 50 000 CPIs: read by HDF5, saying why (HDF5 before 1.14 has no one-pass walk)" \
    'grep -q "reading: HDF5 (H5Dread, one reader at a time: more chunks than it pays to place" "$tmp/many.txt" ||
     grep -q "reading: direct" "$tmp/many.txt"'
open gaps
check "info on 50 000 CPIs, 10 000 never written: exit 0 ($rc) in under 30 s ($secs s), the gap found" \
    '[ $rc -eq 0 ] && [ $secs -lt 30 ] && grep -q "CPIs: 40000 written, 10000 never written" "$tmp/gaps.txt"'
exit $fail
