/* fit_qr_model: fits the parameters of the QR performance model (kernels/rtk_model.h) to
 * timings of every kernel variant, as tests/bench/gpu/gpu_bench --all prints them (the lines
 * with the model's facts after '|'), and reports the fit row by row.
 *
 * usage: fit_qr_model [--check | --cv | --cluster | --weights | --separate] [--require ERR,PICK] BENCH_LOG [BENCH_LOG...]
 *   default  fit (Nelder-Mead on the mean squared log ratio predicted/measured, all
 *            parameters positive, from the built-in H100 parameters), print the
 *            parameter block for kernels/qr_model.cu, then the report
 *   --check  no fit: the report for the built-in parameters (a log measured after the
 *            fit is the out-of-sample test)
 *   --cluster fit only the cluster rows' parameters (cl_col, cl_cta, cl_warp), the others as
 *            built in
 *   --weights fit only the fused weights' parameters (w0, w_lane, w_warp), the others as built
 *            in (the fused timings refreshed without touching the QR terms)
 *   --cv     leave-one-shape-out cross-validation: for every (m, n, batch) of the logs, fit
 *            every parameter without that shape's rows (Nelder-Mead from the built-in
 *            parameters, 2 rounds of 2000 iterations), then predict its rows and pick among
 *            them; prints the misses (> 25 %) and the picks more than 10 % off the fastest,
 *            then a summary. The out-of-sample test that needs no new measurements (a few
 *            minutes for the three shipped logs). With --cluster, only the cluster
 *            parameters are refitted.
 * Report: every timed row (QR alone; QR + beams for rows that fuse) with measured and
 * predicted microseconds and the relative error; per size, the variant the model picks
 * against the fastest measured (QR + beams among fused rows, and QR alone); a summary
 * line with the worst error and the worst pick.
 *   --separate the weight kernel (QR alone, then kernels/weights.cu; rtk_model_weights): per
 *            shape and log, its time measured as the median of (QR + weights) - QR over the
 *            rows that do not fuse (clusters, smem512, global512); fits its five parameters
 *            by weighted linear least squares (with --check: the built-in ones), prints them,
 *            the shapes, and per shape the plan the model makes for QR + weights — the fused
 *            variant it picks, or the QR alone with its pick followed by the weight kernel —
 *            against the fastest of both (the QR alone + the weight kernel measured as that
 *            variant's QR + the shape's weight-kernel time)
 *   --gather FILE  the training gather's two parameters (rtk_model_gather) fitted by weighted
 *            linear least squares (with --check: the built-in ones) to FILE's lines "m n batch
 *            us" (tests/bench/data/gather_h100.txt), and the rows; no bench logs needed
 *   --require ERR,PICK  exit 1 unless every prediction is within ERR % of its measurement
 *            and every pick within PICK % of the fastest (the CTest qr_model runs --check
 *            with it on the shipped H100 logs, tests/bench/data/qr_model_h100_*.log)
 * Exit 0; 1 on unreadable input or a --require not met; 2 on usage. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtk_model.h"



typedef struct {
    int m, n, batch;
    char name[32];
    double qr, qrw;
    rtk_qr_facts f0, f1;
    int out;  /* --cv: left out of the fit */
    int file; /* which log */
} Row;

static Row *rows;
static int nrows;
static int nbeams = 16;

static int nfiles;

static int parse(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return 1;
    char line[1024];
    while (fgets(line, sizeof line, fp)) {
        if (strstr(line, "==== gpu_bench") && strstr(line, "--beams")) {
            const char *b = strstr(line, "--beams");
            nbeams = atoi(b + 8);
        }
        char *bar = strchr(line, '|');
        if (!bar) continue;
        Row r;
        memset(&r, 0, sizeof r);
        char name[32];
        if (sscanf(line, " %dx%d x%d %31s %lf %lf", &r.m, &r.n, &r.batch, name, &r.qr, &r.qrw) != 6)
            continue;
        snprintf(r.name, sizeof r.name, "%.31s", name[0] == '*' ? name + 1 : name);
        rtk_qr_facts f;
        memset(&f, 0, sizeof f);
        int b1 = 0, l1 = 0, solver = 0;
        double p0, p1;
        /* the 16th field, the fused kernel's solver warp, since 2026-11-26 (older logs: 0) */
        const int got = sscanf(bar + 1, "%d %d %d %d %d %d %d %d %d %d %d %d %lf %lf %lf %d", &f.storage,
                               &f.tr, &f.tc, &f.rpt, &f.cpt, &f.mats, &f.nt, &f.blocks_per_sm, &b1,
                               &f.local_bytes, &l1, &f.sms, &f.clock_mhz, &p0, &p1, &solver);
        if (got != 15 && got != 16) continue;
        r.f0 = f;
        r.f1 = f;
        r.f1.blocks_per_sm = b1;
        r.f1.local_bytes = l1;
        r.f1.solver = solver;
        r.file = nfiles;
        Row *nr = realloc(rows, (nrows + 1) * sizeof *rows);
        if (!nr) return 1;
        rows = nr;
        rows[nrows++] = r;
    }
    fclose(fp);
    nfiles++;
    return 0;
}

