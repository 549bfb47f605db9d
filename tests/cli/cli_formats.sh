#!/usr/bin/env bash
# cli_formats: the recorder formats of issue 12 end to end. Recordings stored as interleaved
# int16 (rank 5, last axis iq, scale 1/256), an int16 {real, imag} compound and interleaved
# float32, in other axis orders, give `run` (reader and writer threads) and `stream` exactly
# the result of their complex64 equivalent. `import-raw` converts raw files of every sample
# type, in any axis order, with a header and a scale, into exactly the complex64 samples
# (tests/tools/mkraw writes both), refusing a wrong size, an unknown type and a non-finite
# sample by name; `import-sigmf` does the same for SigMF recordings (ci16_le with interleaved
# channels, cf32_le), takes their sample rate and centre frequency, and refuses malformed
# metadata.
# env: RTSTAP_BIN, RTSTAP_TOOLS_DIR (relayout, h5same, mkraw, h5attr).
set -u
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
bin=$RTSTAP_BIN
tools=${RTSTAP_TOOLS_DIR:-$(dirname "$bin")/tests}
relayout=$tools/relayout
same=$tools/h5same
mkraw=$tools/mkraw
h5attr=$tools/h5attr
for t in "$relayout" "$same" "$mkraw" "$h5attr"; do
    [ -x "$t" ] || { echo "cli_formats: $t not built"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
results="/weights /output/iq /detections /steering"

# ---- recordings in the recorder formats: the complex64 result, byte for byte
"$bin" gen --preset ward --channels 6 --pulses 32 --range-gates 240 --no-clutter --no-jammers \
    --cpis 3 --target 41:0:100:25 --seed 5 --out "$tmp/rec.h5" --quiet
rq=(--backend cpu --doppler-order 3 --training 60 --segments 2 --beams 3 --loading 0.01 --quiet --keep-output)
"$relayout" "$tmp/rec.h5" "$tmp/q.h5" C,P,R ds quantize   # complex64, multiples of 1/256
"$bin" run --input "$tmp/q.h5" --output "$tmp/o_q.h5" "${rq[@]}" 2>"$tmp/err"
check "quantized complex64 recording: exit 0" '[ $? -eq 0 ]'
"$bin" run --input "$tmp/rec.h5" --output "$tmp/o_rec.h5" "${rq[@]}" 2>"$tmp/err"
check "complex64 recording: exit 0" '[ $? -eq 0 ]'
form() { # NAME REFERENCE RELAYOUT-ARGS...
    local name=$1 ref=$2
    shift 2
    "$relayout" "$tmp/rec.h5" "$tmp/$name.h5" "$@" || { echo "FAIL: relayout $name"; fail=1; return; }
    "$bin" run --input "$tmp/$name.h5" --output "$tmp/o_$name.h5" "${rq[@]}" 2>"$tmp/err"
    check "$name: exit 0, nothing on stderr" '[ $? -eq 0 ] && [ ! -s "$tmp/err" ]'
    check "  $name: the result of its complex64 equivalent" \
        '"$same" "$tmp/$ref" "$tmp/o_$name.h5" $results > "$tmp/same.txt" || { cat "$tmp/same.txt"; false; }'
    # the same result through HDF5's reader, and with 1 and 3 reader threads (issue 31)
    RTSTAP_READER=hdf5 "$bin" run --input "$tmp/$name.h5" --output "$tmp/oh_$name.h5" "${rq[@]}" --json "$tmp/h_$name.json" 2>"$tmp/err"
    check "  $name through HDF5 (RTSTAP_READER=hdf5): the same result" \
        '"$same" "$tmp/o_$name.h5" "$tmp/oh_$name.h5" $results >/dev/null && grep -q "\"reader_path\":[[:space:]]*\"HDF5 (H5Dread" "$tmp/h_$name.json"'
    for n in 1 3; do
        "$bin" run --input "$tmp/$name.h5" --output "$tmp/o${n}_$name.h5" "${rq[@]}" --readers $n --json "$tmp/r${n}_$name.json" 2>"$tmp/err"
        check "  $name with --readers $n: the same result" '"$same" "$tmp/o_$name.h5" "$tmp/o${n}_$name.h5" $results >/dev/null'
    done
    check "  $name: the report names its reader path ($want)" 'grep -q "\"reader_path\":[[:space:]]*\"$want" "$tmp/r3_$name.json"'
    # integer samples cross to the engine as stored, or decoded on the host: the same result
    "$bin" run --input "$tmp/$name.h5" --output "$tmp/od_$name.h5" "${rq[@]}" --host-decode 2>"$tmp/err"
    check "  $name with --host-decode: the same result" '"$same" "$tmp/o_$name.h5" "$tmp/od_$name.h5" $results >/dev/null'
    check "  $name: the report says how the samples reach the engine ($samples)" \
        'grep -q "\"samples\":[[:space:]]*\"$samples" "$tmp/r3_$name.json"'
    # rtstap info (issue 33): the same reading, said before anything runs
    "$bin" info --input "$tmp/$name.h5" "${rq[@]:2:8}" --json "$tmp/i_$name.json" > "$tmp/i_$name.txt" 2>&1
    check "  info $name: exit 0, the stored form, the CPIs, how it reads, what a run would use" \
        '[ $? -eq 0 ] && grep -q "\"samples\":[[:space:]]*\"$samples" "$tmp/i_$name.json" &&
         grep -q "\"cpis_written\":[[:space:]]*3" "$tmp/i_$name.json" && grep -q "\"fits\":[[:space:]]*true" "$tmp/i_$name.json" &&
         grep -q "axes: (cpi, " "$tmp/i_$name.txt" && grep -q "from the file.s labels\|from --layout" "$tmp/i_$name.txt"'
}
want=direct
samples="int16 (i, q), scale 0.00390625, stored (pulse, range, channel) over the link as stored"
form i16_prc o_q.h5 P,R,C ds i16                 # int16 (cpi, P, R, C, iq): read transposed by the engine
samples="int16 (i, q), scale 0.00390625 over the link as stored"
form i16_cpr o_q.h5 C,P,R ds i16                 # int16 (cpi, C, P, R, iq): to the engine as stored
form ri16_cpr o_q.h5 C,P,R attr ri16 contiguous  # int16 {real, imag} (cpi, C, P, R), dims
samples="complex64, stored (range, channel, pulse) over the link as stored"
form f32iq_rcp o_rec.h5 R,C,P ds f32iq           # float32 (cpi, R, C, P, iq): complex64, transposed by the engine
samples="complex64 over the link, as stored"
form f32iq_cpr o_rec.h5 C,P,R ds f32iq           # float32 (cpi, C, P, R, iq): complex64 as stored
samples="complex64 over the link (decoded on the host: its samples are floating point"
form f64_pcr o_rec.h5 P,C,R ds f64 contiguous    # float64 {r, i} (cpi, P, C, R), contiguous: decoded
"$bin" stream --input "$tmp/i16_prc.h5" --backend cpu --slots 2 --quiet 2>"$tmp/err"
check "stream --input of the int16 recording: exit 0" '[ $? -eq 0 ] && [ ! -s "$tmp/err" ]'
"$bin" info --input "$tmp/i16_cpr.h5" --training 100000 > "$tmp/info_bad.txt" 2>&1
check "info: a run that does not fit says why, by its flags" \
    '[ $? -eq 0 ] && grep -q "a run (--preset hard and the options given): .*: --training 100000 must be between 1 and" "$tmp/info_bad.txt"'
"$bin" stream --input "$tmp/i16_cpr.h5" --backend cpu --slots 2 --json "$tmp/s16.json" 2>"$tmp/err"
check "stream --input of an int16 recording the engine takes as stored: exit 0" \
    '[ $? -eq 0 ] && grep -q "\"samples\":[[:space:]]*\"int16 (i, q), scale 0.00390625 over the link as stored" "$tmp/s16.json"'
for f in ci8 ci16 ci32; do
    "$bin" stream --preset easy --cpis 8 --backend cpu --format $f --json "$tmp/ring_$f.json" 2>"$tmp/err"
    check "stream --format $f: exit 0, the ring's samples reported" \
        '[ $? -eq 0 ] && grep -q "\"samples\":[[:space:]]*\"${f/ci/int} (i, q), scale" "$tmp/ring_$f.json"'
done
"$bin" stream --preset easy --cpis 8 --backend cpu --format ci12 2>"$tmp/err"
check "stream --format ci12: exit 2 naming the types" '[ $? -eq 2 ] && grep -q "none of cf32, ci8, ci16 and ci32" "$tmp/err"'
"$bin" run --input "$tmp/i16_prc.h5" --output "$tmp/o_i16_s.h5" "${rq[@]}" --scale 0.5 2>"$tmp/err"
check "--scale 0.5 over the recording's 1/256: exit 0, another result" \
    '[ $? -eq 0 ] && ! "$same" "$tmp/o_q.h5" "$tmp/o_i16_s.h5" /output/iq >/dev/null'

# ---- import-raw: every type, exactly the complex64 samples; any stored order, a header
small=(--preset easy --segments 1 --training 24 --doppler-order 1 --beams 4 --backend cpu --quiet)
orders=(C,P,R P,R,C R,C,P C,R,P P,C,R R,P,C)
k=0
for type in ci8 ci16_le ci16_be ci32_le ci32_be cf32_le cf32_be cf64_le cf64_be; do
    case $type in ci8) sc=0.04;; ci16*) sc=0.001;; ci32*) sc=1e-6;; *) sc=1;; esac
    order=${orders[$((k % 6))]}
    k=$((k + 1))
    "$mkraw" $type 4,8,48 "$order" $k "$tmp/$type.bin" "$tmp/$type.ref.h5" $sc
    "$bin" import-raw --input "$tmp/$type.bin" --shape 4,8,48 --type $type --layout "$order" \
        --scale $sc --prf 2000 --output "$tmp/$type.h5" >"$tmp/out" 2>"$tmp/err"
    check "import-raw $type ($order, scale $sc): exit 0, nothing on stderr" '[ $? -eq 0 ] && [ ! -s "$tmp/err" ]'
    check "  $type: /data/iq is exactly the complex64 samples" '"$same" "$tmp/$type.ref.h5" "$tmp/$type.h5" /data/iq >/dev/null'
    check "  $type: says what it wrote" 'grep -q "^wrote $tmp/$type.h5: complex64 4 channels x 8 pulses x 48 range gates, from $type" "$tmp/out"'
