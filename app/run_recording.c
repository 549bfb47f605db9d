/* run_recording.c: `rtstap run` on a recording (/data/iq of rank 4) — every written CPI
 * through one engine: a reader thread, S CPIs in flight, a writer thread; per-CPI results
 * in the extensible datasets of stap_result_writer, published when the run ends (or stops
 * cleanly on SIGINT/SIGTERM, or on a device fault with a named backend). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env.h"
#include "cpi_check.h"
#include "progress.h"
#include "cli_json.h"
#include "h5io_extra.h"
#include "rtstap/common.h" /* stap_now_ms */
#include "run_job.h"
#include "run_rec.h"
#include "par.h"
#include "signals.h"
#include "report.h"

/* what limits the run so far (the progress line) */
static const char *rec_limit_now(void *user) { return stap_stream_limit_now(((rec_run *)user)->stream); }

/* the stream from reader to writer; a device fault with a named backend (auto moves to the
 * CPU instead) publishes the CPIs before it, marked stopped, and fails naming the CPI */
static int rec_stream(run_job *j, rec_run *r)
{
    stap_error err;
    const stap_write_options wo = {j->mode, r->keep, r->cpis, rec_detection_bytes()}; /* allocated at open */
    if (stap_result_writer_open(&r->rw, j->output, &r->hdr, &wo, &err)) return cli_fail(&err);
    const stap_stream_source src = {.kind = STAP_STREAM_RECORDING, .cpis = r->cpis, .recording = j->rec,
                                    .readers = j->readers};
    stap_stream_sink sink = {.writer = r->rw};
    stap_stream_options so;
    if (rec_stream_make(j, r, &src, &sink, &so, &err)) return cli_fail(&err);
    double t0 = stap_now_ms();
    progress_begin(&r->pg, j->progress, j->quiet, "run", "CPIs", r->cpis);
    r->pg.limit = rec_limit_now;
    r->pg.limit_user = r;
    cli_graceful_attach(r->stream);
    const int rst = stap_stream_run(r->stream, &r->rep, &err);
    if (r->ndev > 1) r->pg.done = r->rep.first_missing;
    progress_end(&r->pg);
    cli_graceful_end();
    rec_took(r);
    int status = EXIT_OK;
    if (rst && err.code == STAP_EDEVICE) {
        r->fault = err;
        snprintf(r->stopped, sizeof r->stopped, "by a device fault at input CPI %lld, after %lld "
                 "of the %lld written CPIs: %.400s", stap_stream_input_cpi(r->stream, r->st.cpis_done),
                 r->st.cpis_done, r->cpis, err.msg);
        r->st.cpis_run = r->st.cpis_done;
        status = EXIT_PROCESSING;
    } else if (rst) {
        if (!strstr(err.msg, j->input)) stap_error_prefix(&err, "%s", j->input);
        return cli_fail(&err);
    }
    cpi_checks_report(&r->cs.checks);
    if (r->st.stopped_by) {
        snprintf(r->stopped, sizeof r->stopped, "by %s after %lld of the %lld written CPIs",
                 r->st.stopped_by == SIGINT ? "SIGINT" : r->st.stopped_by == SIGTERM ? "SIGTERM" : "a signal",
                 r->st.cpis_run, r->cpis);
        status = 128 + r->st.stopped_by;
    }
    if (stap_engine_moved_to_cpu(r->eng) >= 0) /* said once, as it ends */
        fprintf(stderr, "rtstap: warning: %s: %s (input CPI %lld)\n", j->input,
                stap_engine_note(r->eng), stap_stream_input_cpi(r->stream, stap_engine_moved_to_cpu(r->eng)));
    r->wall = stap_now_ms() - t0;
    r->ran = 1;
    return status;
}

/* the file published: the summary of what ran */
static int rec_publish(run_job *j, rec_run *r)
{
    stap_error err;
    stap_result sum;
    rec_summary(j, r, r->stopped, r->cpis, &sum);
    int cst = stap_result_writer_close(r->rw, &sum, &err);
    r->rw = NULL;
    if (cst) return cli_fail(&err);
    if (r->fault.code)
        cli_error(EXIT_PROCESSING, "%s: %s; the %lld CPIs before it are in %s (/config stopped)",
                  j->input, r->fault.msg, r->st.cpis_done, j->output);
    else if (r->stopped[0])
        fprintf(stderr, "rtstap: stopped %s; %s holds them (/config stopped)\n", r->stopped, j->output);
    return EXIT_OK;
}


