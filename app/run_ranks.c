/* run_ranks.c: `rtstap-mpi run` on a recording with N > 1 ranks (issue 32).
 *
 * The recording's written CPIs are dealt round-robin: written CPI g to rank g mod N. Every
 * CPI of a recording costs the same (one shape, one configuration) and the ranks are alike
 * (one GPU each), so a fixed deal keeps them equally busy without a queue's messages, each
 * rank knows its CPIs without asking, and the CPIs a stopped rank never ran are "every N-th
 * from g" — easy to name.
 *
 * Rank 0 opens the result file (stap_result_writer with every row allocated at open, the
 * serial run's layout) and broadcasts where each row's weights and output go; each rank runs
 * its own engine (its host's GPU local rank mod GPUs), reads its CPIs with its own reader
 * threads and writes its rows' weights and output straight into the file with MPI-IO
 * (MPI_File_write_at: its drivers know Lustre, GPFS and NFS). The small per-CPI rows (input
 * CPI, stage times, detections) are gathered to rank 0 at the end; it writes them in order
 * and publishes the file: datasets equal to the serial run's.
 *
 * Why not parallel HDF5: the bulk rows are all but a few bytes of the file and go through
 * MPI-IO either way; parallel HDF5 would make every metadata call (create, extend, every
 * attribute) collective with identical arguments, so that one rank's failure hangs the
 * others at the next one, and it needs the whole HDF5 layer built a second time against
 * libhdf5-openmpi (the serial and parallel libraries cannot share a process). Here one
 * library lays out the file, as for one process, and MPI moves bytes.
 *
 * Faults: the ranks meet after making their engines (par_check) and again at the end, where
 * each says how many of its rows it wrote, in order. The published rows are the prefix of
 * CPIs every rank finished: rows past the first missing CPI are never published (their
 * blocks are freed), so no CPI is written twice or out of place. A rank that failed is named
 * with the CPIs it lost; a device fault or a signal publishes the prefix marked
 * /config stopped (as one process does), any other failure publishes nothing. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_json.h"
#include "par.h"
#include "rtstap/common.h" /* stap_now_ms */
#include "rank_dets.h"
#include "run_rec.h"
#include "signals.h"

/* what a rank's writer thread holds: its rows' offsets and the small rows it keeps */
typedef struct rank_rows {
    par_file *f;
    const long long *woff, *ooff;
    size_t wb, ob;
    int rank, size;
    long long n;                /* this rank's CPIs                                   */
    long long rows;             /* rows written, in order                             */
    long long *icpi, *ndet;     /* per row: the input's CPI, its detections           */
    double *stage;              /* per row: STAP_STAGE_COUNT stage times              */
    rank_dets dets;             /* its detections: bounded in memory, the rest in a file */
    double bytes;               /* weights and output written                         */
} rank_rows;

static int rank_sink(void *user, long long row, long long input_cpi, const stap_cf32 *W,
                     const stap_cf32 *Y, const stap_detection *det, size_t ndet,
                     const double *stage_ms, stap_error *err)
{
    rank_rows *rr = user;
    const long long g = rr->rank + row * rr->size; /* the file's row */
    if (row != rr->rows || row >= rr->n)
        return stap_fail(err, STAP_EINVAL, "rank %d: row %lld out of order", rr->rank, row);
    if ((rr->wb && par_file_write_at(rr->f, rr->woff[g], W, rr->wb, err)) ||
        (rr->ob && par_file_write_at(rr->f, rr->ooff[g], Y, rr->ob, err)))
        return STAP_EIO;
    if (rank_dets_add(&rr->dets, det, ndet, err)) {
        stap_error_prefix(err, "rank %d", rr->rank);
        return err->code;
    }
    rr->icpi[row] = input_cpi;
    rr->ndet[row] = (long long)ndet;
    memcpy(rr->stage + row * STAP_STAGE_COUNT, stage_ms, sizeof(double) * STAP_STAGE_COUNT);
    rr->bytes += (double)(rr->wb + rr->ob);
    rr->rows++;
    return STAP_OK;
}

/* what each rank tells the others at the end */
typedef struct rank_report {
    int status, code, stopped_by, device;
    long long share, done, ndet;
    double wall_s, cpis_per_s, lat_p50, lat_p99, read_s, write_s, bytes, detections_per_cpi;
    double stage_median[STAP_STAGE_COUNT];
    double det_most, det_spilled; /* bytes of detections: the most held, written aside */
    char msg[600];
} rank_report;

