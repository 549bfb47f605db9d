#!/usr/bin/env bash
# cli_quickstart: README's "Process your own recording", exactly as written — an int16
# recording made with numpy and h5py, `rtstap info`, `rtstap run`, the detections read in
# Python (issue 33). Skipped (77) without h5py, unless RTSTAP_REQUIRE_READERS=1.
bin=$RTSTAP_BIN
src=${RTSTAP_SOURCE_DIR:-$(dirname "$0")/../..}
py=""
for p in /usr/bin/python3 python3; do
    if "$p" -c "import numpy, h5py" 2>/dev/null; then py=$(command -v "$p"); break; fi
done
if [ -z "$py" ]; then
    echo "cli_quickstart: no python3 with numpy and h5py"
    [ "${RTSTAP_REQUIRE_READERS:-0}" = 1 ] && exit 1
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
ln -s "$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")" "$tmp/bin/rtstap"
ln -s "$py" "$tmp/bin/python3" # the block's python3: the one with h5py
awk '/^## Process your own recording/ {p = 1} p && /^```sh/ {c = 1; next} c && /^```$/ {exit} c' \
    "$src/README.md" > "$tmp/quickstart.sh"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
check "README has the block" '[ "$(wc -l < "$tmp/quickstart.sh")" -gt 8 ]'
(cd "$tmp" && PATH="$tmp/bin:$PATH" bash -e quickstart.sh > out.txt 2>&1)
rc=$?
check "the quick start runs as written (rc $rc)" '[ $rc -eq 0 ]'
check "info said how it reads the int16 recording" \
    'grep -q "/data/iq: int16, interleaved" "$tmp/out.txt" && grep -q "8 CPIs x 4 channels x 64 pulses x 256 range gates" "$tmp/out.txt" &&
     grep -q "samples: int16 (i, q), scale 0.0009765625 over the link as stored" "$tmp/out.txt"'
check "run wrote the 8 CPIs" '[ -s "$tmp/mine_run.h5" ] && grep -q "8 CPIs" "$tmp/out.txt"'
check "Python printed the detections (an array)" 'tail -1 "$tmp/out.txt" | grep -q "^\[.*\]$"'
cat "$tmp/out.txt"
exit $fail