done
check "import-raw: /radar prf_hz, the source attribute" \
    '[ "$("$h5attr" "$tmp/ci16_be.h5" /radar prf_hz)" = "prf_hz 2000" ] &&
     grep -q "import-raw: .$tmp/ci16_be.bin., ci16_be stored (range, channel, pulse), scale 0.001" <("$h5attr" "$tmp/ci16_be.h5" /data/iq source)'
"$bin" run --input "$tmp/ci16_le.h5" --output "$tmp/o_raw.h5" "${small[@]}" 2>"$tmp/err"
check "run on an imported file: exit 0, no warning (labelled)" '[ $? -eq 0 ] && [ ! -s "$tmp/err" ]'
"$bin" run --input "$tmp/ci16_le.ref.h5" --output "$tmp/o_raw_ref.h5" "${small[@]}" --layout C,P,R
check "  the result of the complex64 samples" '"$same" "$tmp/o_raw.h5" "$tmp/o_raw_ref.h5" $results >/dev/null'

# a recording of 3 CPIs stored (pulse, range, channel) after a 16-byte header
"$mkraw" ci16_le 4,8,48,3 P,R,C 9 "$tmp/rec.bin" "$tmp/rec.ref.h5" 0.001 --header 16
"$bin" import-raw --input "$tmp/rec.bin" --shape 4,8,48,3 --type ci16_le --layout P,R,C \
    --offset 16 --scale 0.001 --output "$tmp/rec_raw.h5" >/dev/null 2>"$tmp/err"
