# readers.sh: the CLI tests that need the reader tools (sourced, not run: CTest runs
# tests/cli/cli_*.sh only). need_readers NAME TOOL... sets $py to a python3 that imports
# h5py and numpy, and checks that each TOOL (octave-cli, h5dump) is on PATH; when any is
# missing it says which and exits 77 (skipped), or 1 when RTSTAP_REQUIRE_READERS is set (CI:
# .ci/install-deps installs them).
need_readers() {
    local name=$1 p t missing=""
    shift
    py=""
    for p in /usr/bin/python3 python3; do
        if command -v "$p" >/dev/null && "$p" -c 'import h5py, numpy' 2>/dev/null; then py=$p; break; fi
    done
    [ -n "$py" ] || missing="$missing python3-h5py"
    for t in "$@"; do
        case $t in
            octave-cli) command -v octave-cli >/dev/null || missing="$missing octave" ;;
            h5dump) command -v h5dump >/dev/null || missing="$missing hdf5-tools" ;;
        esac
    done
    if [ -n "$missing" ]; then
        echo "$name: not installed:$missing (bash .ci/install-deps installs them)"
        [ -n "${RTSTAP_REQUIRE_READERS:-}" ] && exit 1
        exit 77
    fi
}