/* the rows that fuse (register rows timed with the weights too) */
static int fuses(const Row *r) { return r->f0.storage == 0 && r->f1.blocks_per_sm > 0; }

static double predict_row(const rtk_qr_model *p, const Row *r, int kind)
{
    return kind ? rtk_model_predict(p, &r->f1, r->m, r->n, r->batch, nbeams)
                : rtk_model_predict(p, &r->f0, r->m, r->n, r->batch, 0);
}

/* the rows that enter the fit: QR alone always, QR + beams for fusing (register) rows */
static double loss(const rtk_qr_model *p)
{
    double s = 0;
    int k = 0;
    for (int i = 0; i < nrows; i++) {
        const Row *r = &rows[i];
        if (r->out) continue;
        double e = log(predict_row(p, r, 0) / r->qr);
        s += e * e, k++;
        if (fuses(r)) {
            e = log(predict_row(p, r, 1) / r->qrw);
            s += e * e, k++;
        }
    }
    return k ? s / k : 0;
}

enum { NP = RTK_MODEL_NPARAM };

static int fit_from;      /* --cluster: the parameters before cl_col stay the built-in ones */
static int fit_to = NP;   /* --weights: only w0, w_lane, w_warp are fitted */

static double loss_x(const double *x)
{
    rtk_qr_model p = rtk_qr_model_h100;
    double *q = (double *)&p;
    for (int i = fit_from; i < fit_to; i++) q[i] = exp(x[i]);
    return loss(&p);
}

/* Nelder-Mead over log-parameters */
static void nelder_mead(double *x0, int iters)
{
    double s[NP + 1][NP], f[NP + 1];
    for (int i = 0; i <= NP; i++) {
        for (int j = 0; j < NP; j++) s[i][j] = x0[j];
        if (i) s[i][i - 1] += 0.5;
        f[i] = loss_x(s[i]);
    }
    for (int it = 0; it < iters; it++) {
        int lo = 0, hi = 0, nh = 0;
        for (int i = 0; i <= NP; i++) {
            if (f[i] < f[lo]) lo = i;
            if (f[i] > f[hi]) hi = i;
        }
        nh = lo;
        for (int i = 0; i <= NP; i++)
            if (i != hi && f[i] > f[nh]) nh = i;
        double c[NP], xr[NP], xe[NP], xc[NP];
        for (int j = 0; j < NP; j++) {
            c[j] = 0;
            for (int i = 0; i <= NP; i++)
                if (i != hi) c[j] += s[i][j] / NP;
        }
        for (int j = 0; j < NP; j++) xr[j] = c[j] + (c[j] - s[hi][j]);
        double fr = loss_x(xr);
        if (fr < f[lo]) {
            for (int j = 0; j < NP; j++) xe[j] = c[j] + 2 * (c[j] - s[hi][j]);
            double fe = loss_x(xe);
            if (fe < fr) memcpy(s[hi], xe, sizeof xe), f[hi] = fe;
            else memcpy(s[hi], xr, sizeof xr), f[hi] = fr;
        } else if (fr < f[nh]) {
            memcpy(s[hi], xr, sizeof xr), f[hi] = fr;
        } else {
            for (int j = 0; j < NP; j++) xc[j] = c[j] + 0.5 * (s[hi][j] - c[j]);
            double fc = loss_x(xc);
            if (fc < f[hi]) {
                memcpy(s[hi], xc, sizeof xc), f[hi] = fc;
            } else {
                for (int i = 0; i <= NP; i++) {
                    if (i == lo) continue;
                    for (int j = 0; j < NP; j++) s[i][j] = s[lo][j] + 0.5 * (s[i][j] - s[lo][j]);
                    f[i] = loss_x(s[i]);
                }
            }
        }
    }
    int lo = 0;
    for (int i = 0; i <= NP; i++)
        if (f[i] < f[lo]) lo = i;
    memcpy(x0, s[lo], sizeof s[lo]);
}

