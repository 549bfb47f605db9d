#!/usr/bin/env bash
# cli_quickstart: README's blocks from "Quick start" to "Python", exactly as written and in
# order, in a fresh folder whose `build` is this build (issue 42; issue 33): the install
# into prefix/ and the paths, the recording's quick start (the target found in all 8 CPIs
# by the default CA detector with at most 2 false alarms, and by Kelly's), "Process your own recording" (numpy and h5py, `info`, `run`, the
# detections in Python), live input (listen -o fed by send over 127.0.0.1), the library's CPI and C program (compiled through pkg-config)
# and the Python package on that CPI. Skipped (77) without /usr/bin/python3 with numpy and
# h5py (README's interpreter), unless RTSTAP_REQUIRE_READERS=1, and where the build makes
# no Python package (sanitizers, fuzzing).
bin=$RTSTAP_BIN
src=${RTSTAP_SOURCE_DIR:-$(dirname "$0")/../..}
if ! /usr/bin/python3 -c "import numpy, h5py" 2>/dev/null; then
    echo "cli_quickstart: no /usr/bin/python3 with numpy and h5py"
    [ "${RTSTAP_REQUIRE_READERS:-0}" = 1 ] && exit 1
    exit 77
fi
# README's blocks use the Python package, which sanitizer and fuzzing builds do not make
if [ "${RTSTAP_PYTHON_WANTED:-0}" != 1 ]; then
    echo "cli_quickstart: this build makes no Python package (sanitizers or fuzzing)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ln -s "$(cd "$(dirname "$bin")" && pwd)" "$tmp/build"
# the blocks: sh as they are, python through README's interpreter, the C block as app.c
awk -v dir="$tmp" '
    /^## Quick start/ {p = 1} /^## Documentation/ {p = 0}
    p && /^```sh$/ {k = "sh"; next} p && /^```python$/ {k = "py"; print "/usr/bin/python3 - <<'"'"'PYEOF'"'"'"; next}
    p && /^```c$/ {k = "c"; next}
    k && /^```$/ {if (k == "py") print "PYEOF"; k = ""; next}
    k == "c" {print > (dir "/app.c"); next}
    k {print}' "$src/README.md" > "$tmp/readme.sh"
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
check "README has the blocks" '[ "$(wc -l < "$tmp/readme.sh")" -gt 20 ] && [ -s "$tmp/app.c" ]'
# a PATH without this build's folders: the blocks must put rtstap there themselves
(cd "$tmp" && env -u PYTHONPATH -u PKG_CONFIG_PATH bash -e readme.sh > out.txt 2>&1)
rc=$?
check "README's blocks run as written (rc $rc)" '[ $rc -eq 0 ]'
# the quick start: the CPI whose pictures it draws has the target, drifting a cell a CPI
cpi=$(sed -n 's/^rtstap plot .*--cpi \([0-9]*\).*/\1/p' "$tmp/readme.sh")
check "the quick start draws a CPI's pictures (--cpi '$cpi')" '[ -n "$cpi" ] && ls "$tmp/pictures/"*.png > /dev/null'
check "the pictured CPI $cpi detects the target (Doppler bin 3, range cell 151 + $cpi)" \
    '/usr/bin/python3 -c "
import h5py, sys
d = h5py.File(\"$tmp/run.h5\")[\"detections\"][()]
d = d[d[\"cpi\"] == $cpi]
best = d[d[\"power\"].argmax()]
sys.exit(not (best[\"doppler_bin\"] == 3 and best[\"range_cell\"] == 151 + $cpi))"'
check "the quick start's default detector (CA) finds the target in all 8 CPIs, with at most 2 false alarms (0.2 expected; P(>= 3) = 0.001)" \
    '/usr/bin/python3 -c "
import h5py, sys
d = h5py.File(\"$tmp/run.h5\")[\"detections\"][()]
near = [abs(int(x[\"range_cell\"]) - 151 - int(x[\"cpi\"])) <= 1 and x[\"beam\"] == 2 and int(x[\"doppler_bin\"]) in (2, 3, 4) for x in d]
hit = {int(x[\"cpi\"]) for x in d if (x[\"beam\"], x[\"doppler_bin\"], x[\"range_cell\"]) == (2, 3, 151 + x[\"cpi\"])}
sys.exit(hit != set(range(8)) or len(near) - sum(near) > 2)"'
check "Kelly's detector finds the target in all 8 CPIs (beam 2, Doppler bin 3, range cell 151 + CPI)" \
    '/usr/bin/python3 -c "
import h5py, sys
d = h5py.File(\"$tmp/kelly.h5\")[\"detections\"][()]
hit = {int(x[\"cpi\"]) for x in d if (x[\"beam\"], x[\"doppler_bin\"], x[\"range_cell\"]) == (2, 3, 151 + x[\"cpi\"])}
sys.exit(hit != set(range(8)) or not (d[\"statistic\"] > d[\"threshold\"]).all())"'
check "the live block: listen -o got the 8 CPIs send played, none lost, with detections" \
    '/usr/bin/python3 -c "
import h5py, sys
a, b = h5py.File(\"$tmp/live.h5\"), h5py.File(\"$tmp/run.h5\")
sys.exit(not (list(a[\"axes/input_cpi\"][()]) == list(range(8)) and a[\"config\"].attrs[\"cpis_lost\"] == 0
              and a[\"detections\"].shape[0] > 0))"'
check "info said how it reads the int16 recording" \
    'grep -q "/data/iq: int16, interleaved" "$tmp/out.txt" && grep -q "8 CPIs x 4 channels x 64 pulses x 256 range gates" "$tmp/out.txt" &&
     grep -q "samples: int16 (i, q), scale 0.0009765625 over the link as stored" "$tmp/out.txt"'
check "run wrote the 8 CPIs of mine.h5" '[ -s "$tmp/mine_run.h5" ] && grep -q "mine.h5, 8 CPIs" "$tmp/out.txt"'
check "the C program found the target" 'grep -q "^beam 2, Doppler bin 3, range cell 151$" "$tmp/out.txt"'
check "Python found the target" 'grep -q "(2, *3, *151," "$tmp/out.txt"'
cat "$tmp/out.txt"
exit $fail
