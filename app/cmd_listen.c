/* cmd_listen: `rtstap listen` — live input (issue 45, docs/live.md): VITA-49 datagrams over
 * UDP received by the library's receiver (stap_live_udp_*, include/rtstap/vrt.h) and
 * assembled into CPIs, complete or lost, in CPI order. With --discard, the receive path
 * alone: each complete CPI is counted and its buffer given back at once (no engine), and
 * the report says what came, what was lost and why, and the rates. The engine-fed form
 * takes the same events: a complete CPI is an int16 (i, q) cube in (channel, pulse, range)
 * order, a source for the stream runtime (issue 44); with -o its results are written as
 * `run` writes a recording's (listen_out.c).
 *
 * Stopping: --cpis N (N CPIs complete or lost), --duration T, or SIGINT / SIGTERM: the
 * handler calls stap_live_udp_stop (async-signal-safe), the receiver ends and the report
 * covers what came (exit 128 + the signal). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "env.h"
#include "cli.h"
#include "cli_json.h"
#include "cli_opts.h"
#include "listen.h"
#include "signals.h"
#include "progress.h"
#include "report.h" /* stream_json_report, stream_json_stats */
#include "rtstap/stream.h"
#include "vrt.h"
#include "workload.h"

static const cli_command listen_cmd = {
    "listen",
    "Receive a live stream (docs/live.md): one VITA-49.0 IF data packet a UDP datagram,\n"
    "placed by (channel, pulse, gate) into a fixed pool of CPI buffers. A CPI is complete\n"
    "when every sample came; a CPI missing any packet is lost (never zero-filled), and so\n"
    "is every CPI that finds no free buffer (overload). Malformed, duplicate and late\n"
    "packets are counted. Once the socket is bound, a line with the word `listening` and\n"
    "the address (the port chosen, for port 0) goes to stderr. With --discard, the receive\n"
    "path alone: complete CPIs are counted and dropped. Without it, each complete CPI goes\n"
    "to the engine as its int16 (i, q) samples times --scale, through the stream runtime\n"
    "(S CPIs in flight), processed with --preset and run's processing options over the\n"
    "stream's shape; the report adds the processed rate, detections, and latency from a\n"
    "CPI's last packet to its results (p50, p99, max; --deadline-ms counts the misses).\n"
    "A CPI the engine cannot take in time finds no free receive buffer and is lost\n"
    "(overload): the receiver never waits. Stops after --cpis N CPIs complete or lost, after\n"
    "--duration T, or on SIGINT / SIGTERM (the report covers what came; exit 128 + the\n"
    "signal). The report goes to stderr, and as JSON with --json.\n",
    NULL};

enum { MAX_LISTED = 50 };

static stap_live_udp *volatile signal_rx; /* what the signal handler stops */

static void stop_on_signal(void)
{
    stap_live_udp_stop(signal_rx);
}

/* "C,P,R": three positive integers */
static int parse_shape(listen_job *j)
{
    long v[3];
    const char *at = j->shape_s;
    for (int i = 0; i < 3; i++) {
        char *end;
        errno = 0;
        v[i] = strtol(at, &end, 10);
        const char want = i < 2 ? ',' : '\0';
        if (end == at || errno || v[i] < 1 || v[i] > INT_MAX || *end != want)
            return cli_error(EXIT_USAGE, "--shape expects C,P,R: channels, pulses and range gates, positive "
                             "integers (got '%s')", j->shape_s);
        at = end + 1;
    }
    j->s = (stap_vrt_shape){(int)v[0], (int)v[1], (int)v[2]};
    stap_error err;
    if (stap_vrt_shape_validate(&j->s, &err)) return cli_error(EXIT_USAGE, "--shape %s: %s", j->shape_s, err.msg);
    return EXIT_OK;
}