/* Fit the parameters from fit_from on (all but --cluster: every one) by Nelder-Mead over
 * their logarithms, starting from *p, to the rows not left out. */
static void fit(rtk_qr_model *p, int rounds, int iters)
{
    double x[NP];
    double *q = (double *)p;
    for (int i = 0; i < NP; i++) x[i] = log(q[i] > 0 ? q[i] : 1e-3);
    for (int r = 0; r < rounds; r++) nelder_mead(x, iters);
    for (int i = fit_from; i < fit_to; i++) q[i] = exp(x[i]);
}

static double worst_err, worst_loss; /* of the last report, fractions */

static void report(const rtk_qr_model *p)
{
    double worst = 0, worst_pick = 0, sum2 = 0;
    int count = 0, within = 0;
    printf("%-16s %-16s %10s %10s %8s %10s %10s %8s\n", "size", "variant", "qr_us", "model",
           "err", "qr+w_us", "model", "err");
    for (int i = 0; i < nrows; i++) {
        const Row *r = &rows[i];
        const double p0 = predict_row(p, r, 0);
        const double e0 = p0 / r->qr - 1;
        char sz[32];
        snprintf(sz, sizeof sz, "%dx%dx%d", r->m, r->n, r->batch);
        printf("%-16s %-16s %10.2f %10.2f %+7.1f%%", sz, r->name, r->qr, p0, 100 * e0);
        worst = fmax(worst, fabs(e0)), sum2 += e0 * e0, count++, within += fabs(e0) <= 0.25;
        if (fuses(r)) {
            const double p1 = predict_row(p, r, 1);
            const double e1 = p1 / r->qrw - 1;
            printf(" %10.2f %10.2f %+7.1f%%", r->qrw, p1, 100 * e1);
            worst = fmax(worst, fabs(e1)), sum2 += e1 * e1, count++, within += fabs(e1) <= 0.25;
        }
        printf("\n");
    }
    /* per size: the model's pick against the fastest measured */
    printf("\n%-16s %-5s %-16s %10s %-16s %10s %8s\n", "size", "kind", "model pick", "its us",
           "fastest", "us", "loss");
    int picks = 0, good = 0;
    for (int i = 0; i < nrows;) {
        int j = i;
        while (j < nrows && rows[j].m == rows[i].m && rows[j].n == rows[i].n && rows[j].batch == rows[i].batch) j++;
        for (int kind = 0; kind < 2; kind++) {
            int pick = -1, best = -1;
            double tp = 0, tb = 0;
            for (int k = i; k < j; k++) {
                const Row *r = &rows[k];
                if (kind && !fuses(r)) continue;
                const double meas = kind ? r->qrw : r->qr;
                const double pred = predict_row(p, r, kind);
                if (pick < 0 || pred < tp) pick = k, tp = pred;
                if (best < 0 || meas < tb) best = k, tb = meas;
            }
            if (pick < 0) continue;
            const double mp = kind ? rows[pick].qrw : rows[pick].qr;
            const double l = mp / tb - 1;
            char sz[32];
            snprintf(sz, sizeof sz, "%dx%dx%d", rows[i].m, rows[i].n, rows[i].batch);
            printf("%-16s %-5s %-16s %10.2f %-16s %10.2f %+7.1f%%\n", sz, kind ? "qr+w" : "qr",
                   rows[pick].name, mp, rows[best].name, tb, 100 * l);
            worst_pick = fmax(worst_pick, l), picks++, good += l <= 0.10;
        }
        i = j;
    }
    worst_err = worst;
    worst_loss = worst_pick;
    printf("\nsummary: %d predictions, rms error %.1f %%, worst %.1f %%, %d within 25 %%; "
           "%d picks, worst loss %.1f %%, %d within 10 %% of the fastest\n",
           count, 100 * sqrt(sum2 / (count ? count : 1)), 100 * worst, within, picks,
           100 * worst_pick, good);
}

