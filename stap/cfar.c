/* cfar.c: CA- and OS-CFAR along range on the adaptive output (see cfar.h for the
 * detector, its threshold equations and the edge rule). */
#include "cfar.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void stap_cfar_defaults(stap_cfar_config *c)
{
    c->kind = STAP_CFAR_CA;
    c->pfa = 1e-6;
    c->guard = 2;
    c->train = 16;
    c->os_rank = 0;
}

const char *stap_cfar_kind_name(stap_cfar_kind k)
{
    switch (k) {
    case STAP_CFAR_NONE: return "none";
    case STAP_CFAR_CA: return "ca";
    case STAP_CFAR_OS: return "os";
    }
    return "invalid";
}

int stap_cfar_parse_kind(const char *s, stap_cfar_kind *k, rt_error *err)
{
    if (s && !strcmp(s, "none")) *k = STAP_CFAR_NONE;
    else if (s && !strcmp(s, "ca")) *k = STAP_CFAR_CA;
    else if (s && !strcmp(s, "os")) *k = STAP_CFAR_OS;
    else return rt_fail(err, RT_EINVAL, "unknown CFAR kind '%s' (expected none, ca or os)",
                        s ? s : "");
    return RT_OK;
}

static int full_rank(const stap_cfar_config *c)
{
    return c->os_rank > 0 ? c->os_rank : (int)lround(0.75 * 2 * c->train);
}

int stap_cfar_validate(const stap_cfar_config *c, int range_gates, rt_error *err)
{
    if (c->kind != STAP_CFAR_NONE && c->kind != STAP_CFAR_CA && c->kind != STAP_CFAR_OS)
        return rt_fail(err, RT_EINVAL, "--cfar: unknown detector kind %d", (int)c->kind);
    if (c->kind == STAP_CFAR_NONE) return RT_OK;
    if (!(c->pfa > 0 && c->pfa < 1))
        return rt_fail(err, RT_EINVAL, "--cfar-pfa %g must be between 0 and 1 (exclusive)",
                       c->pfa);
    if (c->guard < 0 || c->guard > 4096)
        return rt_fail(err, RT_EINVAL, "--cfar-guard %d must be between 0 and 4096", c->guard);
    if (c->train < 1 || c->train > STAP_CFAR_MAX_TRAIN)
        return rt_fail(err, RT_EINVAL, "--cfar-train %d must be between 1 and %d", c->train,
                       STAP_CFAR_MAX_TRAIN);
    if (c->kind == STAP_CFAR_OS) {
        int k = full_rank(c);
        if (c->os_rank < 0 || k < 1 || k > 2 * c->train)
            return rt_fail(err, RT_EINVAL,
                           "--cfar-rank %d must be between 1 and 2 x --cfar-train = %d",
                           c->os_rank, 2 * c->train);
    }
    long need = 2L * (c->guard + c->train) + 1;
    if (range_gates < need)
        return rt_fail(err, RT_EINVAL,
                       "CFAR window (2 x (--cfar-guard %d + --cfar-train %d) + 1 = %ld cells) "
                       "is longer than the %d range gates",
                       c->guard, c->train, need, range_gates);
    return RT_OK;
}

/* OS-CFAR: log pfa(alpha) = sum_{i<k} log((n-i)/(n-i+alpha)), decreasing in alpha
 * from 0 at alpha = 0 to -inf; solved for log pfa by bisection on log alpha. */
static double os_log_pfa(int n, int k, double alpha)
{
    double s = 0;
    for (int i = 0; i < k; i++) s += log((double)(n - i)) - log((double)(n - i) + alpha);
    return s;
}

static int os_alpha(int n, int k, double pfa, double *alpha)
{
    double target = log(pfa), lo = 1e-12, hi = 1.0;
    while (os_log_pfa(n, k, hi) > target) {
        hi *= 2;
        if (hi > 1e300) return -1;
    }
    for (int it = 0; it < 200; it++) {
        double mid = sqrt(lo * hi);
        if (os_log_pfa(n, k, mid) > target) lo = mid;
        else hi = mid;
        if (hi / lo - 1 < 1e-15) break;
    }
    *alpha = sqrt(lo * hi);
    return 0;
}

int stap_cfar_tables(const stap_cfar_config *c, double *alpha, int *rank, double *norm,
                     rt_error *err)
{
    int nmax = 2 * c->train, kfull = full_rank(c);
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
            if (os_alpha(n, k, c->pfa, &alpha[n]))
                return rt_fail(err, RT_ENUMERIC,
                               "OS-CFAR: no threshold reaches pfa %g with rank %d of %d cells",
                               c->pfa, k, n);
        } else {
            rank[n] = 0;
            norm[n] = 1;
            alpha[n] = n * (pow(c->pfa, -1.0 / n) - 1.0);
        }
    }
    return RT_OK;
}

