/* env.h: the environment variables rtstap (and its Python module) reads and hands to the
 * library, which reads none of them itself: memory limits, the GPU engine's tuning switches,
 * the CPU kernels, the HDF5 reader and the test hooks (docs/usage.md "Environment"). Prints
 * nothing: the callers report. */
#ifndef CLI_ENV_H
#define CLI_ENV_H

#include "rtstap/engine.h"
#include "rtstap/h5io.h"
#include "rtstap/linalg.h"

/* Process-wide settings, once at start: RTSTAP_CPU_KERNELS (auto | portable) and the test
 * hooks RTSTAP_TEST_FAIL_ENGINE, RTSTAP_TEST_FAIL_DEVICE_ALLOC, RTSTAP_TEST_DEVICE_TRAP
 * (stap_test_hooks). STAP_EINVAL naming a malformed variable. */
int cli_env_process(stap_error *err);
/* stap_engine_options_defaults, then RTSTAP_MEMORY_LIMIT and RTSTAP_DEVICE_MEMORY_LIMIT
 * (bytes, k/M/G/T suffixes: powers of 1024) and the tuning (cli_env_tuning). STAP_EINVAL
 * naming a malformed variable. */
int cli_env_engine_defaults(stap_engine_options *o, stap_error *err);
/* The GPU engine's switches, for comparisons (stap_engine_tuning): RTSTAP_DOPPLER_FUSED
 * (1: the one-kernel Doppler filter wherever D is a power of two, 0: never),
 * RTSTAP_DOPPLER_TILE=32, RTSTAP_APPLY_ROWS=1, RTSTAP_APPLY_FP32=1, RTSTAP_APPLY_CFAR=0,
 * RTSTAP_CFAR_TWO_PASS=1, RTSTAP_CFAR_LINE_THREADS=32|64|128, RTSTAP_QR_DISPATCH=model|table|
 * fused|separate, RTSTAP_FUSED_SOLVER=blocked|subst. Unset or empty: the default. */
int cli_env_tuning(stap_engine_tuning *t, stap_error *err);
/* RTSTAP_READER=hdf5: recordings read on the HDF5 path only (stap_read_options.hdf5_only);
 * =direct or unset: the direct path where it can. */
int cli_env_reader(stap_read_options *r, stap_error *err);

#endif
