/* listen: what `rtstap listen` holds (app/cmd_listen.c), shared with its result file
 * (app/listen_out.c). */
#ifndef LISTEN_H
#define LISTEN_H

#include "cli_opts.h"
#include "cpi_check.h"
#include "rtstap/h5io.h"
#include "rtstap/stream.h"
#include "vrt.h"
#include "zmq_live.h"

typedef struct listen_job {
    const char *vrt, *shape_s, *json, *preset, *output;
    const char *zmq;                /* --zmq: the ZeroMQ address (else --vrt's UDP)     */
    int zmq_pull, zmq_hwm, zmq_max;
    const char *raw, *layout_s;     /* --raw cf32|ci16: items framed by count; --layout */
    stap_sample_format raw_fmt;
    stap_zmq_in *zin;
    const char *source;             /* the one given: --vrt or --zmq                   */
    int discard, force, cpis, buffers, rcvbuf_mib, timeout_ms;
    double duration;
    /* the engine-fed form */
    cli_processing proc;
    cli_training tw;
    stap_cfar_config cfar;          /* run's detector options                          */
    int cfar_given;
    stap_backend backend;
    int slots, threads;
    double scale, deadline;
    stap_stream *stream;            /* the receiver through the engine (STAP_STREAM_LIVE) */
    long long processed, detections;
    stap_stream_report rep;
    char engine[300];
    stap_engine *eng;               /* the stream's engine (made before it)            */
    /* -o FILE: the result file of a recording's run (listen_out.c) */
    unsigned keep;                  /* --keep (0: weights and detections)              */
    stap_result_writer *rw;
    stap_result hdr;
    char cfar_desc[128], samples[200];
    cpi_checks checks;              /* what is written is checked finite               */
    /* --publish: each CPI's detections as a JSON message (listen_pub.c) */
    const char *publish;
    int publish_hwm;
    stap_zmq_pub *pub;
    char *msg;                      /* the message, grown only for more detections   */
    size_t msg_cap;
    stap_vrt_shape s;
    stap_live_udp *rx;
    stap_live_info info;
    stap_live_counts n;
    stap_live_tally tally;          /* --discard's                                     */
    stap_stream_live_report live;   /* what was decided: the stream's report, or
                                       --discard's tally (no latency)                  */
    double t_start;
    int stopped_by;
} listen_job;

/* -o: the result writer opened on the engine's configuration (before the stream: it is
 * the stream's sink), with its header; EXIT_OK or the exit status (printed). */
int listen_out_open(listen_job *j, const stap_engine_options *eo);
/* -o: the rows written published, with the lost CPIs (/config cpis_lost, /lost_cpis) and,
 * after a signal, /config stopped; EXIT_OK or the exit status (printed). */
int listen_out_publish(listen_job *j);

/* --publish: the PUB socket bound (before the receiver), EXIT_OK or the status (printed) */
int listen_pub_open(listen_job *j);
/* --publish: CPI r's message (r->cpi its row, stream CPI input_cpi, `lost` CPIs lost so far,
 * latency ms from its last packet), sent without waiting: a full queue drops it (counted); an
 * error of ZeroMQ stops the stream. */
int listen_pub_cpi(listen_job *j, const stap_cpi_result *r, long long input_cpi, long long lost, double ms,
                   stap_error *err);

#endif
