/* cfar.c: CA-, OS-, GO- and SO-CFAR along range and 2-D CA-CFAR over range x Doppler on
 * the adaptive output (see cfar.h for the detectors, their threshold equations and the
 * edge rule). */
#include "cfar.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#ifdef _OPENMP
#include <omp.h>
#endif

void stap_cfar_defaults(stap_cfar_config *c)
{
    c->kind = STAP_CFAR_CA;
    c->pfa = 1e-6;
    c->guard = 2;
    c->train = 16;
    c->os_rank = 0;
    c->guard_doppler = 1;
    c->train_doppler = 2;
}

const char *stap_cfar_kind_name(stap_cfar_kind k)
{
    switch (k) {
    case STAP_CFAR_NONE: return "none";
    case STAP_CFAR_CA: return "ca";
    case STAP_CFAR_OS: return "os";
    case STAP_CFAR_GO: return "go";
    case STAP_CFAR_SO: return "so";
    case STAP_CFAR_CA2D: return "ca2d";
    case STAP_CFAR_AMF: return "amf";
    case STAP_CFAR_KELLY: return "kelly";
    case STAP_CFAR_ACE: return "ace";
    }
    return "invalid";
}

int stap_cfar_parse_kind(const char *s, stap_cfar_kind *k, stap_error *err)
{
    for (int i = STAP_CFAR_NONE; i <= STAP_CFAR_CA2D; i++)
        if (s && !strcasecmp(s, stap_cfar_kind_name((stap_cfar_kind)i))) {
            *k = (stap_cfar_kind)i;
            return STAP_OK;
        }
    return stap_fail(err, STAP_EINVAL,
                     "unknown CFAR kind '%s' (expected none, ca, os, go, so or ca2d)", s ? s : "");
}

static int full_rank(const stap_cfar_config *c)
{
    return c->os_rank > 0 ? c->os_rank : (int)lround(0.75 * 2 * c->train);
}

/* the training cells of CA2D's full rectangle */
static long cells_2d(const stap_cfar_config *c)
{
    return 2L * c->train_doppler * (2L * (c->guard + c->train) + 1) +
           2L * c->train * (2L * c->guard_doppler + 1);
}

size_t stap_cfar_table_len(const stap_cfar_config *c)
{
    if (c->kind == STAP_CFAR_NONE || stap_cfar_is_adaptive(c->kind)) return 1;
    return (size_t)(c->kind == STAP_CFAR_CA2D ? cells_2d(c) : 2L * c->train) + 1;
}