static int same_shape(const Row *a, const Row *b)
{
    return a->m == b->m && a->n == b->n && a->batch == b->batch;
}

/* --cv: every shape's rows predicted, and its variant picked, by parameters fitted without
 * them (the same shape in several logs is left out as one) */
static void cross_validate(void)
{
    int count = 0, within = 0, picks = 0, good = 0;
    double sum2 = 0, worst = 0, worst_pick = 0;
    int *done = calloc((size_t)nrows, sizeof *done);
    if (!done) return;
    for (int i = 0; i < nrows; i++) {
        if (done[i]) continue;
        for (int k = 0; k < nrows; k++) rows[k].out = !done[k] && same_shape(&rows[k], &rows[i]);
        rtk_qr_model p = rtk_qr_model_h100;
        fit(&p, 2, 2000);
        char sz[40];
        snprintf(sz, sizeof sz, "%dx%dx%d", rows[i].m, rows[i].n, rows[i].batch);
        for (int kind = 0; kind < 2; kind++) {
            int pick = -1, best = -1;
            double tp = 0, tb = 0;
            for (int k = 0; k < nrows; k++) {
                const Row *r = &rows[k];
                if (!r->out || (kind && !fuses(r))) continue;
                const double meas = kind ? r->qrw : r->qr, pred = predict_row(&p, r, kind);
                const double e = pred / meas - 1;
                sum2 += e * e, count++, within += fabs(e) <= 0.25, worst = fmax(worst, fabs(e));
                if (fabs(e) > 0.25)
                    printf("cv miss  %-16s %-5s %-16s %10.2f %10.2f %+7.1f%%\n", sz, kind ? "qr+w" : "qr",
                           r->name, meas, pred, 100 * e);
                if (pick < 0 || pred < tp) pick = k, tp = pred;
                if (best < 0 || meas < tb) best = k, tb = meas;
            }
            if (pick < 0) continue;
            const double l = (kind ? rows[pick].qrw : rows[pick].qr) / tb - 1;
            if (l > 0.10)
                printf("cv pick  %-16s %-5s %-16s %10.2f against %-16s %10.2f %+7.1f%%\n", sz,
                       kind ? "qr+w" : "qr", rows[pick].name, kind ? rows[pick].qrw : rows[pick].qr,
                       rows[best].name, tb, 100 * l);
            picks++, good += l <= 0.10, worst_pick = fmax(worst_pick, l);
        }
        for (int k = 0; k < nrows; k++)
            if (rows[k].out) done[k] = 1, rows[k].out = 0;
        fflush(stdout);
    }
    free(done);
    worst_err = worst;
    worst_loss = worst_pick;
    printf("\ncv summary: %d predictions, rms error %.1f %%, worst %.1f %%, %d within 25 %%; %d picks, "
           "worst loss %.1f %%, %d within 10 %% of the fastest\n",
           count, 100 * sqrt(sum2 / (count ? count : 1)), 100 * worst, within, picks, 100 * worst_pick, good);
}

/* --separate: one point a shape and log, the weight kernel's time */
typedef struct {
    int m, n, batch, file, first; /* first: its first row */
    double us;                    /* median over the non-fusing rows of qrw - qr */
} SepPoint;

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int sep_points(SepPoint **out)
{
    SepPoint *pts = calloc((size_t)nrows, sizeof *pts);
    double *d = calloc((size_t)nrows, sizeof *d);
    int np = 0;
    if (!pts || !d) return -1;
    for (int i = 0; i < nrows; i++) {
        int seen = 0;
        for (int k = 0; k < i && !seen; k++)
            seen = same_shape(&rows[k], &rows[i]) && rows[k].file == rows[i].file;
        if (seen) continue;
        int nd = 0;
        for (int k = i; k < nrows; k++)
            if (same_shape(&rows[k], &rows[i]) && rows[k].file == rows[i].file && rows[k].f0.storage)
                d[nd++] = rows[k].qrw - rows[k].qr;
        if (!nd) continue;
        qsort(d, (size_t)nd, sizeof *d, cmp_double);
        pts[np++] = (SepPoint){rows[i].m, rows[i].n, rows[i].batch, rows[i].file, i,
                               nd % 2 ? d[nd / 2] : 0.5 * (d[nd / 2 - 1] + d[nd / 2])};
    }
    free(d);
    *out = pts;
    return np;
}

