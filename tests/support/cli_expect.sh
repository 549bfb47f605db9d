# cli_expect.sh: what the CLI tests that drive rtstap command by command share (sourced,
# not run: CTest runs tests/cli/cli_*.sh only). Needs $T (the test's scratch directory) and
# counts failures in $fails.
#   fail MESSAGE...      report a failure and count it
#   expect STATUS CMD... run CMD with stdout in $T/out and stderr in $T/err; a failure
#                        unless it exits STATUS, and unless a failing CMD says
#                        "rtstap: error: ..." on stderr; returns 1 on a wrong status
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
