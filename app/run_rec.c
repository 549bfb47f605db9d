/* run_rec.c: a recording's run, the parts its one-process path (run_recording.c) and the
 * rtstap-mpi ranks (run_ranks.c) share — the engines, the stream, the checks, the summary
 * (run_rec.h). Calls down only (run_common.c, the library). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "cpi_check.h"
#include "progress.h"
#include "rtstap/common.h" /* stap_now_ms */
#include "run_job.h"
#include "run_rec.h"
#include "par.h"
#include "report.h"

/* the checks of one CPI (the stream serializes them) */
int rec_checked_cpi(void *user, const stap_engine *e, const stap_cpi_result *r, long long input_cpi,
                    stap_error *err)
{
    return cpi_check(user, e, r, err);
}

long long rec_input_cpi(const void *stream, long long i) { return stap_stream_input_cpi(stream, i); }

void rec_progress(void *pg, long long done) { progress_update(pg, done); }

size_t rec_detection_bytes(void)
{
    const char *v = getenv("RTSTAP_TEST_DETECTION_BYTES"); /* tests: a small budget */
    return v && atoll(v) > 0 ? (size_t)atoll(v) : STAP_RESULT_DETECTION_BYTES;
}

/* the engine, with room reserved for the reader's cubes and the writer's queue */
int rec_engine(run_job *j, rec_run *r)
{
    stap_error err;
    const stap_input *in = &j->in;
    int fit = run_cfar_fit(&j->cfar, &j->cfg, j->cfar_given, j->quiet, j->input);
    if (fit) return fit;
    stap_error env_err;
    if (cli_env_engine_defaults(&r->eo, &env_err)) return cli_fail(&env_err);
    r->eo.slots = r->cpis < 3 ? (int)r->cpis : 3;
    r->keep = (j->keep ? j->keep : STAP_KEEP_WEIGHTS | STAP_KEEP_DETECTIONS) |
              (j->keep_output ? STAP_KEEP_OUTPUT : 0u);
    r->eo.keep_weights = (r->keep & STAP_KEEP_WEIGHTS) != 0;
    /* --check looks at every output sample */
    r->eo.keep_output = (r->keep & STAP_KEEP_OUTPUT) || j->check;
    r->eo.cfar = j->cfar;
    stap_stream_input_format(j->rec, j->host_decode, &r->eo.input, r->samples, sizeof r->samples);
    stap_config vc = j->cfg;
    stap_error ignore;
    if (!stap_config_validate(&vc, in->steering != NULL, in->steering_beams,
                              in->steering ? in->steering_len : 0, &ignore)) {
        const int B = in->steering ? in->steering_beams : vc.beams;
        const int readers = j->readers ? j->readers : stap_stream_default_readers();
        const int nbuf = stap_stream_buffers(j->ndevices > 1 ? j->ndevices : 1, r->eo.slots, readers);
        r->eo.host_reserve = sizeof(stap_cf32) * ((size_t)nbuf * in->channels * in->pulses *
                                                 in->range_gates +
                                                  4 * (stap_weights_count(&vc, B) +
                                                       (r->keep & STAP_KEEP_OUTPUT ? stap_output_count(&vc, B) : 0)));
        /* the detections: a copy of a CPI's in each of the writer's 4 queue entries, and the
         * result writer's batch (STAP_RESULT_DETECTION_BYTES and one CPI's more, each
         * detection with its CPI: counted twice) */
        if (j->cfar.kind != STAP_CFAR_NONE && (r->keep & STAP_KEEP_DETECTIONS)) {
            r->eo.detection_copies = 4 + 2;
            r->eo.host_reserve += rec_detection_bytes();
            /* rtstap-mpi: the rank's own (rank_dets.h) and, on rank 0, a round of every
             * rank's (run_ranks.c), each the budget and one CPI's more */
            if (par_size() > 1) {
                r->eo.detection_copies += 2;
                r->eo.host_reserve += 2 * rec_detection_bytes();
            }
        }
    }
    if (stap_engine_create(&r->eng, &j->cfg, in->steering, in->steering_beams, in->steering_len,
                           &r->eo, &err)) {
        /* say how the file was read: a rank-4 cube written in another layout fails here */
        stap_error_prefix(&err, "%s: '/data/iq' of rank 4 read as a recording of %lld CPIs of %d "
                          "channels x %d pulses x %d range gates", j->input, r->cpis, in->channels,
                          in->pulses, in->range_gates);
        return cli_fail(&err);
    }
    if (*stap_engine_note(r->eng) && par_rank() == 0) /* not silenced by --quiet; said once */
        fprintf(stderr, "rtstap: warning: %s\n", stap_engine_note(r->eng));
    /* --devices: an engine on each further device, made with it selected (its thread selects
     * it again to run it) */
    r->engs[0] = r->eng;
    r->ndev = j->ndevices > 1 ? j->ndevices : 1;
    for (int k = 1; k < r->ndev; k++) {
        if ((j->devices[k] >= 0 && stap_la_gpu_select(j->devices[k], &err)) ||
            stap_engine_create(&r->engs[k], &j->cfg, in->steering, in->steering_beams,
                               in->steering_len, &r->eo, &err)) {
            stap_error_prefix(&err, "device %d", j->devices[k]);
            return cli_fail(&err);
        }
    }
    if (r->ndev > 1 && j->devices[0] >= 0 && stap_la_gpu_select(j->devices[0], &err)) return cli_fail(&err);
    stap_result *h = &r->hdr;
    run_result_header(h, r->eng, j->input, &j->cfar, r->cfar_desc, sizeof r->cfar_desc);
    h->looks = in->looks;
    h->meta = &in->meta;
    h->input_samples = in->samples;
    return EXIT_OK;
}