/* the CPIs of rank k of N: g = k, k + N, ... below W */
static long long share_of(long long W, int k, int N) { return W > k ? (W - k + N - 1) / N : 0; }

/* the ranks' first missing CPI: every CPI below it ran and was written */
static long long prefix_of(const rank_report *rep, int N, long long W)
{
    long long P = W;
    for (int k = 0; k < N; k++)
        if (rep[k].done < rep[k].share && k + rep[k].done * N < P) P = k + rep[k].done * N;
    return P;
}

/* this rank's rows of the round [G0, G1) of the file's rows, packed: icpi[k], ndet[k],
 * stage[k * S], detections (NULL: out of memory, or the detections not read back) */
static void *pack_rows(rank_rows *rr, long long G0, long long G1, size_t *bytes, stap_error *err)
{
    const long long i0 = share_of(G0, rr->rank, rr->size), k = share_of(G1, rr->rank, rr->size) - i0;
    size_t nd = 0;
    for (long long i = i0; i < i0 + k; i++) nd += (size_t)rr->ndet[i];
    /* padded to 8 bytes: the next rank's pack starts aligned for its long longs and doubles */
    *bytes = ((size_t)k * (2 * sizeof(long long) + sizeof(double) * STAP_STAGE_COUNT) +
              nd * sizeof(stap_detection) + 7) / 8 * 8;
    char *b = calloc(1, *bytes ? *bytes : 1), *at = b;
    if (!b) {
        stap_fail(err, STAP_ENOMEM, "rank %d: out of memory for %zu detections", rr->rank, nd);
        return NULL;
    }
    memcpy(at, rr->icpi + i0, sizeof(long long) * (size_t)k), at += sizeof(long long) * (size_t)k;
    memcpy(at, rr->ndet + i0, sizeof(long long) * (size_t)k), at += sizeof(long long) * (size_t)k;
    memcpy(at, rr->stage + i0 * STAP_STAGE_COUNT, sizeof(double) * STAP_STAGE_COUNT * (size_t)k);
    at += sizeof(double) * STAP_STAGE_COUNT * (size_t)k;
    if (rank_dets_take(&rr->dets, nd, (stap_detection *)at, err)) {
        stap_error_prefix(err, "rank %d", rr->rank);
        free(b);
        return NULL;
    }
    return b;
}

/* Rank 0: the small rows of the file's rows [G0, G1) from every rank's pack, in order. */
static int write_rows(stap_result_writer *w, const char *all, const size_t *counts, int N, long long G0,
                      long long G1, stap_error *err)
{
    const long long *icpi[PAR_MAX_RANKS], *ndet[PAR_MAX_RANKS];
    const double *stage[PAR_MAX_RANKS];
    const stap_detection *det[PAR_MAX_RANKS];
    size_t at = 0;
    for (int k = 0; k < N; k++) {
        const long long n = share_of(G1, k, N) - share_of(G0, k, N);
        const char *b = all + at;
        icpi[k] = (const long long *)b;
        ndet[k] = icpi[k] + n;
        stage[k] = (const double *)(ndet[k] + n);
        det[k] = (const stap_detection *)(stage[k] + STAP_STAGE_COUNT * n);
        at += counts[k];
    }
    for (long long g = G0; g < G1; g++) {
        const int k = (int)(g % N);
        const long long i = g / N - share_of(G0, k, N);
        if (stap_result_writer_append_placed(w, g, icpi[k][i], det[k], (size_t)ndet[k][i],
                                             stage[k] + STAP_STAGE_COUNT * i, err))
            return err->code;
        det[k] += ndet[k][i];
    }
    return STAP_OK;
}

typedef struct ranks_run {
    int N, me;
    long long W;                 /* the written CPIs                                    */
    rank_rows rr;
    long long *woff, *ooff;
    char file[4096];             /* the temporary the ranks write                        */
    char method[64];             /* how (par_file_method)                                 */
    rank_report mine, *rep;
    double t0;
} ranks_run;

/* Rank 0: the rounds of the file's rows 0..P-1 from every rank's detection counts (all, in
 * rank order), each at most `most` detections or one row: bound[t] .. bound[t + 1]; the
 * rounds' count, or -1 out of memory. */
