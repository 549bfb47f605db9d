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

/* k-th smallest (1-based) of v[0..n-1] by quickselect; v is reordered. */
static double select_kth(double *v, int n, int k)
{
    int lo = 0, hi = n - 1, want = k - 1;
    while (lo < hi) {
        double pivot = v[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot) i++;
            while (v[j] > pivot) j--;
            if (i <= j) {
                double t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                j--;
            }
        }
        if (want <= j) hi = j;
        else if (want >= i) lo = i;
        else break;
    }
    return v[want];
}

typedef struct {
    stap_detection *v;
    size_t n, cap;
} det_list;

static int push(det_list *l, stap_detection d)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        stap_detection *nv = realloc(l->v, cap * sizeof *nv);
        if (!nv) return -1;
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = d;
    return 0;
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

    int nmax = 2 * c->train;
    double alpha[2 * STAP_CFAR_MAX_TRAIN + 1], norm[2 * STAP_CFAR_MAX_TRAIN + 1];
    int rank[2 * STAP_CFAR_MAX_TRAIN + 1];
    if ((st = stap_cfar_tables(c, alpha, rank, norm, err))) return st;

    double *p = malloc(sizeof(double) * (size_t)R);
    double *sel = malloc(sizeof(double) * (size_t)(nmax > 0 ? nmax : 1));
    det_list list = {0};
    if (!p || !sel) {
        free(p);
        free(sel);
        return rt_fail(err, RT_ENOMEM, "CFAR: out of memory");
    }
    for (size_t line = 0; line < (size_t)B * D; line++) {
        const cf32 *yl = y + line * R;
        for (int r = 0; r < R; r++) p[r] = stap_cfar_power(crealf(yl[r]), cimagf(yl[r]));
        for (int r = 0; r < R; r++) {
            int lo0, hi0, lo1, hi1;
            stap_cfar_window(r, R, c->guard, c->train, &lo0, &hi0, &lo1, &hi1);
            int n = (hi0 - lo0) + (hi1 - lo1);
            double z, thr;
            if (c->kind == STAP_CFAR_CA) {
                /* summed left to right in this order by the GPU kernel too */
                double s = 0;
                for (int j = lo0; j < hi0; j++) s += p[j];
                for (int j = lo1; j < hi1; j++) s += p[j];
                z = s / (double)n;
            } else {
                int m = 0;
                for (int j = lo0; j < hi0; j++) sel[m++] = p[j];
                for (int j = lo1; j < hi1; j++) sel[m++] = p[j];
                z = select_kth(sel, n, rank[n]);
            }
            thr = alpha[n] * z;
            if (p[r] > thr) {
                stap_detection d =
                    stap_cfar_record(line * R + (size_t)r, D, R, p[r], z / norm[n]);
                if (push(&list, d)) {
                    free(p);
                    free(sel);
                    free(list.v);
                    return rt_fail(err, RT_ENOMEM, "CFAR: out of memory for detections");
                }
            }
        }
    }
    free(p);
    free(sel);
    *out = list.v;
    *count = list.n;
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