stap_detection stap_cfar_record(size_t flat, int D, int R, double power, double noise)
{
    stap_detection det;
    det.range_cell = (int)(flat % (size_t)R);
    det.doppler_bin = (int)((flat / (size_t)R) % (size_t)D);
    det.beam = (int)(flat / ((size_t)R * D));
    det.power = (float)power;
    det.snr_db = noise > 0 ? (float)(10.0 * log10(power / noise)) : INFINITY;
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

/* One range line: hit[r] = 1 and z[r] = the window statistic where a cell detects. */
static void detect_line(const stap_cfar_config *c, const double *alpha, const int *rank,
                        const double *p, int R, double *buf, unsigned char *hit, double *zout)
{
    sorted_window w = {buf, 0};
    int plo0 = 0, phi0 = 0, plo1 = 0, phi1 = 0; /* previous window: empty */
    for (int r = 0; r < R; r++) {
        int lo0, hi0, lo1, hi1;
        stap_cfar_window(r, R, c->guard, c->train, &lo0, &hi0, &lo1, &hi1);
        const int n = (hi0 - lo0) + (hi1 - lo1);
        double z;
        if (c->kind == STAP_CFAR_CA) {
            /* summed left to right in this order by the GPU kernel too */
            double s = 0;
            for (int j = lo0; j < hi0; j++) s += p[j];
            for (int j = lo1; j < hi1; j++) s += p[j];
            z = s / (double)n;
        } else {
            /* both bounds of each half only move forward */
            for (int j = plo0; j < lo0 && j < phi0; j++) sw_remove(&w, p[j]);
            for (int j = phi0 > lo0 ? phi0 : lo0; j < hi0; j++) sw_add(&w, p[j]);
            for (int j = plo1; j < lo1 && j < phi1; j++) sw_remove(&w, p[j]);
            for (int j = phi1 > lo1 ? phi1 : lo1; j < hi1; j++) sw_add(&w, p[j]);
            plo0 = lo0;
            phi0 = hi0;
            plo1 = lo1;
            phi1 = hi1;
            z = w.v[rank[n] - 1];
        }
        hit[r] = p[r] > alpha[n] * z;
        zout[r] = z;
    }
}

int stap_cfar_detect(const stap_cfar_config *c, const cf32 *y, int B, int D, int R,
                     stap_detection **out, size_t *count, rt_error *err)
{
    *out = NULL;
    *count = 0;
    if (B < 1 || D < 1 || R < 1)
        return rt_fail(err, RT_EINVAL, "CFAR: output shape %d x %d x %d has a zero dimension",
                       B, D, R);
    int st = stap_cfar_validate(c, R, err);
    if (st || c->kind == STAP_CFAR_NONE) return st;

    const int nmax = 2 * c->train;
    double alpha[2 * STAP_CFAR_MAX_TRAIN + 1], norm[2 * STAP_CFAR_MAX_TRAIN + 1];
    int rank[2 * STAP_CFAR_MAX_TRAIN + 1];
    if ((st = stap_cfar_tables(c, alpha, rank, norm, err))) return st;

    const size_t lines = (size_t)B * D, cells = lines * R;
    unsigned char *hit = malloc(cells);
    double *z = malloc(sizeof(double) * cells), *p = malloc(sizeof(double) * cells);
    if (!hit || !z || !p) {
        free(hit);
        free(z);
        free(p);
        return rt_fail(err, RT_ENOMEM, "CFAR: out of memory for %zu cells", cells);
    }
    int oom = 0;
#pragma omp parallel reduction(| : oom)
    {
        double *buf = malloc(sizeof(double) * (size_t)(nmax + 2));
        if (!buf) oom = 1;
#pragma omp for schedule(static)
        for (size_t line = 0; line < lines; line++) {
            if (!buf) continue;
            const cf32 *yl = y + line * R;
            double *pl = p + line * R;
            for (int r = 0; r < R; r++) pl[r] = stap_cfar_power(crealf(yl[r]), cimagf(yl[r]));
            detect_line(c, alpha, rank, pl, R, buf, hit + line * R, z + line * R);
        }
        free(buf);
    }
    size_t n = 0;
    for (size_t i = 0; i < cells && !oom; i++) n += hit[i];
    stap_detection *det = oom ? NULL : malloc(sizeof(stap_detection) * (n ? n : 1));
    if (!det) {
        free(hit);
        free(z);
        free(p);
        return rt_fail(err, RT_ENOMEM, "CFAR: out of memory for detections");
    }
    size_t k = 0;
    for (size_t i = 0; i < cells; i++) {
        if (!hit[i]) continue;
        int r = (int)(i % (size_t)R), lo0, hi0, lo1, hi1;
        stap_cfar_window(r, R, c->guard, c->train, &lo0, &hi0, &lo1, &hi1);
        det[k++] = stap_cfar_record(i, D, R, p[i], z[i] / norm[(hi0 - lo0) + (hi1 - lo1)]);
    }
    free(hit);
    free(z);
    free(p);
    if (n == 0) {
        free(det);
        det = NULL;
    }
    *out = det;
    *count = n;
    return RT_OK;
}

void stap_cfar_describe(const stap_cfar_config *c, char *buf, size_t len)
{
    if (c->kind == STAP_CFAR_NONE) {
        snprintf(buf, len, "none");
        return;
    }
    if (c->kind == STAP_CFAR_OS)
        snprintf(buf, len, "os pfa=%g guard=%d train=%d rank=%d", c->pfa, c->guard, c->train,
                 full_rank(c));
    else
        snprintf(buf, len, "ca pfa=%g guard=%d train=%d", c->pfa, c->guard, c->train);
}