/* --raw, --layout: the items' format, the engine's input as they come */
static int raw_format(listen_job *j)
{
    stap_error err;
    if (!j->raw) {
        if (j->layout_s) return cli_error(EXIT_USAGE, "--layout: with --raw");
        return EXIT_OK;
    }
    if (!j->zmq) return cli_error(EXIT_USAGE, "--raw: with --zmq (GNU Radio's ZMQ sinks)");
    if (!strcmp(j->raw, "cf32")) j->raw_fmt.type = STAP_SAMPLES_CF32;
    else if (!strcmp(j->raw, "ci16")) j->raw_fmt.type = STAP_SAMPLES_CI16, j->raw_fmt.scale = j->scale;
    else return cli_error(EXIT_USAGE, "--raw: cf32 or ci16 (got '%s')", j->raw);
    if (j->layout_s && stap_layout_parse(j->layout_s, &j->raw_fmt.order, &err))
        return cli_error(EXIT_USAGE, "--layout: %s", err.msg);
    return EXIT_OK;
}

/* --discard: the events until the end (--cpis decided, --duration over, a signal, the
 * receiver's end), each complete CPI dropped at once, every CPI tallied */
static int receive(listen_job *j)
{
    stap_error err;
    if (stap_live_tally_init(&j->tally, j->cpis ? j->cpis : LLONG_MAX, &err)) return cli_fail(&err);
    while (!stap_live_tally_done(&j->tally) && !cli_graceful_requested()) {
        int wait = 200;
        if (j->duration > 0) {
            const double left = j->t_start + 1e3 * j->duration - stap_now_ms();
            if (left <= 0) break;
            if (left < wait) wait = (int)left + 1;
        }
        stap_live_event ev;
        if (stap_live_udp_next(j->rx, &ev, wait, &err)) return cli_fail(&err);
        if (ev.kind == STAP_LIVE_END) break;
        if (stap_live_tally_add(&j->tally, &ev)) stap_live_udp_release(j->rx, ev.cpi);
    }
    stap_stream_live_report_counts(&j->tally, &j->live);
    return EXIT_OK;
}

/* ---- into the engine: the receiver as the stream's source (STAP_STREAM_LIVE) ---------- */

/* each CPI's results (r->cpi: its row): checked finite where they are written or
 * published; published with its latency from its last packet */
static int live_result(void *user, const stap_engine *e, const stap_cpi_result *r, long long input_cpi,
                       stap_error *err)
{
    listen_job *j = user;
    if ((j->rw || j->pub) && cpi_check(&j->checks, e, r, err)) return err->code;
    j->processed++;
    j->detections += (long long)r->detection_count;
    if (!j->pub) return STAP_OK;
    return listen_pub_cpi(j, r, input_cpi, stap_stream_live_tally(j->stream)->lost,
                          stap_stream_live_latency_ms(j->stream, r), err);
}

/* the configuration: the preset, run's processing options, the stream's shape */
static int live_config(listen_job *j, workload *w, stap_engine_options *eo)
{
    stap_error err;
    int st;
    if (workload_get(j->preset, w, &err)) return cli_error(EXIT_USAGE, "--preset: %s", err.msg);
    stap_config *c = &w->cfg;
    c->backend = j->backend;
    c->threads = j->threads;
    if ((st = cli_training_apply(&j->tw, j->proc.seg > 0, c)) || (st = cli_training_order(&j->tw, &j->proc.dorder)))
        return st;
    cli_processing_apply(&j->proc, c);
    c->channels = j->s.channels;
    c->pulses = j->s.pulses;
    c->range_gates = j->s.range_gates;
    c->doppler_bins = j->proc.dbins > 0 ? j->proc.dbins : 0; /* D = P unless given */
    char note[400];
    cli_fit_to_shape(c, &j->proc, note, sizeof note);
    if (note[0]) fprintf(stderr, "rtstap: note: listen: from the stream's shape: %s\n", note);
    if ((st = cli_detector_check(&j->cfar, c))) return st;
    stap_error env_err;
    if (cli_env_engine_defaults(eo, &env_err)) return cli_fail(&env_err);
    eo->cfar = j->cfar;
    eo->slots = j->slots;
    if (j->output && !j->keep) j->keep = STAP_KEEP_WEIGHTS | STAP_KEEP_DETECTIONS;
    eo->keep_weights = (j->keep & STAP_KEEP_WEIGHTS) != 0;
    eo->keep_output = (j->keep & STAP_KEEP_OUTPUT) != 0;
    eo->input = j->raw ? j->raw_fmt : (stap_sample_format){.type = STAP_SAMPLES_CI16, .scale = j->scale};
    if (j->buffers < j->slots + 2)
        return cli_error(EXIT_USAGE, "--buffers %d: the engine holds %d CPIs in flight; give at least %d",
                         j->buffers, j->slots, j->slots + 2);
    return EXIT_OK;
}

