#!/usr/bin/env bash
# cli_cfar_total: MATLAB's phased.CFARDetector counts training and guard cells over both
# sides, rtstap per side (issue 42, docs/matlab.md): --cfar-train-total 2N and
# --cfar-guard-total 2G give exactly the results of --cfar-train N --cfar-guard G (and run
# and stream take them); an odd total is a usage error naming the two per-side choices.
# env: RTSTAP_BIN, RTSTAP_TOOLS_DIR (h5same).
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
tools=${RTSTAP_TOOLS_DIR:-$(dirname "$bin")/tests}
same=$tools/h5same
[ -x "$same" ] || { echo "cli_cfar_total: $same not built"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
run() { "$bin" run --preset easy --backend cpu --quiet "$@"; }

run -o "$tmp/a.h5" --cfar-train 6 --cfar-guard 3 2>"$tmp/err"
check "per side: exit 0" '[ $? -eq 0 ]'
run -o "$tmp/b.h5" --cfar-train-total 12 --cfar-guard-total 6 2>"$tmp/err"
check "totals: exit 0" '[ $? -eq 0 ]'
check "totals: the per-side run's detections" '"$same" "$tmp/a.h5" "$tmp/b.h5" /detections >/dev/null'
run -o "$tmp/c.h5" 2>"$tmp/err"
check "default: exit 0" '[ $? -eq 0 ]'
check "the totals change the detector (not the default's detections)" \
    '! "$same" "$tmp/a.h5" "$tmp/c.h5" /detections >/dev/null'
for opt in --cfar-train-total --cfar-guard-total; do
    run -o "$tmp/d.h5" $opt 15 >"$tmp/out" 2>&1
    check "$opt 15: usage error, no output" '[ $? -eq 2 ] && [ ! -e "$tmp/d.h5" ]'
    check "$opt 15: names 7 or 8 per side" 'grep -q -- "$opt 15: .*must be even.* 7 or 8" "$tmp/out"'
done
"$bin" stream --preset easy --backend cpu --cpis 2 --cfar-train-total 12 --quiet >"$tmp/out" 2>&1
check "stream takes --cfar-train-total" '[ $? -eq 0 ]'
exit $fail