/* The stream (reader, engines, writer) of a recording's run; the test hook
 * RTSTAP_TEST_READER_STALL=I:MS (a slow disk before the I-th CPI) handed on. */
int rec_stream_make(run_job *j, rec_run *r, const stap_stream_source *src, stap_stream_sink *sink,
                    stap_stream_options *so, stap_error *err)
{
    stap_stream_options_defaults(so);
    const char *hook = getenv("RTSTAP_TEST_READER_STALL");
    if (hook && sscanf(hook, "%lld:%lld", &so->test_stall_at, &so->test_stall_ms) != 2)
        so->test_stall_at = so->test_stall_ms = 0;
    so->progress = rec_progress;
    so->progress_user = &r->pg;
    /* what is written is always checked finite; --check also the output not written */
    cpi_checks_init(&r->cs.checks, j->input, j->inopts.strict, j->check || (r->keep & STAP_KEEP_OUTPUT), 1);
    sink->each = rec_checked_cpi;
    sink->each_user = &r->cs.checks;
    sink->keep = r->keep;
    int st = stap_stream_create_on(&r->stream, r->engs, j->ndevices > 1 ? j->devices : NULL, r->ndev,
                                   src, sink, so, err);
    /* the input's CPI in messages (the stream numbers each result as its CPI) */
    r->cs.checks.name_cpi = rec_input_cpi;
    r->cs.checks.name_user = r->stream;
    return st;
}

void rec_took(rec_run *r)
{
    r->st = r->rep.all;
    r->read_s = r->rep.read_s;
    r->wait_s = r->rep.read_wait_s;
    r->write_s = r->rep.write_s;
    r->threads = r->rep.readers;
    snprintf(r->read_path, sizeof r->read_path, "%s", r->rep.read_path);
}

void rec_summary(const run_job *j, const rec_run *r, const char *stopped, long long written,
                 stap_result *sum)
{
    memset(sum, 0, sizeof *sum);
    sum->timing_ms = r->st.stage_median;
    sum->read_ms = r->read_s * 1e3;
    sum->total_ms = stap_now_ms() - j->t_start;
    sum->backend_name = r->hdr.backend_name;
    sum->stopped = stopped && stopped[0] ? stopped : NULL;
    sum->cpis_unwritten = r->in_file - written;
    sum->engine_note = stap_engine_note(r->eng);
}

