/* la_random: reproducible random test matrices for benchmarks (xoshiro256**). */
#ifndef LA_RANDOM_H
#define LA_RANDOM_H

#include <stdint.h>

#include "linalg.h"

#include "rt_hidden.h"
/* batch m x n matrices (contiguous, lda = m) of circular complex Gaussian entries with
 * E|a|^2 = 1, from `seed`. */
RT_INTERNAL void stap_la_random_batch(uint64_t seed, int m, int n, int batch, stap_cf32 *A);

#endif