static double sep_predict(const rtk_weights_model *w, const SepPoint *q)
{
    /* the device's SM count from a row that is not a cluster (whose sms is its clusters) */
    const Row *r = &rows[q->first];
    for (int k = 0; k < nrows && r->f0.storage == 3; k++)
        if (rows[k].f0.storage != 3) r = &rows[k];
    return rtk_model_weights(w, q->n, q->batch, nbeams, rtk_weights_blocks_per_sm_h100(q->n, nbeams),
                             r->f0.sms, r->f0.clock_mhz);
}

/* weighted linear least squares (weights 1/measured: relative errors) for the five
 * parameters, each a linear coefficient of rtk_model_weights (launch in us, the others in
 * cycles): the basis is the model with one parameter 1 and the others 0 */
static void sep_fit(rtk_weights_model *w, const SepPoint *pts, int np)
{
    enum { K = 5 };
    double A[K][K + 1];
    memset(A, 0, sizeof A);
    for (int i = 0; i < np; i++) {
        double f[K];
        for (int j = 0; j < K; j++) {
            rtk_weights_model b;
            memset(&b, 0, sizeof b);
            ((double *)&b)[j] = 1;
            f[j] = sep_predict(&b, &pts[i]) / pts[i].us;
        }
        for (int a = 0; a < K; a++) {
            for (int c = 0; c < K; c++) A[a][c] += f[a] * f[c];
            A[a][K] += f[a]; /* target: measured / measured = 1 */
        }
    }
    for (int i = 0; i < K; i++) /* Gauss-Jordan with partial pivoting */
    {
        int piv = i;
        for (int k = i + 1; k < K; k++)
            if (fabs(A[k][i]) > fabs(A[piv][i])) piv = k;
        for (int c = 0; c <= K; c++) {
            const double t = A[i][c];
            A[i][c] = A[piv][c], A[piv][c] = t;
        }
        for (int k = 0; k < K; k++) {
            if (k == i || A[i][i] == 0) continue;
            const double g = A[k][i] / A[i][i];
            for (int c = i; c <= K; c++) A[k][c] -= g * A[i][c];
        }
    }
    for (int j = 0; j < K; j++) ((double *)w)[j] = A[j][j] != 0 ? A[j][K] / A[j][j] : 0;
}