static long long plan_rounds(const char *all, const size_t *counts, int N, long long P, size_t most,
                             long long **bound)
{
    const long long *nd[PAR_MAX_RANKS];
    size_t at = 0;
    for (int k = 0; k < N; k++) nd[k] = (const long long *)(all + at), at += counts[k];
    long long T = 0, *b = *bound = malloc(sizeof *b * (size_t)(P + 2));
    if (!b) return -1;
    size_t acc = 0;
    b[0] = 0;
    for (long long g = 0; g < P; g++) {
        const size_t n = (size_t)nd[g % N][g / N];
        if (g > b[T] && acc + n > most) b[++T] = g, acc = 0;
        acc += n;
    }
    b[++T] = P;
    return T;
}

/* The small rows of the file's rows 0..P-1 to rank 0, in rounds of at most the detection
 * budget each (one row at least; planned by rank 0 from every rank's counts): rank 0 writes
 * each round's rows in order as it comes, and no rank holds more than a round besides its
 * own rank_dets. Collective; STAP_OK, or a code and err (rank 0: its message to say). */
static int publish_rows(ranks_run *x, stap_result_writer *w, long long P, stap_error *err)
{
    rank_rows *rr = &x->rr;
    const int N = x->N, me = x->me;
    size_t counts[PAR_MAX_RANKS];
    void *all = NULL;
    int st = par_gatherv(rr->ndet, sizeof(long long) * (size_t)share_of(P, me, N), &all, counts, 0, err);
    if (st) return st; /* (every rank: par_gatherv says so everywhere) */
    long long T = 0, *bound = NULL;
    if (me == 0) T = plan_rounds(all, counts, N, P, rr->dets.budget / sizeof(stap_detection), &bound);
    free(all);
    par_bcast(&T, sizeof T, 0);
    int ok = T >= 0 && (me == 0 || (bound = malloc(sizeof *bound * (size_t)(T + 1))) != NULL), flags[PAR_MAX_RANKS];
    par_allgather(&ok, sizeof ok, flags);
    for (int k = 0; k < N; k++)
        if (!flags[k]) {
            free(bound);
            return stap_fail(err, STAP_ENOMEM, "rank %d: out of memory planning the rows' rounds", k);
        }
    par_bcast(bound, sizeof *bound * (size_t)(T + 1), 0);
    for (long long t = 0; t < T && !st; t++) {
        size_t bytes = 0;
        stap_error perr;
        void *mine = pack_rows(rr, bound[t], bound[t + 1], &bytes, &perr), *got = NULL;
        ok = mine != NULL;
        par_allgather(&ok, sizeof ok, flags);
        for (int k = 0; k < N && !st; k++)
            if (!flags[k]) {
                if (k == me) *err = perr;
                else stap_fail(err, STAP_EIO, "rank %d could not send its rows", k);
                st = err->code ? err->code : STAP_EIO;
            }
        if (!st && par_gatherv(mine, bytes, &got, counts, 0, err)) st = err->code;
        free(mine);
        if (!st && me == 0) st = write_rows(w, got, counts, N, bound[t], bound[t + 1], err);
        free(got);
        int st0 = st; /* rank 0's write: the others stop with it */
        par_bcast(&st0, sizeof st0, 0);
        if (st0 && !st) st = stap_fail(err, STAP_EIO, "rank 0 could not write the rows");
    }
    free(bound);
    return st;
}

/* "input CPIs 7, 9, 11 (every 2nd from 7)" */
static void lost_cpis(const stap_recording *rec, long long from, long long W, int N, char *out, size_t len)
{
    size_t at = (size_t)snprintf(out, len, "input CPI%s", from + N < W ? "s" : "");
    int shown = 0;
    for (long long g = from; g < W && shown < 3 && at < len; g += N, shown++)
        at += (size_t)snprintf(out + at, len - at, "%s %lld", shown ? "," : "",
                               stap_recording_written_index(rec, g));
    const long long n = (W - from + N - 1) / N;
    if (n > 3 && at < len)
        snprintf(out + at, len - at, ", ... (%lld CPIs: every %d%s from %lld)", n, N,
                 N == 2 ? "nd" : N == 3 ? "rd" : "th", stap_recording_written_index(rec, from));
}