check "import-raw recording with a header: exit 0" '[ $? -eq 0 ] && [ ! -s "$tmp/err" ]'
check "  (CPIs, C, P, R): exactly the samples" '"$same" "$tmp/rec.ref.h5" "$tmp/rec_raw.h5" /data/iq >/dev/null'
"$bin" run --input "$tmp/rec_raw.h5" --output "$tmp/o_rec_raw.h5" "${small[@]}" --keep-output
"$bin" run --input "$tmp/rec.ref.h5" --output "$tmp/o_rec_ref.h5" "${small[@]}" --keep-output --layout C,P,R 2>/dev/null
check "  run on it: the result of the complex64 recording" '"$same" "$tmp/o_rec_raw.h5" "$tmp/o_rec_ref.h5" $results >/dev/null'

# refusals: a size that is not the shape's (naming both), types, shapes, a NaN, the output
head -c 6143 "$tmp/ci16_le.bin" > "$tmp/short.bin"
"$bin" import-raw --input "$tmp/short.bin" --shape 4,8,48 --type ci16_le --output "$tmp/short.h5" 2>"$tmp/err"
check "a file 1 byte short: exit 1 naming both sizes, no output" \
    '[ $? -eq 1 ] && grep -q "short.bin. holds 6143 bytes; 1 CPI of 4 channels x 8 pulses x 48 range gates of ci16_le (4 bytes a sample) need exactly 6144" "$tmp/err" && [ ! -e "$tmp/short.h5" ]'
