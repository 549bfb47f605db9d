#!/usr/bin/env bash
# cli_matlab: cubes that MATLAB and Octave write (issue 42 row 2, docs/matlab.md). One cube
# written three ways — the native layout (/data/iq, labelled channel, pulse, range), Octave
# 7's `save -hdf5` (/NAME/value, {real, imag}, column-major) and MATLAB v7.3's layout (a
# 512-byte user block, MATLAB_class, {real, imag}, column-major; written with h5py) — gives
# `run` byte-identical results with --layout R,P,C; the cube is found without --dataset
# when the file has one array, and named with --dataset (an Octave variable by its name)
# when it has several; without --layout an unlabelled column-major cube is refused, naming
# the orders to pass; `info` names the dataset. Skipped (77) without python3-h5py or octave
# unless RTSTAP_REQUIRE_READERS is set (CI: .ci/install-deps installs them).
# env: RTSTAP_BIN, RTSTAP_TOOLS_DIR (h5same).
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
tools=${RTSTAP_TOOLS_DIR:-$(dirname "$bin")/tests}
same=$tools/h5same
[ -x "$same" ] || { echo "cli_matlab: $same not built"; exit 77; }
. "$(dirname "$0")/../support/readers.sh"
need_readers cli_matlab octave-cli
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
results="/weights /output/iq /detections /steering"
run() { "$bin" run --preset easy --training 24 --doppler-order 1 --beams 4 --backend cpu \
    --quiet --cfar-train 8 --keep-output "$@"; }

# the cube: C=4 x P=16 x R=64 complex (fixed seed) with a target in range cell 40;
# native: /data/iq float64 {r, i} labelled; z.bin: the samples row-major for Octave
"$py" - "$tmp" <<'PY'
import sys, h5py, numpy as np
d = sys.argv[1]
C, P, R = 4, 16, 64
rng = np.random.default_rng(42)
z = rng.normal(size=(C, P, R)) + 1j * rng.normal(size=(C, P, R))
z[:, :, 40] += 20 * np.exp(2j * np.pi * 0.25 * np.arange(P))[None, :]
with h5py.File(f"{d}/native.h5", "w") as f:
    x = f.create_dataset("data/iq", data=z.astype(np.complex128))
    for k, n in enumerate(("channel", "pulse", "range")):
        x.dims[k].label = n
z.astype(np.complex128).tofile(f"{d}/z.bin")
# MATLAB v7.3: a 512-byte user block with MATLAB's header text, the variable at the root
# with MATLAB_class, complex as {real, imag}, the extents reversed (column-major)
ct = np.dtype([("real", "<f8"), ("imag", "<f8")])
a = np.empty(z.T.shape, ct)
a["real"], a["imag"] = z.T.real, z.T.imag
with h5py.File(f"{d}/m73.mat", "w", userblock_size=512) as f:
    f.create_dataset("cube", data=a).attrs["MATLAB_class"] = np.bytes_("double")
    s = f.create_group("cfg")
    s.attrs["MATLAB_class"] = np.bytes_("struct")
with open(f"{d}/m73.mat", "r+b") as f:
    f.write(b"MATLAB 7.3 MAT-file, Platform: GLNXA64, HDF5 schema 1.00 .".ljust(116) + bytes(8) + b"\x00\x02IM")