static void ranks_report(const run_job *j, const rec_run *r, const ranks_run *x, long long P)
{
    const stap_config *pc = r->hdr.cfg;
    double wall = 0, mean = 0, bytes = 0, dets = 0;
    for (int k = 0; k < x->N; k++) {
        if (x->rep[k].wall_s > wall) wall = x->rep[k].wall_s;
        mean += x->rep[k].wall_s / x->N;
        bytes += x->rep[k].bytes;
        dets += x->rep[k].detections_per_cpi * (double)x->rep[k].done;
    }
    char wb[64], ab[48];
    fprintf(stderr, "rtstap-mpi: %s, %lld CPIs on %d ranks (%s), backend %s\n  engine: %s\n",
            j->input, P, x->N, par_describe(), r->hdr.backend_name, stap_engine_describe(r->eng));
    fprintf(stderr, "  C=%d P=%d R=%d  D=%d Q=%d S=%d K=%d%s B=%d%s\n", pc->channels, pc->pulses,
            pc->range_gates, pc->doppler_bins, pc->doppler_order, pc->segments, pc->training,
            cli_window_str(pc, wb, sizeof wb), r->hdr.beams, cli_algorithm_str(pc, ab, sizeof ab));
    fprintf(stderr, "  samples: %s\n", r->samples);
    for (int k = 0; k < x->N; k++) {
        const rank_report *q = &x->rep[k];
        char dev[32];
        fprintf(stderr, "  rank %d (%s): %lld CPIs, %.1f CPIs/s, latency p50 %.3f ms, p99 %.3f ms; "
                "reading %.0f CPIs/s, writing %.2f GB/s\n", k, stream_device_name(q->device, dev, sizeof dev),
                q->done, q->cpis_per_s, q->lat_p50,
                q->lat_p99, q->read_s > 0 ? q->done / q->read_s : 0,
                q->write_s > 0 ? q->bytes / q->write_s / 1e9 : 0);
    }
    fprintf(stderr, "  in all: %.1f CPIs/s over %.3f s; imbalance %.1f%% (the slowest rank's time "
            "over the mean)\n", wall > 0 ? P / wall : 0, wall, mean > 0 ? 100 * (wall / mean - 1) : 0);
    if (bytes > 0)
        fprintf(stderr, "  writing: %.2f GB of weights and output by %s, %.2f GB/s over the run\n",
                bytes / 1e9, x->method, wall > 0 ? bytes / wall / 1e9 : 0);
    if (r->hdr.have_detections)
        fprintf(stderr, "  detections: %.2f per CPI (%s)\n", P > 0 ? dets / (double)P : 0, r->cfar_desc);
}

static int ranks_json(const run_job *j, const rec_run *r, const ranks_run *x, long long P)
{
    stap_error err;
    cJSON *doc = run_json(j->input, j->output, r->eng, r->hdr.beams, &j->cfar, r->cfar_desc, j->threads);
    double wall = 0, bytes = 0;
    for (int k = 0; k < x->N; k++) {
        if (x->rep[k].wall_s > wall) wall = x->rep[k].wall_s;
        bytes += x->rep[k].bytes;
    }
    cJSON_AddStringToObject(doc, "mpi", par_describe());
    cJSON_AddNumberToObject(doc, "ranks", x->N);
    cJSON_AddNumberToObject(doc, "cpis_in_file", (double)r->in_file);
    cJSON_AddNumberToObject(doc, "cpis_unwritten", (double)(r->in_file - x->W));
    cJSON_AddNumberToObject(doc, "cpis_run", (double)P);
    cJSON_AddNumberToObject(doc, "cpis_per_s", wall > 0 ? P / wall : 0);
    cJSON_AddNumberToObject(doc, "seconds", wall);
    cJSON_AddNumberToObject(doc, "writer_gbs", wall > 0 ? bytes / wall / 1e9 : 0);
    cJSON_AddStringToObject(doc, "writer", x->method);
    cJSON_AddStringToObject(doc, "samples", r->samples);
    cJSON_AddStringToObject(doc, "deal", "round-robin: written CPI g on rank g mod ranks");
    cJSON *arr = cJSON_AddArrayToObject(doc, "rank_stats");
    for (int k = 0; k < x->N; k++) {
        const rank_report *q = &x->rep[k];
        cJSON *o = stream_json_rank(arr, k, q->device, q->done, q->wall_s, q->cpis_per_s,
                                    q->lat_p50, q->lat_p99);
        cJSON_AddNumberToObject(o, "reader_s", q->read_s);
        cJSON_AddNumberToObject(o, "writer_s", q->write_s);
        cJSON_AddNumberToObject(o, "written_gb", q->bytes / 1e9);
        cJSON_AddNumberToObject(o, "detections_held_max_bytes", q->det_most);
        cJSON_AddNumberToObject(o, "detections_spilled_bytes", q->det_spilled);
    }
    cJSON_AddNumberToObject(doc, "total_ms", stap_now_ms() - j->t_start);
    run_json_conditioning(doc, r->cs.checks.worst_ratio, r->eng);
    int status = cli_json_write(j->json, doc, j->mode, &err) ? cli_fail(&err) : EXIT_OK;
    cJSON_Delete(doc);
    return status;
}

