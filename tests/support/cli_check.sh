# cli_check.sh: what the CLI tests that check one condition at a time share (sourced, not
# run): $tmp, a scratch directory removed at exit; fail=0, set to 1 by a failed check.
#   check NAME EXPR   eval EXPR; "FAIL: NAME" unless it succeeds
#   no_temp DIR       no hidden temporary (.NAME.tmp.*) under DIR
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
no_temp() { [ -z "$(find "$1" -name '.*.tmp.*')" ]; }