static void rec_report(const run_job *j, const rec_run *r)
{
    const stap_config *pc = r->hdr.cfg;
    const double wall_s = r->wall * 1e-3;
    fprintf(stderr, "rtstap: %s, %lld CPIs, backend %s\n  engine: %s\n", j->input, r->st.cpis_run,
            r->hdr.backend_name, stap_engine_describe(r->eng));
    char wb[64], ab[48];
    fprintf(stderr, "  C=%d P=%d R=%d  D=%d Q=%d S=%d K=%d%s B=%d%s\n", pc->channels, pc->pulses,
            pc->range_gates, pc->doppler_bins, pc->doppler_order, pc->segments, pc->training,
            cli_window_str(pc, wb, sizeof wb), r->hdr.beams, cli_algorithm_str(pc, ab, sizeof ab));
    fprintf(stderr, "  stage medians ms:");
    for (int s = 0; s < STAP_STAGE_COUNT; s++)
        fprintf(stderr, " %s %.3f", stap_stage_names[s], r->st.stage_median[s]);
    fprintf(stderr, "\n  %.1f CPIs/s over %.3f s; latency p50 %.3f ms, p99 %.3f ms\n",
            r->st.cpis_run / wall_s, wall_s, r->st.lat_p50, r->st.lat_p99);
    /* each part's own rate: CPIs over the wall time it was busy (reading: with a read in
     * progress; writing: the writer thread's calls; the device: the stage medians between
     * the copies), and the one busiest over the run limits it */
    const double n = (double)r->st.cpis_run;
    double dev_ms = 0;
    for (int s = STAP_STAGE_COPY_IN + 1; s < STAP_STAGE_COPY_OUT; s++) dev_ms += r->st.stage_median[s];
    const double link_ms = r->st.stage_median[STAP_STAGE_COPY_IN] + r->st.stage_median[STAP_STAGE_COPY_OUT];
    const char *limit = stap_stream_limit_of(r->read_s, r->write_s, wall_s);
    fprintf(stderr, "  samples: %s\n", r->samples);
    for (int k = 0; r->ndev > 1 && k < r->ndev; k++)
        fprintf(stderr, "  device %d: %lld CPIs, %.1f CPIs/s, latency p50 %.3f ms, p99 %.3f ms\n",
                j->devices[k], r->rep.device[k].cpis, r->rep.device[k].cpis_per_s, r->rep.device[k].lat_p50,
                r->rep.device[k].lat_p99);
    fprintf(stderr, "  rates, CPIs/s: reading %.0f (%d thread%s, %s), computing %.0f, link %.0f, "
            "writing %.0f: %s limits the run\n", r->read_s > 0 ? n / r->read_s : 0, r->threads,
            r->threads > 1 ? "s" : "", r->read_path,
            dev_ms > 0 ? 1e3 / dev_ms : 0, link_ms > 0 ? 1e3 / link_ms : 0,
            r->write_s > 0 ? n / r->write_s : 0, limit);
    if (r->hdr.have_detections)
        fprintf(stderr, "  detections: %.2f per CPI (%s)\n", r->st.detections_per_cpi, r->cfar_desc);
    fprintf(stderr, "  training conditioning: min|R_ii|/max|R_ii| >= %.3g (limit %.2g)\n",
            (double)r->cs.checks.worst_ratio, stap_engine_conditioning_limit(r->eng));
}

static int rec_json(const run_job *j, const rec_run *r)
{
    stap_error err;
    cJSON *doc = run_json(j->input, j->output, r->eng, r->hdr.beams, &j->cfar, r->cfar_desc, j->threads);
    cJSON_AddNumberToObject(doc, "cpis_in_file", (double)r->in_file);
    cJSON_AddNumberToObject(doc, "cpis_unwritten", (double)(r->in_file - r->cpis));
    cJSON_AddNumberToObject(doc, "cpis_run", (double)r->st.cpis_run);
    if (r->st.stopped_by) cJSON_AddNumberToObject(doc, "stopped_by_signal", r->st.stopped_by);
    stream_json_stats(doc, &r->st);
    cJSON_AddNumberToObject(doc, "reader_s", r->read_s);
    cJSON_AddNumberToObject(doc, "readers", r->threads);
    cJSON_AddStringToObject(doc, "reader_path", r->read_path);
    cJSON_AddNumberToObject(doc, "writer_s", r->write_s);
    cJSON_AddStringToObject(doc, "samples", r->samples);
    if (r->ndev > 1) {
        cJSON *arr = cJSON_AddArrayToObject(doc, "devices");
        for (int k = 0; k < r->ndev; k++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "device", j->devices[k]);
            stream_json_stats(o, &r->rep.device[k]);
            cJSON_AddItemToArray(arr, o);
        }
    }
    cJSON_AddStringToObject(doc, "limited_by", stap_stream_limit_of(r->read_s, r->write_s, r->wall * 1e-3));
    cJSON_AddNumberToObject(doc, "total_ms", stap_now_ms() - j->t_start);
    run_json_conditioning(doc, r->cs.checks.worst_ratio, r->eng);
    int status = cli_json_write(j->json, doc, j->mode, &err) ? cli_fail(&err) : EXIT_OK;
    cJSON_Delete(doc);
    return status;
}

int run_recording(run_job *j)
{
    rec_run *r = calloc(1, sizeof *r);
    if (!r) return cli_error(EXIT_PROCESSING, "out of memory");
    r->in_file = stap_recording_cpis(j->rec);
    r->cpis = stap_recording_written(j->rec);
    int status = run_apply_options(j);
    if (status) {
        free(r);
        return status;
    }
    if (par_size() > 1) /* rtstap-mpi: the CPIs dealt to the ranks */
        status = run_ranks(j, r);
    else if (!(status = rec_engine(j, r))) {
        /* from here SIGINT/SIGTERM finish the CPIs in flight and publish what ran (a signal
         * before the first CPI publishes a file of none) */
        cli_graceful_begin();
        status = rec_stream(j, r);
        if (r->ran) {
            int st = rec_publish(j, r);
            if (st) status = st;
            else {
                if (!j->quiet) rec_report(j, r);
                if (j->json && (st = rec_json(j, r))) status = st;
            }
        }
    }
    cli_graceful_end();
    stap_error ignore;
    stap_stream_destroy(r->stream);
    stap_result_writer_abort(r->rw);
    for (int k = 1; k < r->ndev; k++) { /* each on its device */
        stap_error ignore2;
        if (j->devices[k] < 0 || !stap_la_gpu_select(j->devices[k], &ignore2)) stap_engine_destroy(r->engs[k]);
    }
    if (r->ndev > 1 && j->devices[0] >= 0) stap_la_gpu_select(j->devices[0], &ignore);
    stap_engine_destroy(r->eng);
    free(r);
    return status;
}
