/* la_check: accuracy criteria for the batched factorizations (LAPACK's test ratios)
 * and generators of test matrices; shared by the CPU and GPU tests and by bench-qr's
 * accuracy column (bench uses linalg/la_accuracy.h, this wraps it for tests). */
#ifndef LA_CHECK_H
#define LA_CHECK_H

#include <stdint.h>

#include "linalg.h"
#include "la_accuracy.h"
#include "rt_rng.h"

/* Deterministic, seedable generator (xoshiro/splitmix based). Every test runs from a fixed
 * seed, so that CI cannot fail by chance; RTSTAP_SEED=N runs it from another seed (to
 * explore, or to replay one), and the seed used is printed. */
#define TC_FIXED_SEED 20261203u /* the seed of every run without RTSTAP_SEED */
typedef rt_rng tc_rng;
void tc_rng_seed(tc_rng *r, uint64_t seed);
uint64_t tc_seed_from_env(uint64_t fixed); /* RTSTAP_SEED or fixed; prints "seed = N" */
/* The cpu backend's kernel copy from RTSTAP_CPU_KERNELS (auto | portable; the CTest tests
 * *_portable), handed to stap_la_cpu_kernels_select as rtstap does; prints which runs. 0, or
 * -1 (printed) when the library refused it. */
int tc_cpu_kernels_from_env(void);
double tc_uniform(tc_rng *r);            /* (0,1) */
double tc_normal(tc_rng *r);             /* N(0,1) */
stap_cf32 tc_cnormal(tc_rng *r);              /* complex circular normal, E|z|^2 = 1 */

/* batch random m x n matrices (lda = m, contiguous): entries complex normal. */
void tc_random_batch(tc_rng *r, int m, int n, int batch, stap_cf32 *A);
/* batch m x n matrices with prescribed 2-norm condition number cond (singular values
 * geometrically spaced from 1 to 1/cond, random unitary factors), computed in double. */
void tc_illcond_batch(tc_rng *r, int m, int n, int batch, double cond, stap_cf32 *A);

/* Factor one random batch (96 x 16, 9 matrices) with backend b and factor q on 1 thread and
 * on 2: 1 when the two R agree bit for bit, 0 when they differ, -1 (err filled) when a
 * context could not be made. */
int tc_same_r_on_1_and_2_threads(stap_backend b, stap_qr_method q, tc_rng *rng, stap_error *err);

#endif