"$bin" import-raw --input "$tmp/ci16_le.bin" --shape 4,8,24,2 --type ci16_le --output "$tmp/x.h5" 2>/dev/null
check "the right size in another shape is accepted (the shape is the caller's word)" '[ $? -eq 0 ]'
for bad in "--type cu8" "--type rf32_le" "--type ci12" "--shape 4,8" "--shape 4,0,48" "--shape 4,8,48,x" "--layout P,P,R" "--offset -3" "--scale 0"; do
    "$bin" import-raw --input "$tmp/ci16_le.bin" --shape 4,8,48 --type ci16_le $bad --output "$tmp/u.h5" 2>"$tmp/err"
    check "import-raw $bad: exit 2" '[ $? -eq 2 ] && grep -q "^rtstap: error: " "$tmp/err" && [ ! -e "$tmp/u.h5" ]'
done
"$bin" import-raw --input "$tmp/ci16_le.bin" --shape 4,8,48 --type cu8 --output "$tmp/u.h5" 2>"$tmp/err"
check "  cu8: says why (unsigned)" 'grep -q "unsigned" "$tmp/err"'
"$mkraw" cf32_le 4,8,48 P,C,R 3 "$tmp/nan.bin" "$tmp/nan.ref.h5" --nan
"$bin" import-raw --input "$tmp/nan.bin" --shape 4,8,48 --type cf32_le --layout P,C,R --output "$tmp/nan.h5" 2>"$tmp/err"
check "a NaN sample: exit 1 naming it, its byte offset, no output" \
    '[ $? -eq 1 ] && grep -q "the cf32_le sample of CPI 0 at (channel 1, pulse 2, range 3) (byte offset 3480): is not finite" "$tmp/err" && [ ! -e "$tmp/nan.h5" ]'
"$bin" import-raw --input "$tmp/ci16_le.bin" --shape 4,8,48 --type ci16_le --output "$tmp/ci16_le.h5" 2>"$tmp/err"
check "an existing output: exit 1" '[ $? -eq 1 ] && grep -q "already exists" "$tmp/err"'
"$bin" import-raw --input "$tmp/none.bin" --shape 4,8,48 --type ci16_le --output "$tmp/none.h5" 2>"$tmp/err"
check "a missing input: exit 1" '[ $? -eq 1 ] && grep -q "none.bin.*No such file" "$tmp/err"'
leftover=$(find "$tmp" -name '.*.tmp.*')
check "no temporary file left ($leftover)" '[ -z "$leftover" ]'

