# cli_expect.sh: what the CLI tests that drive rtstap command by command share (sourced,
# not run: CTest runs tests/cli/cli_*.sh only). Needs $T (the test's scratch directory) and
# counts failures in $fails.
#   fail MESSAGE...      report a failure and count it
#   expect STATUS CMD... run CMD with stdout in $T/out and stderr in $T/err; a failure
#                        unless it exits STATUS, and unless a failing CMD says
#                        "rtstap: error: ..." on stderr; returns 1 on a wrong status
#   h5py_python          set $py to the first of /usr/bin/python3 and python3 that has numpy
#                        and h5py ("" when neither has)
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

expect() {
    local want=$1
    shift
    "$@" >"$T/out" 2>"$T/err"
    local got=$?
    if [ "$got" != "$want" ]; then
        fail "'$*' exited $got, expected $want; stderr: $(head -c 400 "$T/err")"
        return 1
    fi
    if [ "$want" != 0 ] && ! grep -q '^rtstap: error: ' "$T/err"; then
        fail "'$*': no 'rtstap: error:' message on stderr: $(head -c 300 "$T/err")"
    fi
    return 0
}
h5py_python() {
    py=
    local p
    for p in /usr/bin/python3 python3; do
        if "$p" -c "import numpy, h5py" 2>/dev/null; then py=$p; return 0; fi
    done
}