static long long live_name_cpi(const void *user, long long n)
{
    return stap_stream_input_cpi(((const listen_job *)user)->stream, n);
}

/* the engine (made before the socket is bound) and, with -o, the result writer its sink */
static int live_engine(listen_job *j)
{
    stap_error err;
    workload w;
    stap_engine_options eo;
    memset(&w, 0, sizeof w);
    int st = live_config(j, &w, &eo);
    if (!st && stap_engine_create(&j->eng, &w.cfg, w.steering, w.nbeams, w.steering ? w.steering_len : 0, &eo,
                                  &err)) /* a configuration the stream's shape cannot take: the command line's */
        st = err.code == STAP_EINVAL ? cli_error(EXIT_USAGE, "%s", err.msg) : cli_fail(&err);
    workload_free(&w);
    if (st) return st;
    if (*stap_engine_note(j->eng)) fprintf(stderr, "rtstap: warning: %s\n", stap_engine_note(j->eng));
    if (j->output && (st = listen_out_open(j, &eo))) return st;
    cpi_checks_init(&j->checks, j->source, 0, 1, 1);
    j->checks.name_cpi = live_name_cpi;
    j->checks.name_user = j;
    snprintf(j->engine, sizeof j->engine, "%s", stap_engine_describe(j->eng));
    return EXIT_OK;
}

/* the stream from the receiver through the engine: --cpis (else at most 10^6, the CPIs
 * whose timings it keeps) and --duration end it */
static int live_stream(listen_job *j)
{
    stap_error err;
    const stap_stream_source src = {.kind = STAP_STREAM_LIVE, .cpis = j->cpis ? j->cpis : 1000000,
                                    .live = j->rx, .live_seconds = j->duration};
    const stap_stream_sink sink = {.each = live_result, .each_user = j, .writer = j->rw, .keep = j->keep};
    stap_stream_options so;
    stap_stream_options_defaults(&so);
    so.deadline_ms = j->deadline;
    if (stap_stream_create_on(&j->stream, &j->eng, NULL, 1, &src, &sink, &so, &err)) return cli_fail(&err);
    return EXIT_OK;
}

/* the lost CPIs, one number each, the first `most` (all: -1) */
static void print_lost(const listen_job *j, FILE *out, long long most)
{
    long long shown = 0;
    const stap_stream_live_report *L = &j->live;
    for (int r = 0; r < L->nranges; r++)
        for (long long k = 0; k < L->lost_ranges[r].count; k++, shown++) {
            if (most >= 0 && shown >= most) {
                fprintf(out, " ... (--json lists them all)");
                return;
            }
            fprintf(out, " %lld", L->lost_ranges[r].cpi + k);
        }
}

static double rate(double x, double seconds)
{
    return seconds > 0 ? x / seconds : 0;
}