static void sep_report(const rtk_weights_model *w, const SepPoint *pts, int np)
{
    double worst = 0, sum2 = 0, worst_pick = 0, gain_lo = 0, gain_hi = -1;
    int within = 0, picks = 0, good = 0, nsep = 0, nworse = 0;
    printf("%-16s %-4s %10s %10s %8s\n", "size", "log", "weights_us", "model", "err");
    for (int i = 0; i < np; i++) {
        const double pr = sep_predict(w, &pts[i]), e = pr / pts[i].us - 1;
        printf("%5dx%-4d x%-5d  %-4d %10.2f %10.2f %+7.1f%%\n", pts[i].m, pts[i].n, pts[i].batch,
               pts[i].file, pts[i].us, pr, 100 * e);
        sum2 += e * e, within += fabs(e) <= 0.25, worst = fmax(worst, fabs(e));
    }
    printf("\n%-16s %-4s %-34s %10s %-34s %10s %8s\n", "size", "log", "plan", "its us", "fastest",
           "us", "loss");
    for (int i = 0; i < np; i++) {
        const SepPoint *q = &pts[i];
        /* the fused pick, the QR-alone pick, the fastest of each (measured) */
        int pf = -1, pq = -1, bf = -1, bq = -1;
        double tpf = 0, tpq = 0;
        for (int k = 0; k < nrows; k++) {
            const Row *r = &rows[k];
            if (!same_shape(r, &rows[q->first]) || r->file != q->file) continue;
            const double p0 = predict_row(&rtk_qr_model_h100, r, 0);
            if (pq < 0 || p0 < tpq) pq = k, tpq = p0;
            if (bq < 0 || r->qr < rows[bq].qr) bq = k;
            if (!fuses(r)) continue;
            const double p1 = predict_row(&rtk_qr_model_h100, r, 1);
            if (pf < 0 || p1 < tpf) pf = k, tpf = p1;
            if (bf < 0 || r->qrw < rows[bf].qrw) bf = k;
        }
        const double sep_pred = tpq + sep_predict(w, q);
        const int separate = pf < 0 || sep_pred < tpf;
        const double t_plan = separate ? rows[pq].qr + q->us : rows[pf].qrw;
        const double t_sep_best = rows[bq].qr + q->us;
        const int best_sep = bf < 0 || t_sep_best < rows[bf].qrw;
        const double t_best = best_sep ? t_sep_best : rows[bf].qrw;
        char plan[64], best[64];
        snprintf(plan, sizeof plan, "%s%s", rows[separate ? pq : pf].name, separate ? " + weight kernel" : " fused");
        snprintf(best, sizeof best, "%s%s", rows[best_sep ? bq : bf].name, best_sep ? " + weight kernel" : " fused");
        const double l = t_plan / t_best - 1;
        /* against the fused pick alone (the dispatch before the separate plan) */
        char vs[48] = "";
        if (separate && pf >= 0) {
            const double g = t_plan / rows[pf].qrw - 1;
            snprintf(vs, sizeof vs, "  (fused pick %.2f: %+.1f %%)", rows[pf].qrw, 100 * g);
            nsep++, nworse += g > 0;
            if (gain_hi < gain_lo || g < gain_lo) gain_lo = g;
            if (g > gain_hi) gain_hi = g;
        }
        printf("%5dx%-4d x%-5d  %-4d %-34s %10.2f %-34s %10.2f %+7.1f%%%s\n", q->m, q->n, q->batch,
               q->file, plan, t_plan, best, t_best, 100 * l, vs);
        picks++, good += l <= 0.10, worst_pick = fmax(worst_pick, l);
    }
    worst_err = worst;
    worst_loss = worst_pick;
    printf("\nseparate summary: %d shapes, rms error %.1f %%, worst %.1f %%, %d within 25 %%; %d plans, "
           "worst loss %.1f %%, %d within 10 %% of the fastest\n",
           np, 100 * sqrt(sum2 / (np ? np : 1)), 100 * worst, within, picks, 100 * worst_pick, good);
    printf("separate plans where a kernel fuses: %d, their time against the fused pick %+.1f to %+.1f %% "
           "(%d slower)\n", nsep, 100 * gain_lo, 100 * gain_hi, nworse);
}

/* --gather FILE */
static int gather_fit(const char *path, int check)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return -1;
    int gm[64], gn[64], gb[64], np = 0;
    double gus[64];
    char line[256];
    while (np < 64 && fgets(line, sizeof line, fp))
        if (line[0] != '#' && sscanf(line, "%d %d %d %lf", &gm[np], &gn[np], &gb[np], &gus[np]) == 4) np++;
    fclose(fp);
    if (np < 2) return -1;
    rtk_weights_model w = rtk_weights_model_h100;
    if (!check) { /* t = a + b E, E = m n batch / 1e6, weights 1/t */
        double s00 = 0, s01 = 0, s11 = 0, y0 = 0, y1 = 0;
        for (int i = 0; i < np; i++) {
            const double f0 = 1 / gus[i], f1 = 1e-6 * gm[i] * gn[i] * gb[i] / gus[i];
            s00 += f0 * f0, s01 += f0 * f1, s11 += f1 * f1, y0 += f0, y1 += f1;
        }
        const double det = s00 * s11 - s01 * s01;
        w.tr_launch = (y0 * s11 - s01 * y1) / det;
        w.tr_elem = (s00 * y1 - s01 * y0) / det;
        printf("fitted (%d rows):\n    /* tr_launch, tr_elem */ %.4g, %.4g,\n\n", np, w.tr_launch, w.tr_elem);
    }
    double worst = 0;
    printf("%-16s %10s %10s %8s\n", "size", "gather_us", "model", "err");
    for (int i = 0; i < np; i++) {
        const double pr = rtk_model_gather(&w, gm[i], gn[i], gb[i]), e = pr / gus[i] - 1;
        printf("%5dx%-4d x%-5d %10.2f %10.2f %+7.1f%%\n", gm[i], gn[i], gb[i], gus[i], pr, 100 * e);
        worst = fmax(worst, fabs(e));
    }
    printf("\ngather summary: %d rows, worst %.1f %%\n", np, 100 * worst);
    worst_err = worst;
    return 0;
}