PY
check "python wrote the files" '[ $? -eq 0 ] && [ -s "$tmp/native.h5" ] && [ -s "$tmp/m73.mat" ]'
# Octave: the same samples as a 4 x 16 x 64 array z (and, in two.h5, another variable)
( cd "$tmp" && octave-cli -q --no-gui --eval '
  f = fopen("z.bin"); v = fread(f, Inf, "double"); fclose(f);
  z = permute(reshape(complex(v(1:2:end), v(2:2:end)), 64, 16, 4), [3 2 1]);
  save -hdf5 oct.h5 z; w = z(1:2, :, :); save -hdf5 two.h5 w z;
  data.iq = z; save -hdf5 struct.h5 data' ) >"$tmp/oct.log" 2>&1
check "octave wrote the files" '[ -s "$tmp/oct.h5" ] && [ -s "$tmp/two.h5" ] && [ -s "$tmp/struct.h5" ]'

run --input "$tmp/native.h5" -o "$tmp/r_native.h5" 2>"$tmp/err"
check "run on the native cube: exit 0" '[ $? -eq 0 ]'
for f in oct m73 struct; do
    in=$tmp/$f.h5
    [ $f = m73 ] && in=$tmp/m73.mat
    run --input "$in" -o "$tmp/r_$f.h5" --layout R,P,C 2>"$tmp/err"
    check "run --layout R,P,C on $f: exit 0" '[ $? -eq 0 ]'
    check "$f: the native cube's results" '"$same" "$tmp/r_native.h5" "$tmp/r_$f.h5" $results >/dev/null'
    # unlabelled, column-major: refused without --layout, naming the orders
    run --input "$in" -o "$tmp/x_$f.h5" 2>"$tmp/err"
    check "$f without --layout: exit 1" '[ $? -eq 1 ] && [ ! -e "$tmp/x_$f.h5" ]'
    check "$f without --layout: says why" 'grep -q "column-major" "$tmp/err" && grep -q "R,P,C" "$tmp/err"'
done
"$bin" info --input "$tmp/oct.h5" --layout R,P,C >"$tmp/out" 2>&1
check "info names Octave's dataset" 'grep -q "^  /z/value: float64 {real, imag} (MATLAB/Octave, column-major" "$tmp/out"'
check "info: 4 x 16 x 64" 'grep -q "4 channels x 16 pulses x 64 range gates" "$tmp/out"'
"$bin" info --input "$tmp/m73.mat" --layout R,P,C >"$tmp/out" 2>&1
check "info names MATLAB's dataset" 'grep -q "^  /cube: float64 {real, imag} (MATLAB/Octave" "$tmp/out"'
check "info reads MATLAB's user block through HDF5" 'grep -q "a user block" "$tmp/out"'
"$bin" info --input "$tmp/struct.h5" --layout R,P,C >"$tmp/out" 2>&1
check "info: Octave's data.iq" 'grep -q "^  /data/value/iq/value:" "$tmp/out"'

# two variables: --dataset needed, by the variable's name or its value's path
"$bin" info --input "$tmp/two.h5" --layout R,P,C >"$tmp/out" 2>&1
check "two arrays: exit 1" '[ $? -eq 1 ]'
check "two arrays: names both, asks for --dataset" 'grep -q "(w, z): name the cube with --dataset" "$tmp/out"'
for name in z /z /z/value; do
    run --input "$tmp/two.h5" --dataset $name --layout R,P,C -o "$tmp/r_two.h5" -f 2>"$tmp/err"
    check "--dataset $name: exit 0" '[ $? -eq 0 ]'
    check "--dataset $name: the native results" '"$same" "$tmp/r_native.h5" "$tmp/r_two.h5" $results >/dev/null'
done
"$bin" info --input "$tmp/two.h5" --dataset nope >"$tmp/out" 2>&1
check "--dataset missing: exit 1, named" '[ $? -eq 1 ] && grep -q "/nope. is not in" "$tmp/out"'
"$bin" run --preset easy --dataset z -o "$tmp/y.h5" >"$tmp/out" 2>&1
check "--dataset without --input: usage error" '[ $? -eq 2 ] && grep -q "\-\-dataset needs --input" "$tmp/out"'
"$bin" stream --input "$tmp/oct.h5" --layout R,P,C --training 24 --doppler-order 1 --beams 4 \
    --backend cpu --cfar-train 8 --quiet >"$tmp/out" 2>&1
check "stream reads Octave's file" '[ $? -eq 0 ]'
exit $fail