static void report_text(const listen_job *j, FILE *out)
{
    const stap_live_counts *n = &j->n;
    const stap_stream_live_report *L = &j->live;
    const double span = (n->last_ms - n->first_ms) / 1e3;
    fprintf(out, "rtstap listen: %s, C=%d P=%d R=%d, %d CPI buffers, %s\n", j->info.address,
            j->s.channels, j->s.pulses, j->s.range_gates, j->buffers,
            j->discard ? "discarding (no engine)" : "into the engine");
    if (!j->discard)
        fprintf(out, "  engine: %s\n  processed: %lld CPIs, %.2f detections a CPI; latency from the last "
                "packet to results p50 %.3f ms, p99 %.3f ms, max %.3f ms%s", j->engine, j->processed,
                j->processed ? (double)j->detections / j->processed : 0, L->lat_p50, L->lat_p99, L->lat_max,
                j->deadline > 0 ? "" : "\n");
    if (!j->discard && j->deadline > 0) fprintf(out, "; %lld over %.3g ms\n", L->deadline_misses, j->deadline);
    if (!j->discard)
        fprintf(out, "  of which until its submit: p50 %.3f ms, p99 %.3f ms, max %.3f ms; the hand-over (not "
                "waiting for the engine) p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", L->wait_p50, L->wait_p99,
                L->wait_max, L->handoff_p50, L->handoff_p99, L->handoff_max);
    if (j->pub) {
        long long sent, dropped;
        stap_zmq_pub_counts(j->pub, &sent, &dropped);
        fprintf(out, "  published on %s: %lld messages, %lld dropped (a subscriber's queue full)\n",
                stap_zmq_pub_address(j->pub), sent, dropped);
    }
    fprintf(out, "  cpis: %lld complete, %lld lost%s", L->complete, L->lost, L->lost ? ":" : "");
    print_lost(j, out, MAX_LISTED);
    fprintf(out, "\n");
    if (L->lost)
        fprintf(out, "  lost: %lld missing packets, %lld never seen, %lld overload (no free buffer)\n",
                n->lost[STAP_VRT_LOST_MISSING], n->lost[STAP_VRT_LOST_UNSEEN], n->lost[STAP_VRT_LOST_OVERRUN]);
    fprintf(out, "  packets: %llu datagrams, %llu bytes; %llu malformed, %llu duplicates, %llu late, %llu "
            "skipped, %llu context\n", n->vrt.datagrams, n->bytes, n->vrt.malformed, n->vrt.duplicates,
            n->vrt.late, n->vrt.skipped, n->vrt.kinds[STAP_VRT_CONTEXT] + n->vrt.kinds[STAP_VRT_CONTEXT_OTHER]);
    fprintf(out, "  rate: %.4g CPIs/s offered, %.4g processed, over %.3f s from the first datagram to the last; "
            "%.4g datagrams/s, %.4g MB/s\n", rate((double)(L->complete + L->lost), span),
            rate((double)L->complete, span), span, rate((double)n->vrt.datagrams, span),
            rate((double)n->bytes / 1e6, span));
    if (!j->zmq)
        fprintf(out, "  socket buffer: %lld bytes asked, %lld got%s\n", j->info.rcvbuf_asked, j->info.rcvbuf_got,
                j->info.rcvbuf_capped ? " (capped by the system: net.core.rmem_max; raise it with sysctl)"
                : j->info.rcvbuf_forced ? " (SO_RCVBUFFORCE)" : "");
}