int stap_cfar_validate(const stap_cfar_config *c, int doppler_bins, int range_gates,
                       stap_error *err)
{
    if ((int)c->kind < STAP_CFAR_NONE || (int)c->kind > STAP_CFAR_ACE)
        return stap_fail(err, STAP_EINVAL, "stap_cfar_config.kind %d is not a detector kind",
                         (int)c->kind);
    if (c->kind == STAP_CFAR_NONE) return STAP_OK;
    if (!(c->pfa > 0 && c->pfa < 1))
        return stap_fail(err, STAP_EINVAL,
                         "stap_cfar_config.pfa %g must be between 0 and 1 (exclusive)", c->pfa);
    if (stap_cfar_is_adaptive(c->kind)) return STAP_OK; /* no window (stap_detector_check) */
    if (c->guard < 0 || c->guard > 4096)
        return stap_fail(err, STAP_EINVAL, "stap_cfar_config.guard %d must be between 0 and 4096",
                         c->guard);
    if (c->train < 1 || c->train > STAP_CFAR_MAX_TRAIN)
        return stap_fail(err, STAP_EINVAL, "stap_cfar_config.train %d must be between 1 and %d",
                         c->train, STAP_CFAR_MAX_TRAIN);
    if (c->kind == STAP_CFAR_OS) {
        int k = full_rank(c);
        if (c->os_rank < 0 || k < 1 || k > 2 * c->train)
            return stap_fail(err, STAP_EINVAL,
                             "stap_cfar_config.os_rank %d must be between 1 and "
                             "2 x stap_cfar_config.train = %d", c->os_rank, 2 * c->train);
    }
    long need = 2L * (c->guard + c->train) + 1;
    if (range_gates < need)
        return stap_fail(err, STAP_EINVAL,
                         "CFAR window (2 x (stap_cfar_config.guard %d + stap_cfar_config.train "
                         "%d) + 1 = %ld cells) is longer than the %d range gates",
                         c->guard, c->train, need, range_gates);
    if (c->kind == STAP_CFAR_CA2D) {
        if (c->guard_doppler < 0 || c->guard_doppler > STAP_CFAR_MAX_DOPPLER)
            return stap_fail(err, STAP_EINVAL,
                             "stap_cfar_config.guard_doppler %d must be between 0 and %d",
                             c->guard_doppler, STAP_CFAR_MAX_DOPPLER);
        if (c->train_doppler < 0 || c->train_doppler > STAP_CFAR_MAX_DOPPLER)
            return stap_fail(err, STAP_EINVAL,
                             "stap_cfar_config.train_doppler %d must be between 0 and %d",
                             c->train_doppler, STAP_CFAR_MAX_DOPPLER);
        long dneed = 2L * (c->guard_doppler + c->train_doppler) + 1;
        if (doppler_bins < dneed)
            return stap_fail(err, STAP_EINVAL,
                             "CFAR Doppler window (2 x (stap_cfar_config.guard_doppler %d + "
                             "stap_cfar_config.train_doppler %d) + 1 = %ld bins) is longer than "
                             "the %d Doppler bins", c->guard_doppler, c->train_doppler, dneed,
                             doppler_bins);
        if (cells_2d(c) > STAP_CFAR_MAX_CELLS)
            return stap_fail(err, STAP_EINVAL,
                             "CFAR 2-D window: 2 x stap_cfar_config.train_doppler %d x (2 x "
                             "(stap_cfar_config.guard %d + stap_cfar_config.train %d) + 1) + 2 x "
                             "stap_cfar_config.train x (2 x stap_cfar_config.guard_doppler %d + 1) "
                             "= %ld training cells, more than %d", c->train_doppler, c->guard,
                             c->train, c->guard_doppler, cells_2d(c), STAP_CFAR_MAX_CELLS);
    }
    return STAP_OK;
}

/* Each log pfa(alpha) below decreases in alpha from 0 at alpha = 0 to -inf; solve_alpha
 * finds log pfa by bisection on log alpha, to a relative 1e-15.
 * OS-CFAR (n cells, rank k): log pfa = sum_{i<k} log((n-i)/(n-i+alpha)). */
static double os_log_pfa(int n, int k, double alpha)
{
    double s = 0;
    for (int i = 0; i < k; i++) s += log((double)(n - i)) - log((double)(n - i) + alpha);
    return s;
}

/* GO (greatest = 1) / SO (0) with m cells each side, T = alpha/m, q = 1/(2+T):
 * pfa = 2 q^m sum_k c_k, c_k = C(m-1+k, k) q^k, over k < m (SO) or k >= m (GO); all terms
 * positive (no cancellation). c_{k+1} = c_k (m+k) q / (k+1); for k >= m the ratio is at
 * most 2m q / (m+1) < 1 and falls, so the GO tail after c_k is below c_k ratio/(1-ratio). */
static double goso_log_pfa(int m, int greatest, double alpha)
{
    const double q = 1.0 / (2.0 + alpha / m);
    double c = 1, s = 0;
    int k = 0;
    for (; k < m; k++) {
        if (!greatest) s += c;
        c *= (m + k) * q / (k + 1);
    }
    if (greatest)
        for (; k < 1000000; k++) {
            const double ratio = (m + k) * q / (k + 1);
            s += c;
            if (ratio < 1 && c * ratio / (1 - ratio) < 1e-18 * s) break;
            c *= ratio;
        }
    return log(2.0) + m * log(q) + log(s);
}

static int solve_alpha(double (*log_pfa)(int, int, double), int n, int k, double pfa,
                       double *alpha)
{
    double target = log(pfa), lo = 1e-12, hi = 1.0;
    if (!(log_pfa(n, k, lo) > target)) return -1;
    while (log_pfa(n, k, hi) > target) {
        hi *= 2;
        if (hi > 1e300) return -1;
    }
    for (int it = 0; it < 200; it++) {
        double mid = sqrt(lo * hi);
        if (log_pfa(n, k, mid) > target) lo = mid;
        else hi = mid;
        if (hi / lo - 1 < 1e-15) break;
    }
    *alpha = sqrt(lo * hi);
    return 0;
}