/* Rank 0: open the result file for W rows; the placement to every rank. Collective. */
static int ranks_open(run_job *j, rec_run *r, ranks_run *x, stap_error *err)
{
    int st = STAP_OK;
    size_t sizes[2] = {0, 0};
    if (x->me == 0) {
        /* every row placed (more than 1 024 rows go several a chunk, so that the chunk
         * lookups stay linear in the rows: docs/mpi.md): the ranks write their rows at its
         * offsets */
        const stap_write_options wo = {j->mode, r->keep, x->W, rec_detection_bytes(), 1};
        const char *file = NULL;
        st = stap_result_writer_open(&r->rw, j->output, &r->hdr, &wo, err);
        if (!st && stap_result_writer_rows(r->rw) == x->W)
            st = stap_result_writer_placement(r->rw, &file, x->woff, x->ooff, &sizes[0], &sizes[1], err);
        else if (!st) /* nothing per row but small rows (detections only): no bulk to place */
            file = "";
        if (!st) snprintf(x->file, sizeof x->file, "%s", file);
        if (st) cli_fail(err);
    }
    par_bcast(&st, sizeof st, 0);
    if (st) return EXIT_PROCESSING; /* rank 0 said why */
    par_bcast(sizes, sizeof sizes, 0);
    par_bcast(x->file, sizeof x->file, 0);
    x->rr.wb = sizes[0];
    x->rr.ob = sizes[1];
    x->rr.woff = x->woff;
    x->rr.ooff = x->ooff;
    if (x->rr.wb || x->rr.ob) {
        par_bcast(x->woff, sizeof(long long) * (size_t)x->W, 0);
        par_bcast(x->ooff, sizeof(long long) * (size_t)x->W, 0);
        st = par_file_open(&x->rr.f, x->file, err);
        if (st) cli_fail(err);
        snprintf(x->method, sizeof x->method, "%s", par_file_method(x->rr.f));
        st = par_check(st ? EXIT_PROCESSING : EXIT_OK);
    }
    return st;
}

/* This rank's error into its report: "CPI i: ..." names its i-th CPI, named as the input's
 * CPI instead */
static void rank_failed(const run_job *j, ranks_run *x, const stap_error *err)
{
    rank_report *m = &x->mine;
    m->code = err->code;
    m->status = EXIT_PROCESSING;
    long long i = -1;
    int at = 0;
    if (sscanf(err->msg, "CPI %lld%n", &i, &at) == 1 && i >= 0 && i < x->rr.n)
        snprintf(m->msg, sizeof m->msg, "%s: CPI %lld%s", j->input,
                 stap_recording_written_index(j->rec, x->me + i * x->N), err->msg + at);
    else if (!strstr(err->msg, j->input))
        snprintf(m->msg, sizeof m->msg, "%s: %s", j->input, err->msg);
    else
        snprintf(m->msg, sizeof m->msg, "%s", err->msg);
}

/* This rank's stream: its share's reader (every reader thread a buffer to read into: the
 * reads of a page-cached file overlap, fewer buffers starve them), its engine, its rows
 * written by rank_sink. Not collective. */
static void ranks_setup(run_job *j, rec_run *r, ranks_run *x)
{
    stap_error err;
    if (x->rr.n == 0) return; /* past the written CPIs: no engine, nothing to run */
    const stap_stream_source src = {.kind = STAP_STREAM_RECORDING, .cpis = x->rr.n, .recording = j->rec,
                                    .readers = j->readers, .first = x->me, .stride = x->N};
    stap_stream_sink sink = {.row = rank_sink, .row_user = &x->rr, .depth = 4};
    stap_stream_options so;
    if (rec_stream_make(j, r, &src, &sink, &so, &err)) rank_failed(j, x, &err);
}