static cJSON *report_json(const listen_job *j)
{
    const stap_live_counts *n = &j->n;
    const stap_stream_live_report *L = &j->live;
    const double span = (n->last_ms - n->first_ms) / 1e3;
    cJSON *doc = stream_json_report("listen");
    if (!doc) return NULL;
    cJSON_AddStringToObject(doc, j->zmq ? "zmq" : "vrt", j->source);
    cJSON_AddStringToObject(doc, "address", j->info.address);
    cJSON_AddNumberToObject(doc, "channels", j->s.channels);
    cJSON_AddNumberToObject(doc, "pulses", j->s.pulses);
    cJSON_AddNumberToObject(doc, "range_gates", j->s.range_gates);
    cJSON_AddNumberToObject(doc, "buffers", j->buffers);
    cJSON_AddBoolToObject(doc, "discard", j->discard);
    if (!j->discard) {
        cJSON_AddStringToObject(doc, "engine", j->engine);
        cJSON_AddNumberToObject(doc, "cpis_processed", (double)j->processed);
        cJSON_AddNumberToObject(doc, "detections", (double)j->detections);
        cJSON *l = cJSON_AddObjectToObject(doc, "latency_ms"); /* last packet to results */
        cJSON_AddNumberToObject(l, "p50", L->lat_p50);
        cJSON_AddNumberToObject(l, "p99", L->lat_p99);
        cJSON_AddNumberToObject(l, "max", L->lat_max);
        cJSON *w = cJSON_AddObjectToObject(doc, "wait_ms"); /* last packet to the engine's submit */
        cJSON_AddNumberToObject(w, "p50", L->wait_p50);
        cJSON_AddNumberToObject(w, "p99", L->wait_p99);
        cJSON_AddNumberToObject(w, "max", L->wait_max);
        cJSON *h = cJSON_AddObjectToObject(doc, "handoff_ms"); /* of the wait: not waiting for the engine */
        cJSON_AddNumberToObject(h, "p50", L->handoff_p50);
        cJSON_AddNumberToObject(h, "p99", L->handoff_p99);
        cJSON_AddNumberToObject(h, "max", L->handoff_max);
        if (j->deadline > 0) cJSON_AddNumberToObject(doc, "deadline_misses", (double)L->deadline_misses);
    }
    if (j->pub) {
        long long sent, dropped;
        stap_zmq_pub_counts(j->pub, &sent, &dropped);
        cJSON_AddStringToObject(doc, "publish", stap_zmq_pub_address(j->pub));
        cJSON_AddNumberToObject(doc, "published", (double)sent);
        cJSON_AddNumberToObject(doc, "publish_dropped", (double)dropped);
    }
    cJSON_AddNumberToObject(doc, "first_cpi", (double)L->first_cpi);
    cJSON_AddNumberToObject(doc, "cpis", (double)L->complete);
    cJSON_AddNumberToObject(doc, "cpis_lost", (double)L->lost);
    if (L->ranges_truncated) cJSON_AddBoolToObject(doc, "lost_cpis_truncated", 1);
    cJSON *list = cJSON_AddArrayToObject(doc, "lost_cpis");
    cJSON *ranges = cJSON_AddArrayToObject(doc, "lost_ranges");
    for (int r = 0; list && ranges && r < L->nranges; r++) {
        for (long long k = 0; k < L->lost_ranges[r].count; k++)
            cJSON_AddItemToArray(list, cJSON_CreateNumber((double)(L->lost_ranges[r].cpi + k)));
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "first", (double)L->lost_ranges[r].cpi);
        cJSON_AddNumberToObject(o, "count", (double)L->lost_ranges[r].count);
        cJSON_AddStringToObject(o, "reason", stap_vrt_lost_reason_name(L->lost_ranges[r].reason));
        cJSON_AddItemToArray(ranges, o);
    }
    cJSON *why = cJSON_AddObjectToObject(doc, "lost_by_reason");
    for (int r = STAP_VRT_LOST_MISSING; why && r <= STAP_VRT_LOST_OVERRUN; r++)
        cJSON_AddNumberToObject(why, stap_vrt_lost_reason_name((stap_vrt_lost_reason)r), (double)n->lost[r]);
    cJSON_AddNumberToObject(doc, "packets", (double)n->vrt.datagrams);
    cJSON_AddNumberToObject(doc, "bytes", (double)n->bytes);
    cJSON *kinds = cJSON_AddObjectToObject(doc, "kinds");
    for (int k = 0; kinds && k < STAP_VRT_KINDS; k++)
        if (n->vrt.kinds[k]) cJSON_AddNumberToObject(kinds, stap_vrt_kind_name((stap_vrt_kind)k), (double)n->vrt.kinds[k]);
    cJSON_AddNumberToObject(doc, "malformed_packets", (double)n->vrt.malformed);
    cJSON_AddNumberToObject(doc, "duplicates", (double)n->vrt.duplicates);
    cJSON_AddNumberToObject(doc, "late", (double)n->vrt.late);
    cJSON_AddNumberToObject(doc, "skipped", (double)n->vrt.skipped);
    cJSON_AddNumberToObject(doc, "overrun_packets", (double)n->vrt.overrun);
    cJSON_AddNumberToObject(doc, "truncated", (double)n->truncated);
    cJSON_AddNumberToObject(doc, "timeouts", (double)n->timeouts);
    cJSON_AddNumberToObject(doc, "elapsed_s", span);
    cJSON_AddNumberToObject(doc, "offered_cpis_per_s", rate((double)(L->complete + L->lost), span));
    cJSON_AddNumberToObject(doc, "processed_cpis_per_s", rate((double)L->complete, span));
    cJSON_AddNumberToObject(doc, "packets_per_s", rate((double)n->vrt.datagrams, span));
    cJSON_AddNumberToObject(doc, "bytes_per_s", rate((double)n->bytes, span));
    cJSON_AddNumberToObject(doc, "rcvbuf_asked", (double)j->info.rcvbuf_asked);
    cJSON_AddNumberToObject(doc, "rcvbuf_got", (double)j->info.rcvbuf_got);
    cJSON_AddBoolToObject(doc, "rcvbuf_capped", j->info.rcvbuf_capped);
    cJSON_AddBoolToObject(doc, "rcvbuf_forced", j->info.rcvbuf_forced);
    if (n->vrt.has_sample_rate) cJSON_AddNumberToObject(doc, "sample_rate_hz", n->vrt.sample_rate_hz);
    if (n->vrt.has_rf) cJSON_AddNumberToObject(doc, "rf_hz", n->vrt.rf_hz);
    if (j->stopped_by) cJSON_AddNumberToObject(doc, "stopped_by_signal", j->stopped_by);
    return doc;
}