int stap_cfar_tables(const stap_cfar_config *c, double *alpha, int *rank, double *norm,
                     stap_error *err)
{
    const int nmax = (int)stap_cfar_table_len(c) - 1, kfull = full_rank(c);
    alpha[0] = 0;
    rank[0] = 0;
    norm[0] = 1;
    for (int n = 1; n <= nmax; n++) {
        if (c->kind == STAP_CFAR_OS) {
            int k = (int)lround((double)kfull * n / nmax);
            if (k < 1) k = 1;
            if (k > n) k = n;
            rank[n] = k;
            double s = 0;
            for (int i = 0; i < k; i++) s += 1.0 / (n - i);
            norm[n] = s;
            if (solve_alpha(os_log_pfa, n, k, c->pfa, &alpha[n]))
                return stap_fail(err, STAP_ENUMERIC,
                                 "OS-CFAR: no threshold reaches pfa %g with rank %d of %d cells",
                                 c->pfa, k, n);
        } else if ((c->kind == STAP_CFAR_GO || c->kind == STAP_CFAR_SO) && n == nmax) {
            const int m = c->train, greatest = c->kind == STAP_CFAR_GO;
            rank[n] = 0;
            /* E[max / min of two Gamma(m) sums] = m (1 +- C(2m, m) / 4^m) */
            double b = 1;
            for (int i = 1; i <= m; i++) b *= (2.0 * i - 1) / (2.0 * i);
            norm[n] = greatest ? 1 + b : 1 - b;
            if (solve_alpha(goso_log_pfa, m, greatest, c->pfa, &alpha[n]))
                return stap_fail(err, STAP_ENUMERIC, "%s-CFAR: no threshold reaches pfa %g with %d "
                                 "cells each side", greatest ? "GO" : "SO", c->pfa, m);
        } else { /* CA, CA2D, and GO/SO where a side is partial */
            rank[n] = 0;
            norm[n] = 1;
            alpha[n] = n * (pow(c->pfa, -1.0 / n) - 1.0);
        }
    }
    return STAP_OK;
}

stap_detection stap_cfar_record(size_t flat, int D, int R, double power, double noise,
                                double statistic, double threshold)
{
    stap_detection det;
    det.range_cell = (int)(flat % (size_t)R);
    det.doppler_bin = (int)((flat / (size_t)R) % (size_t)D);
    det.beam = (int)(flat / ((size_t)R * D));
    det.power = (float)power;
    det.snr_db = noise > 0 ? (float)(10.0 * log10(power / noise)) : INFINITY;
    det.statistic = (float)statistic;
    det.threshold = (float)threshold;
    return det;
}

/* The OS window as a sorted array, updated as the cell under test slides along range:
 * each step removes at most two powers and adds at most two (O(n) moves instead of a
 * fresh selection per cell). The k-th smallest is then read directly. */
typedef struct {
    double *v;
    int n;
} sorted_window;