int main(int argc, char **argv)
{
    int check = 0, cv = 0, files = 0, separate = 0;
    const char *gather = NULL;
    double req_err = -1, req_pick = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--check")) {
            check = 1;
            continue;
        }
        if (!strcmp(argv[i], "--cv")) {
            cv = 1;
            continue;
        }
        if (!strcmp(argv[i], "--separate")) {
            separate = 1;
            continue;
        }
        if (!strcmp(argv[i], "--gather") && i + 1 < argc) {
            gather = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--cluster")) {
            fit_from = (int)(offsetof(rtk_qr_model, cl_col) / sizeof(double));
            continue;
        }
        if (!strcmp(argv[i], "--weights")) {
            fit_from = (int)(offsetof(rtk_qr_model, w0) / sizeof(double));
            fit_to = (int)(offsetof(rtk_qr_model, w_warp) / sizeof(double)) + 1;
            continue;
        }
        if (!strcmp(argv[i], "--require")) {
            if (i + 1 >= argc || sscanf(argv[++i], "%lf,%lf", &req_err, &req_pick) != 2) {
                fprintf(stderr, "fit_qr_model: --require ERR,PICK (percent)\n");
                return 2;
            }
            continue;
        }
        if (parse(argv[i])) {
            fprintf(stderr, "fit_qr_model: cannot read %s\n", argv[i]);
            return 1;
        }
        files++;
    }
    if (gather) {
        free(rows);
        if (gather_fit(gather, check)) {
            fprintf(stderr, "fit_qr_model: cannot read %s\n", gather);
            return 1;
        }
        if (req_err >= 0 && 100 * worst_err > req_err) {
            printf("fit_qr_model: required predictions within %g %%: worst %.1f %%\n", req_err,
                   100 * worst_err);
            return 1;
        }
        return 0;
    }
    if (!files || !nrows) {
        fprintf(stderr, "usage: fit_qr_model [--check|--cv|--cluster|--weights|--separate] [--require ERR,PICK] BENCH_LOG...  "
                        "(gpu_bench --all output)\n");
        return files ? 1 : 2;
    }
    rtk_qr_model p = rtk_qr_model_h100;
    if (separate) {
        SepPoint *pts = NULL;
        const int np = sep_points(&pts);
        if (np <= 0) {
            fprintf(stderr, "fit_qr_model: no rows without fused weights in the logs\n");
            free(rows);
            return 1;
        }
        rtk_weights_model w = rtk_weights_model_h100;
        if (!check) {
            sep_fit(&w, pts, np);
            printf("fitted (%d shapes):\n    /* launch, wave, wave_n, blk_n, blk_n2 */ %.4g, %.4g, "
                   "%.4g, %.4g, %.4g,\n\n", np, w.launch, w.wave, w.wave_n, w.blk_n, w.blk_n2);
        }
        sep_report(&w, pts, np);
        free(pts);
    } else if (cv) {
        cross_validate();
    } else if (!check) {
        fit(&p, 8, 3000);
        printf("fitted (%d rows, loss %.5f):\n", nrows, loss(&p));
        printf("    /* l0, l_row, l_upd, spill */ %.4g, %.4g, %.4g, %.4g,\n", p.l0, p.l_row, p.l_upd,
               p.spill);
        printf("    /* u_shfl, soft */ %.4g, %.4g,\n", p.u_shfl, p.soft);
        printf("    /* io0, io_elem */ %.4g, %.4g,\n", p.io0, p.io_elem);
        printf("    /* w0, w_lane, w_warp */ %.4g, %.4g, %.4g,\n", p.w0, p.w_lane, p.w_warp);
        printf("    /* launch */ %.4g,\n", p.launch);
        printf("    /* smem_col, smem_elem, glob_col, glob_elem */ %.4g, %.4g, %.4g, %.4g,\n", p.smem_col,
               p.smem_elem, p.glob_col, p.glob_elem);
        printf("    /* cl_col, cl_cta, cl_warp */ %.4g, %.4g, %.4g,\n\n", p.cl_col, p.cl_cta, p.cl_warp);
    }
    if (!cv && !separate) report(&p);
    free(rows);
    if (req_err >= 0 && (100 * worst_err > req_err || 100 * worst_loss > req_pick)) {
        printf("fit_qr_model: required predictions within %g %% and picks within %g %%: "
               "worst %.1f %% and %.1f %%\n", req_err, req_pick, 100 * worst_err, 100 * worst_loss);
        return 1;
    }
    return 0;
}