/* bind, say so, receive until told to stop, report */
static int listen_run(listen_job *j)
{
    stap_error err;
    /* raw mode: messages of any size (GNU Radio's work calls) kept whole, a few a batch */
    const int max = j->zmq_max ? j->zmq_max : j->raw ? 4 << 20 : 0;
    const stap_live_udp_options o = {j->buffers, j->rcvbuf_mib << 20, j->timeout_ms, max > 65536 ? 4 : 0,
                                     j->raw ? (int)stap_sample_bytes(&j->raw_fmt) : 0, max};
    int status = j->discard ? EXIT_OK : live_engine(j);
    if (!status && j->publish) status = listen_pub_open(j);
    if (status) return status;
    int st;
    if (j->zmq) { /* a SUB or PULL socket as the receiver's transport */
        st = stap_zmq_in_create(&j->zin, j->zmq, j->zmq_pull, j->zmq_hwm, &err);
        if (!st) st = stap_live_udp_create_on(&j->rx, &j->s, stap_zmq_in_transport(j->zin), &o, &err);
    } else {
        st = stap_live_udp_create(&j->rx, &j->s, j->vrt, &o, &err);
    }
    if (st == STAP_EINVAL) return cli_error(EXIT_USAGE, "--%s %s: %s", j->zmq ? "zmq" : "vrt", j->source, err.msg);
    if (st) return cli_fail(&err);
    if (!j->discard && (status = live_stream(j))) return status;
    stap_live_udp_info(j->rx, &j->info);
    j->t_start = stap_now_ms();
    signal_rx = j->rx;
    cli_graceful_begin();
    cli_graceful_notify(stop_on_signal);
    if (j->pub) fprintf(stderr, "rtstap listen: publishing on %s\n", stap_zmq_pub_address(j->pub));
    fprintf(stderr, "rtstap listen: listening on %s (C=%d P=%d R=%d)\n", j->info.address, j->s.channels,
            j->s.pulses, j->s.range_gates);
    fflush(stderr);
    if (j->stream) {
        cli_graceful_attach(j->stream);
        if (stap_stream_run(j->stream, &j->rep, &err)) status = cli_fail(&err);
        j->live = j->rep.live; /* (its lost runs are the stream's: kept until the end) */
    } else {
        status = receive(j);
    }
    j->stopped_by = cli_graceful_requested();
    stap_live_udp_stop(j->rx);
    cli_graceful_end();
    stap_live_udp_counts(j->rx, &j->n);
    if (status) return status;
    if (j->rw && (status = listen_out_publish(j))) return status;
    report_text(j, stderr);
    cJSON *doc = j->json ? report_json(j) : NULL;
    if (j->json && !doc) return cli_error(EXIT_PROCESSING, "out of memory");
    if (doc && cli_json_write(j->json, doc, cli_write_mode(j->force), &err)) status = cli_fail(&err);
    cJSON_Delete(doc);
    if (!status && j->stopped_by) status = 128 + j->stopped_by;
    return status;
}

