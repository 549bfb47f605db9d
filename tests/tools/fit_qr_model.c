/* fit_qr_model: fits the parameters of the QR performance model (kernels/rtk_model.h) to
 * timings of every kernel variant, as tests/gpu/gpu_bench --all prints them (the lines
 * with the model's facts after '|'), and reports the fit row by row.
 *
 * usage: fit_qr_model [--check | --cv | --cluster] [--require ERR,PICK] BENCH_LOG [BENCH_LOG...]
 *   default  fit (Nelder-Mead on the mean squared log ratio predicted/measured, all
 *            parameters positive, from the built-in H100 parameters), print the
 *            parameter block for kernels/qr_model.cu, then the report
 *   --check  no fit: the report for the built-in parameters (a log measured after the
 *            fit is the out-of-sample test)
 *   --cluster fit only the cluster rows' parameters (cl_col, cl_cta, cl_warp), the others as
 *            built in
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
 *   --require ERR,PICK  exit 1 unless every prediction is within ERR % of its measurement
 *            and every pick within PICK % of the fastest (the CTest qr_model runs --check
 *            with it on the shipped H100 logs, tests/data/qr_model_h100_*.log)
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
    int out; /* --cv: left out of the fit */
} Row;

static Row *rows;
static int nrows;
static int nbeams = 16;

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
        int b1 = 0, l1 = 0;
        double p0, p1;
        if (sscanf(bar + 1, "%d %d %d %d %d %d %d %d %d %d %d %d %lf %lf %lf", &f.storage, &f.tr,
                   &f.tc, &f.rpt, &f.cpt, &f.mats, &f.nt, &f.blocks_per_sm, &b1, &f.local_bytes, &l1,
                   &f.sms, &f.clock_mhz, &p0, &p1) != 15)
            continue;
        r.f0 = f;
        r.f1 = f;
        r.f1.blocks_per_sm = b1;
        r.f1.local_bytes = l1;
        Row *nr = realloc(rows, (nrows + 1) * sizeof *rows);
        if (!nr) return 1;
        rows = nr;
        rows[nrows++] = r;
    }
    fclose(fp);
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

static int fit_from; /* --cluster: the parameters before cl_col stay the built-in ones */

static double loss_x(const double *x)
{
    rtk_qr_model p = rtk_qr_model_h100;
    double *q = (double *)&p;
    for (int i = fit_from; i < NP; i++) q[i] = exp(x[i]);
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
    for (int i = fit_from; i < NP; i++) q[i] = exp(x[i]);
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

int main(int argc, char **argv)
{
    int check = 0, cv = 0, files = 0;
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
        if (!strcmp(argv[i], "--cluster")) {
            fit_from = (int)(offsetof(rtk_qr_model, cl_col) / sizeof(double));
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
    if (!files || !nrows) {
        fprintf(stderr, "usage: fit_qr_model [--check|--cv|--cluster] [--require ERR,PICK] BENCH_LOG...  "
                        "(gpu_bench --all output)\n");
        return files ? 1 : 2;
    }
    rtk_qr_model p = rtk_qr_model_h100;
    if (cv) {
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
    if (!cv) report(&p);
    free(rows);
    if (req_err >= 0 && (100 * worst_err > req_err || 100 * worst_loss > req_pick)) {
        printf("fit_qr_model: required predictions within %g %% and picks within %g %%: "
               "worst %.1f %% and %.1f %%\n", req_err, req_pick, 100 * worst_err, 100 * worst_loss);
        return 1;
    }
    return 0;
}
