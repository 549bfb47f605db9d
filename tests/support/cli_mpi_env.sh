# cli_mpi_env.sh: what the rtstap-mpi CLI tests share (sourced, not run): skip (77) without
# rtstap-mpi or mpirun, unless the build should have made it (RTSTAP_REQUIRE_MPI=1 with
# RTSTAP_MPI_WANTED=1: fail); Open MPI's settings for CI (root in a container, shared memory
# without CMA, more ranks than cores). Needs the test's name as $1; sets bin, mpi.
[ -x "${RTSTAP_BIN:-}" ] || { echo "RTSTAP_BIN not set"; exit 77; }
if [ ! -x "${RTSTAP_MPI_BIN:-}" ] || ! command -v mpirun >/dev/null; then
    echo "$1: rtstap-mpi was not built or mpirun is missing (libopenmpi-dev, openmpi-bin)"
    [ "${RTSTAP_REQUIRE_MPI:-0}" = 1 ] && [ "${RTSTAP_MPI_WANTED:-0}" = 1 ] && exit 1
    exit 77
fi
bin=$RTSTAP_BIN
mpi=$RTSTAP_MPI_BIN
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