/* This rank's share through its engine (from the ranks' common start, x->t0; skip: a rank's
 * setup failed, nothing runs); its report filled. Not collective. */
static void ranks_stream(run_job *j, rec_run *r, ranks_run *x, int skip)
{
    stap_error err;
    rank_report *m = &x->mine;
    int st = m->status ? -1 : STAP_OK; /* (a failed setup: already said) */
    if (!st && r->stream && !skip) {
        progress_begin(&r->pg, x->me == 0 ? j->progress : PROGRESS_NONE, j->quiet || x->me != 0,
                       "run (rank 0)", "CPIs", x->rr.n);
        cli_graceful_attach(r->stream);
        st = stap_stream_run(r->stream, &r->rep, &err);
        progress_end(&r->pg);
        cpi_checks_report(&r->cs.checks);
        rec_took(r);
        m->stopped_by = r->st.stopped_by;
    }
    m->wall_s = (stap_now_ms() - x->t0) * 1e-3;
    if (st > 0) rank_failed(j, x, &err);
}

int run_ranks(run_job *j, rec_run *r)
{
    ranks_run *x = calloc(1, sizeof *x);
    if (!x) return par_check(cli_error(EXIT_PROCESSING, "out of memory"));
    x->N = par_size();
    x->me = par_rank();
    x->W = r->cpis;
    x->rr.rank = x->me;
    x->rr.size = x->N;
    x->rr.n = share_of(x->W, x->me, x->N);
    rank_dets_init(&x->rr.dets, j->output, rec_detection_bytes());
    int status = EXIT_OK;
    stap_error err;
    /* this rank's engine for its share (a rank past the written CPIs has none; rank 0
     * always has one, and its engine describes the file) */
    x->mine.device = j->device;
    x->mine.share = x->rr.n;
    if (!status && x->rr.n > 0) {
        const long long all = r->cpis;
        r->cpis = x->rr.n;
        status = rec_engine(j, r);
        r->cpis = all;
    }
    if (!status) {
        x->rr.icpi = malloc(sizeof(long long) * (size_t)(x->rr.n + 1));
        x->rr.ndet = malloc(sizeof(long long) * (size_t)(x->rr.n + 1));
        x->rr.stage = malloc(sizeof(double) * STAP_STAGE_COUNT * (size_t)(x->rr.n + 1));
        x->woff = malloc(sizeof(long long) * (size_t)x->W);
        x->ooff = malloc(sizeof(long long) * (size_t)x->W);
        x->rep = malloc(sizeof *x->rep * (size_t)x->N);
        if (!x->rr.icpi || !x->rr.ndet || !x->rr.stage || !x->woff || !x->ooff || !x->rep)
            status = cli_error(EXIT_PROCESSING, "out of memory for %lld CPIs' rows", x->W);
    }
    /* the ranks meet: every engine made (else each failed rank is named, and all stop) */
    status = par_check(status);
    if (!status) { /* one recording for all: a recorder still writing it could show each
                      rank a different number of written CPIs */
        long long ws[PAR_MAX_RANKS];
        par_allgather(&x->W, sizeof x->W, ws);
        for (int k = 1; k < x->N && !status; k++)
            if (ws[k] != ws[0])
                status = x->me == 0 ? cli_error(EXIT_PROCESSING, "%s: rank %d sees %lld written CPIs, "
                                                "rank 0 %lld (is it still being written?)", j->input, k,
                                                ws[k], ws[0])
                                    : EXIT_PROCESSING;
    }
    if (!status) status = ranks_open(j, r, x, &err);
    if (!status) {
        /* SIGINT/SIGTERM (mpirun forwards them): each rank finishes its CPIs in flight, and
         * the stop stays graceful until the file is published (a rank done early waits in
         * the collectives below) */
        cli_graceful_begin();
        ranks_setup(j, r, x);
        /* the ranks meet again, readers and writers ready (a rank whose setup failed stops
         * them all: no work is done for nothing), and their clocks start together */
        int bad = x->mine.status != 0, flags[PAR_MAX_RANKS], any = 0;
        par_allgather(&bad, sizeof bad, flags);
        for (int k = 0; k < x->N; k++) any |= flags[k];
        x->t0 = stap_now_ms();
        ranks_stream(j, r, x, any);
        x->mine.done = x->rr.rows;
        x->mine.bytes = x->rr.bytes;
        x->mine.read_s = r->read_s;
        x->mine.write_s = r->write_s;
        x->mine.cpis_per_s = r->st.cpis_per_s;
        x->mine.lat_p50 = r->st.lat_p50;
        x->mine.lat_p99 = r->st.lat_p99;
        x->mine.detections_per_cpi = r->st.detections_per_cpi;
        x->mine.det_most = (double)x->rr.dets.most;
        x->mine.det_spilled = (double)x->rr.dets.spilled * (double)sizeof(stap_detection);
        memcpy(x->mine.stage_median, r->st.stage_median, sizeof x->mine.stage_median);
        stap_error cerr;
        if (par_file_close(x->rr.f, &cerr) && !x->mine.status) {
            x->mine.status = EXIT_PROCESSING;
            x->mine.code = cerr.code;
            snprintf(x->mine.msg, sizeof x->mine.msg, "%s", cerr.msg);
        }
        x->rr.f = NULL;
        par_allgather(&x->mine, sizeof x->mine, x->rep);
        const long long P = prefix_of(x->rep, x->N, x->W);
        /* what failed, and whether the prefix is published: a device fault or a signal
         * publishes it marked stopped, any other failure nothing */
        int failed = 0, publish = 1, signal = 0;
        for (int k = 0; k < x->N; k++) {
            if (x->rep[k].status) failed = 1;
            if (x->rep[k].status && x->rep[k].code != STAP_EDEVICE) publish = 0;
            if (x->rep[k].stopped_by && !signal) signal = x->rep[k].stopped_by;
        }
        /* the small rows to rank 0's writer, round by round */
        const int all_ok = !publish || publish_rows(x, x->me == 0 ? r->rw : NULL, P, &err) == STAP_OK;
        if (x->me == 0) {
            char stopped[900] = "";
            /* the failed rank whose first lost CPI is the first missing one (it set P) */
            int first = -1;
            for (int k = 0; k < x->N; k++) {
                const rank_report *q = &x->rep[k];
                if (q->status && q->done < q->share &&
                    (first < 0 || k + q->done * x->N < first + x->rep[first].done * x->N))
                    first = k;
            }
            for (int k = 0; k < x->N; k++) { /* each failed rank, named with what it lost */
                const rank_report *q = &x->rep[k];
                if (!q->status) continue;
                char lost[200] = "no CPI", dev[32];
                if (q->done < q->share) lost_cpis(j->rec, k + q->done * x->N, x->W, x->N, lost, sizeof lost);
                fprintf(stderr, "rtstap-mpi: rank %d (%s): error: %s; it lost %s\n", k,
                        stream_device_name(q->device, dev, sizeof dev), q->msg, lost);
                if (k == first || (first < 0 && !stopped[0]))
                    snprintf(stopped, sizeof stopped, "by a failure of rank %d at input CPI %lld, after "
                             "%lld of the %lld written CPIs: %.400s", k,
                             q->done < q->share ? stap_recording_written_index(j->rec, k + q->done * x->N)
                                                : stap_recording_written_index(j->rec, P < x->W ? P : x->W - 1),
                             P, x->W, q->msg);
            }
            if (!failed && signal)
                snprintf(stopped, sizeof stopped, "by %s after %lld of the %lld written CPIs",
                         signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "a signal", P, x->W);
            status = failed ? EXIT_PROCESSING : signal ? 128 + signal : EXIT_OK;
            if (!publish || !all_ok) {
                if (publish) cli_fail(&err);
                stap_result_writer_abort(r->rw); /* nothing partial */
                r->rw = NULL;
                status = EXIT_PROCESSING;
            } else {
                stap_result sum;
                rec_summary(j, r, stopped, x->W, &sum);
                int st = stap_result_writer_close(r->rw, &sum, &err);
                r->rw = NULL;
                if (st) status = cli_fail(&err);
                else if (stopped[0])
                    fprintf(stderr, "rtstap-mpi: stopped %s; %s holds them (/config stopped)\n", stopped,
                            j->output);
                if (!st && !j->quiet) ranks_report(j, r, x, P);
                if (!st && j->json && (st = ranks_json(j, r, x, P))) status = st;
            }
        }
        par_bcast(&status, sizeof status, 0);
        cli_graceful_end();
    }
    free(x->rr.icpi);
    free(x->rr.ndet);
    free(x->rr.stage);
    rank_dets_free(&x->rr.dets);
    free(x->woff);
    free(x->ooff);
    free(x->rep);
    free(x);
    return status;
}