int cmd_listen(int argc, char **argv)
{
    listen_job j;
    memset(&j, 0, sizeof j);
    j.buffers = 8;
    j.rcvbuf_mib = 64;
    j.timeout_ms = 1000;
    j.preset = "hard";
    j.scale = 1;
    j.slots = 3;
    j.publish_hwm = 1000;
    j.zmq_hwm = 10000;
    j.backend = STAP_BACKEND_AUTO;
    cli_training_defaults(&j.tw);
    stap_cfar_defaults(&j.cfar);
    j.cfar.kind = STAP_CFAR_CA;
    cli_opt opts[] = {
        {"vrt", 0, CLI_STRING, &j.vrt, "udp://HOST:PORT",
         "where to listen (HOST a name, an IPv4 address or [IPv6];\nport 0: a free port, named on stderr)"},
        {"zmq", 0, CLI_STRING, &j.zmq, "tcp://HOST:PORT",
         "instead of --vrt: connect a ZeroMQ SUB socket there, one VRT\npacket a message (docs/live.md)"},
        {"zmq-pull", 0, CLI_FLAG, &j.zmq_pull, NULL,
         "--zmq: a PULL socket (a PUSH sender's) instead of SUB"},
        {"raw", 0, CLI_STRING, &j.raw, "cf32|ci16",
         "--zmq: raw items instead of VRT packets (GNU Radio's ZMQ\n"
         "sinks): complex64 or int16 (i, q), little-endian, C x P x R a\n"
         "CPI in --layout's order, CPIs framed by count (a dropped\n"
         "message cannot be seen: docs/live.md)"},
        {"layout", 0, CLI_STRING, &j.layout_s, "ORDER",
         "--raw: the order of a CPI's axes, slowest first (default\nC,P,R)"},
        {"zmq-max-message", 0, CLI_INT, &j.zmq_max, "BYTES",
         "--zmq: the longest message kept whole (default 65536; --raw:\n"
         "4 MiB, and a longer one ends listen: its framing is lost)", .lo = 65536, .hi = 64 << 20},
        {"zmq-hwm", 0, CLI_INT, &j.zmq_hwm, "N",
         "--zmq: messages ZeroMQ queues at most (default 10000)", .lo = 1, .hi = 10000000},
        {"shape", 0, CLI_STRING, &j.shape_s, "C,P,R", "the stream's channels, pulses a CPI, range gates",
         .flags = CLI_REQUIRED},
        {"discard", 0, CLI_FLAG, &j.discard, NULL,
         "the receive path alone: count complete CPIs and drop them\n(no engine)"},
        {"preset", 0, CLI_STRING, &j.preset, "NAME",
         "the processing's preset, fitted to --shape (default hard)"},
        {"scale", 0, CLI_DOUBLE, &j.scale, "S", "a sample's value is S x its int16 (default 1)", .lo = 1e-30,
         .hi = 1e30},
        {"slots", 0, CLI_INT, &j.slots, "S", "CPIs in flight in the engine, 1..8 (default 3)", .lo = 1,
         .hi = STAP_ENGINE_MAX_SLOTS},
        {"deadline-ms", 0, CLI_DOUBLE, &j.deadline, "T",
         "count CPIs whose latency (last packet to results) exceeds T ms", .lo = 1e-6, .hi = 1e9},
        CLI_OPT_BACKEND(&j.backend),
        CLI_OPT_THREADS(&j.threads),
        CLI_OPTS_PROCESSING(&j.proc),
        CLI_OPT_TRAINING(&j.tw),
        CLI_OPTS_CFAR(&j.cfar, &j.cfar_given),
        {"cpis", 0, CLI_INT, &j.cpis, "N", "stop after N CPIs complete or lost (from the stream's first)",
         .lo = 1, .hi = INT_MAX},
        {"duration", 0, CLI_DOUBLE, &j.duration, "T", "stop after T seconds", .lo = 1e-3, .hi = 1e9},
        {"buffers", 0, CLI_INT, &j.buffers, "N",
         "CPI buffers of the receive pool (default 8): a CPI that\nfinds none free is lost (overload)", .lo = 1,
         .hi = 65536},
        {"rcvbuf-mib", 0, CLI_INT, &j.rcvbuf_mib, "M",
         "the socket receive buffer asked for, MiB (default 64; the\nsystem caps it at net.core.rmem_max)",
         .lo = 1, .hi = 1024},
        {"timeout-ms", 0, CLI_INT, &j.timeout_ms, "T",
         "an incomplete CPI is lost when no packet has added a sample\nfor T ms (default 1000)", .lo = 1,
         .hi = 3600000},
        {"output", 'o', CLI_STRING, &j.output, "FILE",
         "the results, as `run` writes a recording's: a row per CPI\n"
         "processed (/axes/input_cpi: the stream's CPI), the lost ones\n"
         "named (/config cpis_lost, /lost_cpis); published when listen\n"
         "ends, after a signal with /config stopped", .flags = CLI_OUTPUT},
        {"keep", 0, CLI_CALL, &j.keep, "LIST",
         "what -o keeps, comma-separated: detections, weights, output\n"
         "(default detections,weights)", .parse = cli_parse_keep},
        {"publish", 0, CLI_STRING, &j.publish, "zmq+tcp://HOST:PORT",
         "publish each CPI's detections as a JSON message on a ZeroMQ\n"
         "PUB socket bound there (port 0: a free one, named on stderr)"},
        {"publish-hwm", 0, CLI_INT, &j.publish_hwm, "N",
         "--publish: messages queued a subscriber at most (default\n"
         "1000); one more is dropped and counted, never waited for", .lo = 1, .hi = 1000000},
        CLI_OPT_JSON(&j.json),
        CLI_OPT_FORCE(&j.force),
        {0}};
    int status = cli_parse(&listen_cmd, opts, argc, argv);
    if (status != CLI_GO) return status;
    if (!j.vrt == !j.zmq) return cli_error(EXIT_USAGE, "give one of --vrt udp://HOST:PORT and --zmq tcp://HOST:PORT");
    if (!j.zmq && (j.zmq_pull || j.zmq_hwm != 10000 || j.zmq_max))
        return cli_error(EXIT_USAGE, "--zmq-pull, --zmq-hwm, --zmq-max-message: with --zmq");
    j.source = j.zmq ? j.zmq : j.vrt;
    if ((status = raw_format(&j))) return status;
    if ((status = parse_shape(&j)) || (status = cli_output_ok(j.json, j.force)) ||
        (status = cli_output_ok(j.output, j.force)))
        return status;
    if (j.keep && !j.output) return cli_error(EXIT_USAGE, "--keep says what -o keeps: give -o FILE");
    if (j.discard && (j.output || j.keep || j.publish))
        return cli_error(EXIT_USAGE, "--discard processes nothing: it takes no -o, --keep or --publish");
    status = listen_run(&j);
    signal_rx = NULL;
    stap_stream_destroy(j.stream); /* (every CPI collected: the receiver's buffers free) */
    stap_live_udp_destroy(j.rx);
    stap_zmq_in_destroy(j.zin); /* (after the receiver, its transport) */
    stap_result_writer_abort(j.rw); /* (not published: an error) */
    stap_zmq_pub_destroy(j.pub, 1000); /* the last messages given a second to leave */
    free(j.msg);
    stap_engine_destroy(j.eng);
    stap_live_tally_free(&j.tally);
    return status;
}