static int lower_bound(const double *v, int n, double x)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (v[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}
static void sw_add(sorted_window *w, double x)
{
    int i = lower_bound(w->v, w->n, x);
    memmove(w->v + i + 1, w->v + i, sizeof(double) * (size_t)(w->n - i));
    w->v[i] = x;
    w->n++;
}
static void sw_remove(sorted_window *w, double x)
{
    int i = lower_bound(w->v, w->n, x); /* x is present: w->v[i] == x */
    memmove(w->v + i, w->v + i + 1, sizeof(double) * (size_t)(w->n - i - 1));
    w->n--;
}

/* One range line: the hits (flat index base + r) are appended to *list. p: the line's
 * powers; prefix[r] = p[0] + ... + p[r-1], summed left to right (the GPU kernel sums and
 * differences in the same order, so both detectors decide every cell alike). */
typedef struct hit_list {
    stap_cfar_hit *v;
    size_t n, cap;
    int oom;
} hit_list;

static void push_hit(hit_list *l, size_t flat, double z, double power)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        stap_cfar_hit *v = realloc(l->v, sizeof *v * cap);
        if (!v) {
            l->oom = 1;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (stap_cfar_hit){flat, z, power};
}

struct stap_cfar_plan {
    stap_cfar_config c;
    int B, D, R, threads;
    double *alpha, *norm; /* stap_cfar_table_len entries                              */
    int *rank;
    double *work;      /* per thread: powers (R), prefix (R + 1), OS window (2 train + 2) */
    size_t work_len;   /* doubles per thread                                            */
    double *prefix2d;  /* CA2D: every line's prefix sums, B*D x (R + 1)                  */
    hit_list *lists;   /* per thread                                                    */
    stap_detection *det;
    size_t det_cap;
};

/* The window sum of CA-CFAR from a line's prefix sums, in the order the GPU uses. */
static inline double window_sum(const double *prefix, int lo0, int hi0, int lo1, int hi1)
{
    return (prefix[hi0] - prefix[lo0]) + (prefix[hi1] - prefix[lo1]);
}

/* One range line (index line = b*D + d): the hits (flat index line*R + r) are appended to
 * *list. p: the line's powers; prefix: the line's prefix sums for the 1-D kinds, every
 * line's (line l at prefix + l*(R+1)) for CA2D. */
static void detect_line(const stap_cfar_plan *pl, const double *p, const double *prefix,
                        double *buf, size_t line, hit_list *list)
{
    const stap_cfar_config *c = &pl->c;
    const int R = pl->R, D = pl->D;
    const double *alpha = pl->alpha;
    sorted_window w = {buf, 0};
    int plo0 = 0, phi0 = 0, plo1 = 0, phi1 = 0; /* previous window: empty */
    /* CA2D: the window's Doppler rows, offsets -wd..wd from the line's bin, circular */
    const int wd = c->guard_doppler + c->train_doppler, d = (int)(line % (size_t)D);
    const double *beam_prefix =
        c->kind == STAP_CFAR_CA2D ? prefix + (line - (size_t)d) * (size_t)(R + 1) : prefix;
    for (int r = 0; r < R; r++) {
        int lo0, hi0, lo1, hi1;
        stap_cfar_window(r, R, c->guard, c->train, &lo0, &hi0, &lo1, &hi1);
        const int n = stap_cfar_count(c, lo0, hi0, lo1, hi1);
        double z;
        if (c->kind == STAP_CFAR_OS) {
            /* both bounds of each half only move forward */
            for (int j = plo0; j < lo0 && j < phi0; j++) sw_remove(&w, p[j]);
            for (int j = phi0 > lo0 ? phi0 : lo0; j < hi0; j++) sw_add(&w, p[j]);
            for (int j = plo1; j < lo1 && j < phi1; j++) sw_remove(&w, p[j]);
            for (int j = phi1 > lo1 ? phi1 : lo1; j < hi1; j++) sw_add(&w, p[j]);
            plo0 = lo0;
            phi0 = hi0;
            plo1 = lo1;
            phi1 = hi1;
            z = w.v[pl->rank[n] - 1];
        } else if (c->kind == STAP_CFAR_CA2D) {
            double s = 0;
            for (int o = -wd; o <= wd; o++) {
                const double *q = beam_prefix + (size_t)((d + o + D) % D) * (size_t)(R + 1);
                s += (o < -c->guard_doppler || o > c->guard_doppler)
                         ? q[hi1] - q[lo0]
                         : window_sum(q, lo0, hi0, lo1, hi1);
            }
            z = s / (double)n;
        } else if (c->kind != STAP_CFAR_CA && n == 2 * c->train) { /* GO, SO: both sides full */
            const double sl = prefix[hi0] - prefix[lo0], sr = prefix[hi1] - prefix[lo1];
            const double side = c->kind == STAP_CFAR_GO ? (sl > sr ? sl : sr) : (sl < sr ? sl : sr);
            z = side / (double)c->train;
        } else { /* CA, and GO/SO at the edges */
            z = window_sum(prefix, lo0, hi0, lo1, hi1) / (double)n;
        }
        if (p[r] > alpha[n] * z) push_hit(list, line * (size_t)R + (size_t)r, z, p[r]);
    }
}

/* A line's powers and prefix sums in the blocked order of the GPU (kernels/rtk_pipeline.h):
 * running sums within blocks of 32 cells, block offsets chained left to right. */
static void line_prefix(const stap_cf32 *yl, int R, double *pw, double *prefix)
{
    double off = 0;
    prefix[0] = 0;
    for (int b0 = 0; b0 < R; b0 += 32) {
        double acc = 0;
        const int end = b0 + 32 < R ? b0 + 32 : R;
        for (int r = b0; r < end; r++) {
            pw[r] = stap_cfar_power(crealf(yl[r]), cimagf(yl[r]));
            acc += pw[r];
            prefix[r + 1] = off + acc;
        }
        off += acc;
    }
}

void stap_cfar_plan_destroy(stap_cfar_plan *p)
{
    if (!p) return;
    if (p->lists)
        for (int t = 0; t < p->threads; t++) free(p->lists[t].v);
    free(p->lists);
    free(p->work);
    free(p->prefix2d);
    free(p->alpha);
    free(p->norm);
    free(p->rank);
    free(p->det);
    free(p);
}

int stap_cfar_plan_create(stap_cfar_plan **out, const stap_cfar_config *c, int B, int D, int R,
                          int threads, stap_error *err)
{
    *out = NULL;
    if (B < 1 || D < 1 || R < 1)
        return stap_fail(err, STAP_EINVAL, "CFAR: output shape %d x %d x %d has a zero dimension",
                         B, D, R);
    int st = stap_cfar_validate(c, D, R, err);
    if (st) return st;
    if (stap_cfar_is_adaptive(c->kind))
        return stap_fail(err, STAP_EINVAL, "the %s detector tests snapshots against the weights' "
                         "training: it runs in the engine (stap_engine_options.cfar), not on an "
                         "output alone", stap_cfar_kind_name(c->kind));
    stap_cfar_plan *p = calloc(1, sizeof *p);
    if (!p) return stap_fail(err, STAP_ENOMEM, "CFAR: out of memory");
    p->c = *c;
    p->B = B;
    p->D = D;
    p->R = R;
    p->threads = threads > 0 ? threads : 1;
    const size_t nt = stap_cfar_table_len(c);
    p->alpha = malloc(sizeof(double) * nt);
    p->norm = malloc(sizeof(double) * nt);
    p->rank = malloc(sizeof(int) * nt);
    p->work_len = 2 * (size_t)R + 1 + 2 * (size_t)c->train + 2;
    p->work = malloc(sizeof(double) * p->work_len * p->threads);
    p->lists = calloc((size_t)p->threads, sizeof *p->lists);
    if (c->kind == STAP_CFAR_CA2D)
        p->prefix2d = malloc(sizeof(double) * (size_t)B * D * ((size_t)R + 1));
    if (!p->alpha || !p->norm || !p->rank || !p->work || !p->lists ||
        (c->kind == STAP_CFAR_CA2D && !p->prefix2d)) {
        stap_cfar_plan_destroy(p);
        return stap_fail(err, STAP_ENOMEM, "CFAR: out of memory for %d threads' work space",
                         p->threads);
    }
    p->alpha[0] = p->norm[0] = 1;
    p->rank[0] = 0;
    if (c->kind != STAP_CFAR_NONE && (st = stap_cfar_tables(c, p->alpha, p->rank, p->norm, err))) {
        stap_cfar_plan_destroy(p);
        return st;
    }
    *out = p;
    return STAP_OK;
}

/* Grow the detection array to n entries (only when a CPI detects more than any before). */
static int reserve_det(stap_cfar_plan *p, size_t n, stap_error *err)
{
    if (n <= p->det_cap) return STAP_OK;
    stap_detection *d = realloc(p->det, sizeof *d * n);
    if (!d) return stap_fail(err, STAP_ENOMEM, "CFAR: out of memory for %zu detections", n);
    p->det = d;
    p->det_cap = n;
    return STAP_OK;
}

/* The record of a hit: its noise-power estimate is its window statistic over norm[n], its
 * statistic power / z against the threshold alpha[n]. */
static stap_detection hit_record(const stap_cfar_plan *p, const stap_cfar_hit *h)
{
    int r = (int)(h->flat % (size_t)p->R), lo0, hi0, lo1, hi1;
    stap_cfar_window(r, p->R, p->c.guard, p->c.train, &lo0, &hi0, &lo1, &hi1);
    const int n = stap_cfar_count(&p->c, lo0, hi0, lo1, hi1);
    return stap_cfar_record(h->flat, p->D, p->R, h->power, h->z / p->norm[n],
                            h->z > 0 ? h->power / h->z : INFINITY, p->alpha[n]);
}

int stap_cfar_plan_execute(stap_cfar_plan *p, const stap_cf32 *y, const stap_detection **out,
                           size_t *count, stap_error *err)
{
    *out = NULL;
    *count = 0;
    if (p->c.kind == STAP_CFAR_NONE) return STAP_OK;
    const size_t lines = (size_t)p->B * p->D;
    const int R = p->R, two_d = p->c.kind == STAP_CFAR_CA2D;
    int oom = 0;
#pragma omp parallel num_threads(p->threads) reduction(| : oom)
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        hit_list *list = &p->lists[t];
        list->n = 0;
        double *pw = p->work + p->work_len * t, *prefix = pw + R, *buf = prefix + R + 1;
        if (two_d) { /* every line's prefix sums first: a CUT's window spans bins */
#pragma omp for schedule(static)
            for (size_t line = 0; line < lines; line++)
                line_prefix(y + line * R, R, pw, p->prefix2d + line * (R + 1));
        }
        /* static schedule: thread t takes the t-th contiguous block of lines, so the lists
         * concatenated in thread order are sorted by flat index */
#pragma omp for schedule(static)
        for (size_t line = 0; line < lines; line++) {
            line_prefix(y + line * R, R, pw, prefix);
            detect_line(p, pw, two_d ? p->prefix2d : prefix, buf, line, list);
        }
        oom |= list->oom;
        list->oom = 0;
    }
    if (oom) return stap_fail(err, STAP_ENOMEM, "CFAR: out of memory for the detections");
    size_t n = 0;
    for (int t = 0; t < p->threads; t++) n += p->lists[t].n;
    int st = reserve_det(p, n, err);
    if (st) return st;
    size_t k = 0;
    for (int t = 0; t < p->threads; t++)
        for (size_t i = 0; i < p->lists[t].n; i++, k++) {
            const stap_cfar_hit *h = &p->lists[t].v[i];
            p->det[k] = hit_record(p, h);
        }
    *out = n ? p->det : NULL;
    *count = n;
    return STAP_OK;
}