# ---- import-sigmf: 4 interleaved channels of ci16_le, 2 CPIs; one channel of cf32_le
"$mkraw" ci16_le 4,8,48,2 P,R,C 11 "$tmp/rx.sigmf-data" "$tmp/rx.ref.h5" 0.001
printf '{"global": {"core:datatype": "ci16_le", "core:version": "1.0.0", "core:num_channels": 4,
  "core:sample_rate": 5000000},
 "captures": [{"core:sample_start": 0, "core:frequency": 1.25e9}], "annotations": []}
' > "$tmp/rx.sigmf-meta"
"$bin" import-sigmf --meta "$tmp/rx.sigmf-meta" --pulses 8 --range-gates 48 --scale 0.001 \
    --prf 2000 --complex64 --output "$tmp/rx.h5" >"$tmp/out" 2>"$tmp/err"
check "import-sigmf ci16_le --complex64, 4 channels: exit 0, nothing on stderr" '[ $? -eq 0 ] && [ ! -s "$tmp/err" ]'
check "  2 CPIs of (pulse, range, channel) samples: exactly the complex64 recording" \
    '"$same" "$tmp/rx.ref.h5" "$tmp/rx.h5" /data/iq >/dev/null'
check "  core:sample_rate and core:frequency in /radar, --prf too" \
    '[ "$("$h5attr" "$tmp/rx.h5" /radar sample_rate_hz carrier_frequency_hz prf_hz | tr "\n" " ")" = "sample_rate_hz 5000000 carrier_frequency_hz 1250000000 prf_hz 2000 " ]'
"$mkraw" cf32_le 1,16,64 P,R,C 12 "$tmp/one.sigmf-data" "$tmp/one.ref.h5"
printf '{"global": {"core:datatype": "cf32_le", "core:version": "1.0.0"}, "captures": [], "annotations": []}' > "$tmp/one.sigmf-meta"
"$bin" import-sigmf --meta "$tmp/one.sigmf-meta" --pulses 16 --range-gates 64 --output "$tmp/one.h5" >/dev/null 2>"$tmp/err"
check "import-sigmf cf32_le, one channel, one CPI: a rank-3 cube of exactly the samples" \
    '[ $? -eq 0 ] && "$same" "$tmp/one.ref.h5" "$tmp/one.h5" /data/iq >/dev/null'
sigmf_bad() { # NAME META-JSON WORDS [ARGS...]
    local name=$1 json=$2 words=$3
    shift 3
    cp "$tmp/rx.sigmf-data" "$tmp/bad_$name.sigmf-data"
    printf '%s' "$json" > "$tmp/bad_$name.sigmf-meta"
    "$bin" import-sigmf --meta "$tmp/bad_$name.sigmf-meta" --pulses 8 --range-gates 48 \
        --output "$tmp/bad_$name.h5" "$@" 2>"$tmp/err"
    local rc=$?
    check "import-sigmf $name: exit 1 (got $rc) saying '$words', no output" \
        '[ $rc -eq 1 ] && grep -qF -- "$words" "$tmp/err" && [ ! -e "$tmp/bad_$name.h5" ]'
}
sigmf_bad notjson '{"global": {' 'is not strict JSON: "global": a key (a string) expected'
# strict JSON (issue 29): what cJSON alone took, each refused naming the key
sigmf_bad trailing '{"global": {"core:datatype": "ci16_le", "core:num_channels": 4}} trailing' \
    'is not strict JSON: (top level): text after the JSON value'
sigmf_bad duplicate '{"global": {"core:datatype": "ci16_le", "core:datatype": "cf32_le", "core:num_channels": 4}}' \
    '"global"."core:datatype": the key appears twice'
sigmf_bad nulescape '{"global": {"core:datatype": "ci16\u0000_le", "core:num_channels": 4}}' \
    '"global"."core:datatype": \u0000 (a NUL) inside a string'
