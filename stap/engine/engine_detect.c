/* engine_detect.c: the adaptive detectors in the CPU engine (engine_detect.h). For training
 * matrix k = d*S + s with QR factor R (S = R^H R = K Rhat), every cell r of segment (block) s
 * and Doppler bin d: its snapshot x (the training's row layout: x[c*Q + q] = X[c, tap(d, q),
 * r]), z = R^-H x by forward substitution, b = |z|^2 = x^H S^-1 x; per beam, with
 * zv = R^-H v (once per matrix): v^H S^-1 x = zv^H z, a = |zv^H z|^2 / |zv|^2; the
 * statistic from a and b (stap_detector_statistic). Beamspace (JDL): a matrix per beam,
 * k = b*D*S + d*S + s, x and v in that beam's beamspace (T_b^H x, T_b^H v). In double
 * throughout. */
#include "engine_detect.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "engine_internal.h"

typedef struct det_list {
    stap_detection *v;
    size_t n, cap;
    int oom;
} det_list;

struct stap_engine_detect {
    stap_cfar_kind kind;
    double eta;
    int threads;
    double complex *work; /* per thread: zv (B x Nt), x, z (Nt each)  */
    double *vsv;          /* per thread: |zv|^2 of each beam (B)       */
    det_list *lists;      /* per thread                                */
    stap_detection *det;  /* the CPI's, merged and sorted              */
    size_t det_cap;
};

void stap_engine_detect_destroy(stap_engine_detect *d)
{
    if (!d) return;
    if (d->lists)
        for (int t = 0; t < d->threads; t++) free(d->lists[t].v);
    free(d->lists);
    free(d->work);
    free(d->vsv);
    free(d->det);
    free(d);
}

int stap_engine_detect_create(const stap_engine *e, int threads, stap_engine_detect **out,
                              stap_error *err)
{
    *out = NULL;
    int st = stap_detector_check(&e->opt.cfar, &e->cfg, err);
    if (st) return st;
    stap_engine_detect *d = calloc(1, sizeof *d);
    if (!d) return stap_fail(err, STAP_ENOMEM, "out of memory for the adaptive detector");
    d->kind = e->opt.cfar.kind;
    d->threads = threads > 0 ? threads : 1;
    d->work = malloc(sizeof(double complex) * (size_t)d->threads * (e->B + 2) * e->Nt);
    d->vsv = malloc(sizeof(double) * (size_t)d->threads * e->B);
    d->lists = calloc((size_t)d->threads, sizeof *d->lists);
    if (!d->work || !d->vsv || !d->lists) {
        stap_engine_detect_destroy(d);
        return stap_fail(err, STAP_ENOMEM, "out of memory for the adaptive detector");
    }
    if ((st = stap_detector_threshold(d->kind, e->Nt, e->cfg.training, e->opt.cfar.pfa, &d->eta,
                                      err))) {
        stap_engine_detect_destroy(d);
        return st;
    }
    *out = d;
    return STAP_OK;
}

double stap_engine_detect_threshold(const stap_engine_detect *d) { return d->eta; }

/* z = R^-H x: R upper triangular, R[i][j] = T[j*ld + i]; (R^H)[i][j] = conj(T[i*ld + j]). */
static void solve_rh(const stap_cf32 *T, int ld, int n, const double complex *x, double complex *z)
{
    for (int i = 0; i < n; i++) {
        const stap_cf32 *col = T + (size_t)i * ld;
        double complex s = x[i];
        for (int j = 0; j < i; j++) s -= conj((double complex)col[j]) * z[j];
        z[i] = s / conj((double complex)col[i]);
    }
}

static void push_det(det_list *l, stap_detection det)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        stap_detection *v = realloc(l->v, sizeof *v * cap);
        if (!v) {
            l->oom = 1;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = det;
}

/* The snapshot of cell r in Doppler bin d as the training rows hold it: element space
 * x[c*Q + q] = X[c, tap(d, q), r]; in beam b's beamspace (JDL, A = the beam's C x Na
 * transform) x[j*Q + q] = sum_c conj(A[j][c]) X[c, tap(d, q), r]. */
static void snapshot(const stap_engine *e, const stap_cf32 *A, const stap_cf32 *X, int d, int r,
                     double complex *x)
{
    const int C = e->cfg.channels, D = e->cfg.doppler_bins, Q = e->cfg.doppler_order;
    const size_t R = e->cfg.range_gates;
    if (!A) {
        for (int ch = 0; ch < C; ch++)
            for (int q = 0; q < Q; q++)
                x[ch * Q + q] = X[((size_t)ch * D + stap_tap_bin(d, q, Q, D)) * R + r];
        return;
    }
    const int Na = e->Nt / Q;
    for (int i = 0; i < e->Nt; i++) x[i] = 0;
    for (int q = 0; q < Q; q++)
        for (int ch = 0; ch < C; ch++) {
            const double complex xc = X[((size_t)ch * D + stap_tap_bin(d, q, Q, D)) * R + r];
            for (int j = 0; j < Na; j++) x[j * Q + q] += conj((double complex)A[(size_t)j * C + ch]) * xc;
        }
}