static int cmp_hit(const void *a, const void *b)
{
    unsigned long long x = ((const stap_cfar_hit *)a)->flat, y = ((const stap_cfar_hit *)b)->flat;
    return x < y ? -1 : x > y;
}

int stap_cfar_plan_finish(stap_cfar_plan *p, stap_cfar_hit *hits, size_t count,
                          const stap_detection **out, size_t *n_out, stap_error *err)
{
    *out = NULL;
    *n_out = 0;
    int st = reserve_det(p, count, err);
    if (st) return st;
    qsort(hits, count, sizeof *hits, cmp_hit);
    for (size_t i = 0; i < count; i++)
        p->det[i] = hit_record(p, &hits[i]);
    *out = count ? p->det : NULL;
    *n_out = count;
    return STAP_OK;
}

const double *stap_cfar_plan_alpha(const stap_cfar_plan *p) { return p->alpha; }
const int *stap_cfar_plan_rank(const stap_cfar_plan *p) { return p->rank; }

int stap_cfar_detect(const stap_cfar_config *c, const stap_cf32 *y, int B, int D, int R,
                     stap_detection **out, size_t *count, stap_error *err)
{
    *out = NULL;
    *count = 0;
    stap_cfar_plan *p;
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    int st = stap_cfar_plan_create(&p, c, B, D, R, threads, err);
    if (st) return st;
    const stap_detection *d;
    size_t n;
    st = stap_cfar_plan_execute(p, y, &d, &n, err);
    if (!st && n) {
        *out = malloc(sizeof **out * n);
        if (!*out) st = stap_fail(err, STAP_ENOMEM, "CFAR: out of memory for %zu detections", n);
        else {
            memcpy(*out, d, sizeof **out * n);
            *count = n;
        }
    }
    stap_cfar_plan_destroy(p);
    return st;
}

void stap_cfar_describe(const stap_cfar_config *c, char *buf, size_t len)
{
    if (c->kind == STAP_CFAR_NONE) {
        snprintf(buf, len, "none");
        return;
    }
    if (stap_cfar_is_adaptive(c->kind))
        snprintf(buf, len, "%s pfa=%g", stap_cfar_kind_name(c->kind), c->pfa);
    else if (c->kind == STAP_CFAR_OS)
        snprintf(buf, len, "os pfa=%g guard=%d train=%d rank=%d", c->pfa, c->guard, c->train,
                 full_rank(c));
    else if (c->kind == STAP_CFAR_CA2D)
        snprintf(buf, len, "ca2d pfa=%g guard=%d train=%d guard_doppler=%d train_doppler=%d",
                 c->pfa, c->guard, c->train, c->guard_doppler, c->train_doppler);
    else
        snprintf(buf, len, "%s pfa=%g guard=%d train=%d", stap_cfar_kind_name(c->kind), c->pfa,
                 c->guard, c->train);
}
