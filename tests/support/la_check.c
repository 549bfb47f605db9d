/* la_check.c: seedable random numbers and test-matrix generators for the linear-algebra
 * tests (random complex normal batches and batches of prescribed condition number). */
#define _POSIX_C_SOURCE 200809L
#include "la_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TC_TWO_PI 6.283185307179586476925286766559

void tc_rng_seed(tc_rng *r, uint64_t seed) { rt_rng_seed(r, seed, 0); }

int tc_cpu_kernels_from_env(void)
{
    const char *want = getenv("RTSTAP_CPU_KERNELS");
    stap_error err;
    if (stap_la_cpu_kernels_select(want && *want ? want : "auto", &err)) {
        fprintf(stderr, "RTSTAP_CPU_KERNELS: %s\n", err.msg);
        return -1;
    }
    printf("cpu backend kernels: %s\n", stap_la_cpu_kernels());
    return 0;
}

uint64_t tc_seed_from_env(uint64_t fixed)
{
    uint64_t seed = fixed;
    const char *env = getenv("RTSTAP_SEED");
    char *end = NULL;
    if (env && *env) {
        unsigned long long v = strtoull(env, &end, 0);
        if (end && *end == '\0') seed = v; /* exploring or replaying a given seed */
    }
    fprintf(stderr, "seed = %llu\n", (unsigned long long)seed);
    return seed;
}

double tc_uniform(tc_rng *r) { return rt_uniform(r); }

double tc_normal(tc_rng *r)
{
    return sqrt(-2.0 * log(rt_uniform(r))) * cos(TC_TWO_PI * rt_uniform(r));
}

static stap_cf64 cnormal64(tc_rng *r) { return rt_cgauss(r); }

stap_cf32 tc_cnormal(tc_rng *r) { return (stap_cf32)cnormal64(r); }

void tc_random_batch(tc_rng *r, int m, int n, int batch, stap_cf32 *A)
{
    size_t total = (size_t)m * n * batch;
    for (size_t i = 0; i < total; i++) A[i] = tc_cnormal(r);
}

/* Orthonormal columns: the explicit Q (rows x cols) of a random complex normal matrix,
 * by modified Gram-Schmidt applied twice (reorthogonalization keeps it orthonormal to
 * double precision). Q is column-major with leading dimension rows. */
static void random_orthonormal(tc_rng *r, int rows, int cols, stap_cf64 *Q)
{
    for (size_t i = 0; i < (size_t)rows * cols; i++) Q[i] = cnormal64(r);
    for (int j = 0; j < cols; j++) {
        stap_cf64 *q = Q + (size_t)j * rows;
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < j; i++) {
                const stap_cf64 *p = Q + (size_t)i * rows;
                stap_cf64 d = 0;
                for (int t = 0; t < rows; t++) d += conj(p[t]) * q[t];
                for (int t = 0; t < rows; t++) q[t] -= d * p[t];
            }
        double nrm = 0;
        for (int t = 0; t < rows; t++) nrm += creal(q[t]) * creal(q[t]) + cimag(q[t]) * cimag(q[t]);
        nrm = sqrt(nrm);
        for (int t = 0; t < rows; t++) q[t] /= nrm;
    }
}

void tc_illcond_batch(tc_rng *r, int m, int n, int batch, double cond, stap_cf32 *A)
{
    stap_cf64 *U = malloc((size_t)m * n * sizeof *U), *V = malloc((size_t)n * n * sizeof *V);
    double *s = malloc((size_t)n * sizeof *s);
    if (!U || !V || !s) {
        fprintf(stderr, "tc_illcond_batch: out of memory\n");
        abort();
    }
    for (int i = 0; i < n; i++) s[i] = n > 1 ? pow(cond, -(double)i / (n - 1)) : 1.0;
    for (int k = 0; k < batch; k++) {
        random_orthonormal(r, m, n, U);
        random_orthonormal(r, n, n, V);
        stap_cf32 *Ak = A + (size_t)m * n * k;
        /* A = U diag(s) V^H: A(:, j) = sum_i U(:, i) s_i conj(V(j, i)) */
        for (int j = 0; j < n; j++)
            for (int t = 0; t < m; t++) {
                stap_cf64 acc = 0;
                for (int i = 0; i < n; i++) acc += U[(size_t)i * m + t] * (s[i] * conj(V[(size_t)i * n + j]));
                Ak[(size_t)j * m + t] = (stap_cf32)acc;
            }
    }
    free(U);
    free(V);
    free(s);
}

int tc_same_r_on_1_and_2_threads(stap_backend b, stap_qr_method q, tc_rng *rng, stap_error *err)
{
    const int m = 96, n = 16, batch = 9;
    const size_t total = (size_t)m * n * batch;
    stap_cf32 *A1 = malloc(total * sizeof *A1), *A2 = malloc(total * sizeof *A2);
    stap_la_ctx *c1 = NULL, *c2 = NULL;
    int same = -1;
    if (!A1 || !A2) {
        stap_fail(err, STAP_ENOMEM, "out of memory");
        goto out;
    }
    tc_random_batch(rng, m, n, batch, A1);
    memcpy(A2, A1, total * sizeof *A2);
    if (stap_la_ctx_create(&c1, b, 1, err) || stap_la_ctx_create(&c2, b, 2, err) ||
        stap_la_set_qr(c1, q, err) || stap_la_set_qr(c2, q, err) ||
        stap_la_qr(c1, m, n, batch, A1, m, (ptrdiff_t)m * n, err) ||
        stap_la_qr(c2, m, n, batch, A2, m, (ptrdiff_t)m * n, err))
        goto out;
    same = 1;
    for (int k = 0; k < batch; k++)
        for (int j = 0; j < n; j++)
            if (memcmp(&A1[((size_t)k * n + j) * m], &A2[((size_t)k * n + j) * m], (size_t)(j + 1) * sizeof *A1))
                same = 0;
out:
    stap_la_ctx_destroy(c1);
    stap_la_ctx_destroy(c2);
    free(A1);
    free(A2);
    return same;
}
