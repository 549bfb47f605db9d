# python_env.sh: what the Python CLI tests (cli_python.sh, cli_python_stream.sh) share, sourced
# with NAME set: the system's python3 with numpy and h5py, the package from the build folder
# beside RTSTAP_BIN (PYTHONPATH), or exit 77 (skipped; 1 under RTSTAP_REQUIRE_PYTHON=1 where
# the build makes the package); a temporary folder $tmp removed at exit; check.
bin=$RTSTAP_BIN
py=$(dirname "$bin")/python
python3=python3 # the system's first (the package is built for it), as cli_readers.sh
for p in /usr/bin/python3 python3; do
    if "$p" -c "import numpy, h5py" 2>/dev/null; then python3=$p; break; fi
done
if ! ls "$py"/rtstap/_rtstap*.so >/dev/null 2>&1 || ! "$python3" -c "import numpy, h5py" 2>/dev/null; then
    echo "$NAME: the Python package was not built (python3-dev, python3-numpy) or h5py is missing"
    [ "${RTSTAP_REQUIRE_PYTHON:-0}" = 1 ] && [ "${RTSTAP_PYTHON_WANTED:-0}" = 1 ] && exit 1
    exit 77
fi
export PYTHONPATH=$py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; fi; }
