/* run_rec: what `run` on a recording holds and measures, shared by its one-process path
 * (run_recording.c) and its ranks' path under rtstap-mpi (run_ranks.c). */
#ifndef RUN_REC_H
#define RUN_REC_H

#include "cpi_check.h"
#include "progress.h"
#include "run_job.h"
#include "report.h"
#include "rtstap/stream.h"

enum { RUN_MAX_DEVICES = STAP_STREAM_MAX_DEVICES };

/* The checks of cpi_check.h on each result of the stream. */
typedef struct checked_sink {
    cpi_checks checks;
} checked_sink;

/* what one recording run holds and measures */
typedef struct rec_run {
    long long in_file, cpis;
    stap_engine *eng;
    stap_engine_options eo;
    stap_result_writer *rw;
    stap_stream *stream;  /* the reader, the engines, the writer                      */
    stap_stream_report rep;
    stap_result hdr;
    char cfar_desc[128];
    stap_stream_stats st;
    checked_sink cs;
    char stopped[640];
    stap_error fault;
    double read_s, wait_s, write_s, wall;
    int ran; /* the stream ended, stopped or faulted: what ran is published */
    int threads; /* reader threads */
    char samples[200]; /* how the samples reach the engine (cpi_input_format) */
    unsigned keep;     /* what the result file keeps (STAP_KEEP_*) */
    char read_path[200]; /* how the reader read (cpi_reader_path) */
    progress pg;         /* the progress line (--progress) */
    double t_stream;     /* ms, when the stream began */
    stap_engine *engs[RUN_MAX_DEVICES]; /* --devices: one per device (engs[0] is eng)  */
    int ndev;
} rec_run;

/* The bytes of detections a recording's writers hold before writing them
 * (STAP_RESULT_DETECTION_BYTES; tests: RTSTAP_TEST_DETECTION_BYTES). */
size_t rec_detection_bytes(void);
/* The engine (and --devices' further engines) for r->cpis CPIs, the result header. */
int rec_engine(run_job *j, rec_run *r);
/* The summary the result writer's close takes: rank 0's (or the one) stream's medians, the
 * stop (NULL or ""), the CPIs the input never wrote (of `written` run). */
void rec_summary(const run_job *j, const rec_run *r, const char *stopped, long long written,
                 stap_result *sum);
/* one CPI's checks (cpi_check; user: the cpi_checks), as the stream's sink.each */
int rec_checked_cpi(void *user, const stap_engine *e, const stap_cpi_result *r, long long input_cpi,
                    stap_error *err);
/* the input's CPI of the stream's i-th (cpi_checks.name_cpi; user: the stream) */
long long rec_input_cpi(const void *stream, long long i);
/* The run's stream over r's engines from src: sink.each the checks of cpi_check.h, sink.keep
 * the run's; the options' progress line and test hook (RTSTAP_TEST_READER_STALL) set. */
int rec_stream_make(run_job *j, rec_run *r, const stap_stream_source *src, stap_stream_sink *sink,
                    stap_stream_options *so, stap_error *err);
/* what the stream measured (r->rep), into the run's record */
void rec_took(rec_run *r);
/* the stream's progress (stap_stream_options.progress; user: the progress line) */
void rec_progress(void *pg, long long done);
/* `rtstap-mpi run` on a recording with more than one rank (run_ranks.c) */
int run_ranks(run_job *j, rec_run *r);

#endif