/* The cells of training matrix k: k = d*S + s with every beam's statistic, or (beamspace,
 * JDL) k = b*D*S + d*S + s with beam b's alone, in its beamspace. */
static void detect_matrix(const stap_engine *e, const stap_engine_detect *d, int k,
                          const stap_cf32 *X, const stap_cf32 *T, const stap_cf32 *Y,
                          double complex *w, double *vsv, det_list *list)
{
    const int D = e->cfg.doppler_bins, S = e->cfg.segments, K = e->cfg.training, N = e->Nt, L = e->L;
    const size_t R = e->cfg.range_gates;
    const int space = (stap_algorithm_traits(&e->cfg) & STAP_TRAIT_BEAMSPACE) != 0, DS = D * S;
    const int b0 = space ? k / DS : 0, nb = space ? 1 : e->B, dbin = k % DS / S, s = k % S;
    const stap_cf32 *A = space ? e->tables.beamspace.A + (size_t)b0 * e->cfg.channels * (N / e->cfg.doppler_order) : NULL;
    const stap_cf32 *Rk = T + (size_t)k * e->M * N;
    double complex *zv = w, *x = zv + (size_t)e->B * N, *z = x + N;
    for (int i = 0; i < nb; i++) {
        const stap_cf32 *v = space ? e->tables.beamspace.Vt + (size_t)b0 * N : e->V + (size_t)i * e->N;
        for (int j = 0; j < N; j++) x[j] = v[j];
        solve_rh(Rk, e->M, N, x, zv + (size_t)i * N);
        double n2 = 0;
        for (int j = 0; j < N; j++) n2 += creal(zv[(size_t)i * N + j] * conj(zv[(size_t)i * N + j]));
        vsv[i] = n2;
    }
    for (int r = s * L; r < (s + 1) * L; r++) {
        snapshot(e, A, X, dbin, r, x);
        solve_rh(Rk, e->M, N, x, z);
        double bq = 0;
        for (int j = 0; j < N; j++) bq += creal(z[j] * conj(z[j]));
        for (int i = 0; i < nb; i++) {
            double complex c = 0;
            const double complex *zb = zv + (size_t)i * N;
            for (int j = 0; j < N; j++) c += conj(zb[j]) * z[j];
            const double a = creal(c * conj(c)) / vsv[i];
            const double t = stap_detector_statistic(d->kind, K, a, bq);
            if (t > d->eta) {
                const size_t flat = ((size_t)(b0 + i) * D + dbin) * R + (size_t)r;
                const stap_cf32 y = Y[flat];
                stap_detection det = stap_cfar_record(flat, D, (int)R, stap_cfar_power(crealf(y), cimagf(y)),
                                                      1.0, t, d->eta);
                det.snr_db = (float)(10.0 * log10(K * a));
                push_det(list, det);
            }
        }
    }
}

static int cmp_det(const void *pa, const void *pb)
{
    const stap_detection *a = pa, *b = pb;
    if (a->beam != b->beam) return a->beam < b->beam ? -1 : 1;
    if (a->doppler_bin != b->doppler_bin) return a->doppler_bin < b->doppler_bin ? -1 : 1;
    return (a->range_cell > b->range_cell) - (a->range_cell < b->range_cell);
}

int stap_engine_detect_run(const stap_engine *e, stap_engine_detect *d, const stap_cf32 *X,
                           const stap_cf32 *T, const stap_cf32 *Y, const stap_detection **out,
                           size_t *count, stap_error *err)
{
    *out = NULL;
    *count = 0;
    const int mats = (int)stap_training_matrices(&e->cfg);
    int oom = 0;
#pragma omp parallel num_threads(d->threads) reduction(| : oom)
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        det_list *list = &d->lists[t];
        list->n = 0;
        double complex *w = d->work + (size_t)t * (e->B + 2) * e->Nt;
        double *vsv = d->vsv + (size_t)t * e->B;
#pragma omp for schedule(dynamic, 4)
        for (int k = 0; k < mats; k++) detect_matrix(e, d, k, X, T, Y, w, vsv, list);
        oom |= list->oom;
        list->oom = 0;
    }
    if (oom) return stap_fail(err, STAP_ENOMEM, "out of memory for the %s detections",
                              stap_cfar_kind_name(d->kind));
    size_t n = 0;
    for (int t = 0; t < d->threads; t++) n += d->lists[t].n;
    if (n > d->det_cap) {
        stap_detection *v = realloc(d->det, sizeof *v * n);
        if (!v) return stap_fail(err, STAP_ENOMEM, "out of memory for %zu detections", n);
        d->det = v;
        d->det_cap = n;
    }
    size_t k = 0;
    for (int t = 0; t < d->threads; t++) {
        if (d->lists[t].n) memcpy(d->det + k, d->lists[t].v, sizeof *d->det * d->lists[t].n);
        k += d->lists[t].n;
    }
    if (n > 1) qsort(d->det, n, sizeof *d->det, cmp_det);
    *out = n ? d->det : NULL;
    *count = n;
    return STAP_OK;
}