sigmf_bad badescape '{"global": {"core:datatype": "stap_cf32\uZZZZ_le", "core:num_channels": 4}}' \
    '"global"."core:datatype": a \u escape without four hex digits'
sigmf_bad surrogate '{"global": {"core:datatype": "ci16_le\udc00", "core:num_channels": 4}}' \
    '"global"."core:datatype": a lone low surrogate'
sigmf_bad hugeheader '{"global": {"core:datatype": "ci16_le", "core:num_channels": 4}, "captures": [{"core:header_bytes": 1e15}]}' \
    '"captures"[0]."core:header_bytes" 1000000000000000 is beyond the end of'
sigmf_bad fracheader '{"global": {"core:datatype": "ci16_le", "core:num_channels": 4}, "captures": [{"core:header_bytes": 2.5}]}' \
    '"captures"[0]."core:header_bytes" 2.5: expected a whole number of bytes'
# a raw NUL byte inside a string (printf writes it; the shell's variables cannot hold one)
cp "$tmp/rx.sigmf-data" "$tmp/bad_rawnul.sigmf-data"
printf '{"global": {"core:datatype": "ci16\0_le", "core:num_channels": 4}}' > "$tmp/bad_rawnul.sigmf-meta"
"$bin" import-sigmf --meta "$tmp/bad_rawnul.sigmf-meta" --pulses 8 --range-gates 48 \
    --output "$tmp/bad_rawnul.h5" 2>"$tmp/err"
rc=$?
check "import-sigmf rawnul: exit 1 (got $rc) naming the key and the NUL byte, no output" \
    '[ $rc -eq 1 ] && grep -qF "\"global\".\"core:datatype\": a NUL byte inside a string" "$tmp/err" && [ ! -e "$tmp/bad_rawnul.h5" ]'

sigmf_bad nodatatype '{"global": {"core:num_channels": 4}}' '"core:datatype" is missing'
sigmf_bad real '{"global": {"core:datatype": "rf32_le", "core:num_channels": 4}}' "real-valued"
sigmf_bad unsigned '{"global": {"core:datatype": "cu16_le", "core:num_channels": 4}}' "unsigned"
sigmf_bad channels '{"global": {"core:datatype": "ci16_le", "core:num_channels": 4}}' "--channels 2, but core:num_channels is 4" --channels 2
sigmf_bad partial '{"global": {"core:datatype": "ci16_le", "core:num_channels": 5}}' "not a whole number of CPIs"
sigmf_bad cpis '{"global": {"core:datatype": "ci16_le", "core:num_channels": 4}}' "need exactly" --cpis 3
sigmf_bad metaonly '{"global": {"core:datatype": "ci16_le", "core:metadata_only": true}}' "metadata_only"
sigmf_bad header2 '{"global": {"core:datatype": "ci16_le", "core:num_channels": 4}, "captures": [{"core:sample_start": 0}, {"core:sample_start": 384, "core:header_bytes": 8}]}' '"captures"[1]."core:header_bytes": bytes between the samples are not read'
sigmf_bad dataset '{"global": {"core:datatype": "ci16_le", "core:num_channels": 4, "core:dataset": "../x.bin"}}' "core:dataset"
printf '{"global": {"core:datatype": "ci16_le", "core:num_channels": 4}, "captures": [{"core:sample_start": 0, "core:frequency": 1e9}, {"core:sample_start": 384, "core:frequency": 2e9}]}' > "$tmp/rx2.sigmf-meta"
cp "$tmp/rx.sigmf-data" "$tmp/rx2.sigmf-data"
"$bin" import-sigmf --meta "$tmp/rx2.sigmf-meta" --pulses 8 --range-gates 48 --output "$tmp/rx2.h5" >/dev/null 2>"$tmp/err"
check "captures at two frequencies: exit 0, a warning, no carrier written" \
    '[ $? -eq 0 ] && grep -q "^rtstap: warning: .*several core:frequency" "$tmp/err" && ! "$h5attr" "$tmp/rx2.h5" /radar carrier_frequency_hz >/dev/null'

exit $fail
