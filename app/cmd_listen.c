/* cmd_listen: `rtstap listen` — live input (issue 45, docs/live.md): VITA-49 datagrams over
 * UDP received by the library's receiver (stap_live_udp_*, include/rtstap/vrt.h) and
 * assembled into CPIs, complete or lost, in CPI order. With --discard, the receive path
 * alone: each complete CPI is counted and its buffer given back at once (no engine), and
 * the report says what came, what was lost and why, and the rates. The engine-fed form
 * takes the same events: a complete CPI is an int16 (i, q) cube in (channel, pulse, range)
 * order, a source for the stream runtime (issue 44).
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

#include "cli.h"
#include "cli_json.h"
#include "cli_opts.h"
#include "signals.h"
#include "report.h" /* stream_json_report */
#include "vrt.h"

static const cli_command listen_cmd = {
    "listen",
    "Receive a live stream (docs/live.md): one VITA-49.0 IF data packet a UDP datagram,\n"
    "placed by (channel, pulse, gate) into a fixed pool of CPI buffers. A CPI is complete\n"
    "when every sample came; a CPI missing any packet is lost (never zero-filled), and so\n"
    "is every CPI that finds no free buffer (overload). Malformed, duplicate and late\n"
    "packets are counted. Once the socket is bound, a line with the word `listening` and\n"
    "the address (the port chosen, for port 0) goes to stderr. With --discard, the receive\n"
    "path alone: complete CPIs are counted and dropped (listen into the engine comes with\n"
    "the stream runtime, issue 44). Stops after --cpis N CPIs complete or lost, after\n"
    "--duration T, or on SIGINT / SIGTERM (the report covers what came; exit 128 + the\n"
    "signal). The report goes to stderr, and as JSON with --json.\n",
    NULL};

enum { MAX_LISTED = 50 };

typedef struct lost_range {
    long long cpi, count;
    stap_vrt_lost_reason reason;
} lost_range;

typedef struct listen_job {
    const char *vrt, *shape_s, *json;
    int discard, force, cpis, buffers, rcvbuf_mib, timeout_ms;
    double duration;
    stap_vrt_shape s;
    stap_live_udp *rx;
    stap_live_info info;
    stap_live_counts n;
    long long complete, lost, first_cpi;
    lost_range *ranges;
    long long nranges, cap;
    double t_start, t_end;
    int stopped_by;
} listen_job;

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

static int note_lost(listen_job *j, const stap_live_event *ev, long long count)
{
    j->lost += count;
    if (j->nranges && j->ranges[j->nranges - 1].reason == ev->reason &&
        j->ranges[j->nranges - 1].cpi + j->ranges[j->nranges - 1].count == ev->cpi) {
        j->ranges[j->nranges - 1].count += count;
        return EXIT_OK;
    }
    if (j->nranges == j->cap) {
        j->cap = j->cap ? 2 * j->cap : 64;
        lost_range *p = realloc(j->ranges, (size_t)j->cap * sizeof *p);
        if (!p) return cli_error(EXIT_PROCESSING, "out of memory");
        j->ranges = p;
    }
    j->ranges[j->nranges++] = (lost_range){ev->cpi, count, ev->reason};
    return EXIT_OK;
}

/* the events until --cpis, --duration, a signal or the receiver's end */
static int receive(listen_job *j)
{
    stap_error err;
    for (;;) {
        int wait = 200;
        if (j->duration > 0) {
            const double left = j->t_start + 1e3 * j->duration - stap_now_ms();
            if (left <= 0) break;
            if (left < wait) wait = (int)left + 1;
        }
        stap_live_event ev;
        if (stap_live_udp_next(j->rx, &ev, wait, &err)) return cli_fail(&err);
        if (ev.kind == STAP_LIVE_END) break;
        if (ev.kind == STAP_LIVE_NONE) {
            if (cli_graceful_requested()) break; /* (a signal before the handler's hook was set) */
            continue;
        }
        if (j->first_cpi < 0) j->first_cpi = ev.cpi;
        const long long decided = j->complete + j->lost;
        if (ev.kind == STAP_LIVE_CPI) {
            j->complete++;
            stap_live_udp_release(j->rx, ev.cpi); /* --discard: dropped at once */
        } else {
            long long count = ev.count;
            if (j->cpis && decided + count > j->cpis) count = j->cpis - decided;
            if (note_lost(j, &ev, count)) return EXIT_PROCESSING;
        }
        if (j->cpis && j->complete + j->lost >= j->cpis) break;
    }
    return EXIT_OK;
}

/* the lost CPIs, one number each, the first `most` (all: -1) */
static void print_lost(const listen_job *j, FILE *out, long long most)
{
    long long shown = 0;
    for (long long r = 0; r < j->nranges; r++)
        for (long long k = 0; k < j->ranges[r].count; k++, shown++) {
            if (most >= 0 && shown >= most) {
                fprintf(out, " ... (--json lists them all)");
                return;
            }
            fprintf(out, " %lld", j->ranges[r].cpi + k);
        }
}

static double rate(double x, double seconds)
{
    return seconds > 0 ? x / seconds : 0;
}

static void report_text(const listen_job *j, FILE *out)
{
    const stap_live_counts *n = &j->n;
    const double span = (n->last_ms - n->first_ms) / 1e3;
    fprintf(out, "rtstap listen: %s, C=%d P=%d R=%d, %d CPI buffers, discarding (no engine)\n", j->info.address,
            j->s.channels, j->s.pulses, j->s.range_gates, j->buffers);
    fprintf(out, "  cpis: %lld complete, %lld lost%s", j->complete, j->lost, j->lost ? ":" : "");
    print_lost(j, out, MAX_LISTED);
    fprintf(out, "\n");
    if (j->lost)
        fprintf(out, "  lost: %lld missing packets, %lld never seen, %lld overload (no free buffer)\n",
                n->lost[STAP_VRT_LOST_MISSING], n->lost[STAP_VRT_LOST_UNSEEN], n->lost[STAP_VRT_LOST_OVERRUN]);
    fprintf(out, "  packets: %llu datagrams, %llu bytes; %llu malformed, %llu duplicates, %llu late, %llu "
            "skipped, %llu context\n", n->vrt.datagrams, n->bytes, n->vrt.malformed, n->vrt.duplicates,
            n->vrt.late, n->vrt.skipped, n->vrt.kinds[STAP_VRT_CONTEXT] + n->vrt.kinds[STAP_VRT_CONTEXT_OTHER]);
    fprintf(out, "  rate: %.4g CPIs/s offered, %.4g processed, over %.3f s from the first datagram to the last; "
            "%.4g datagrams/s, %.4g MB/s\n", rate((double)(j->complete + j->lost), span),
            rate((double)j->complete, span), span, rate((double)n->vrt.datagrams, span),
            rate((double)n->bytes / 1e6, span));
    fprintf(out, "  socket buffer: %lld bytes asked, %lld got%s\n", j->info.rcvbuf_asked, j->info.rcvbuf_got,
            j->info.rcvbuf_capped ? " (capped by the system: net.core.rmem_max; raise it with sysctl)"
            : j->info.rcvbuf_forced ? " (SO_RCVBUFFORCE)" : "");
}

static cJSON *report_json(const listen_job *j)
{
    const stap_live_counts *n = &j->n;
    const double span = (n->last_ms - n->first_ms) / 1e3;
    cJSON *doc = stream_json_report("listen");
    if (!doc) return NULL;
    cJSON_AddStringToObject(doc, "vrt", j->vrt);
    cJSON_AddStringToObject(doc, "address", j->info.address);
    cJSON_AddNumberToObject(doc, "channels", j->s.channels);
    cJSON_AddNumberToObject(doc, "pulses", j->s.pulses);
    cJSON_AddNumberToObject(doc, "range_gates", j->s.range_gates);
    cJSON_AddNumberToObject(doc, "buffers", j->buffers);
    cJSON_AddBoolToObject(doc, "discard", 1);
    cJSON_AddNumberToObject(doc, "first_cpi", (double)j->first_cpi);
    cJSON_AddNumberToObject(doc, "cpis", (double)j->complete);
    cJSON_AddNumberToObject(doc, "cpis_lost", (double)j->lost);
    cJSON *list = cJSON_AddArrayToObject(doc, "lost_cpis");
    cJSON *ranges = cJSON_AddArrayToObject(doc, "lost_ranges");
    for (long long r = 0; list && ranges && r < j->nranges; r++) {
        for (long long k = 0; k < j->ranges[r].count; k++)
            cJSON_AddItemToArray(list, cJSON_CreateNumber((double)(j->ranges[r].cpi + k)));
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "first", (double)j->ranges[r].cpi);
        cJSON_AddNumberToObject(o, "count", (double)j->ranges[r].count);
        cJSON_AddStringToObject(o, "reason", stap_vrt_lost_reason_name(j->ranges[r].reason));
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
    cJSON_AddNumberToObject(doc, "offered_cpis_per_s", rate((double)(j->complete + j->lost), span));
    cJSON_AddNumberToObject(doc, "processed_cpis_per_s", rate((double)j->complete, span));
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
    const stap_live_udp_options o = {j->buffers, j->rcvbuf_mib << 20, j->timeout_ms, 0};
    const int st = stap_live_udp_create(&j->rx, &j->s, j->vrt, &o, &err);
    if (st == STAP_EINVAL) return cli_error(EXIT_USAGE, "--vrt %s: %s", j->vrt, err.msg);
    if (st) return cli_fail(&err);
    stap_live_udp_info(j->rx, &j->info);
    j->t_start = stap_now_ms();
    signal_rx = j->rx;
    cli_graceful_begin();
    cli_graceful_notify(stop_on_signal);
    fprintf(stderr, "rtstap listen: listening on %s (C=%d P=%d R=%d)\n", j->info.address, j->s.channels,
            j->s.pulses, j->s.range_gates);
    fflush(stderr);
    int status = receive(j);
    j->stopped_by = cli_graceful_requested();
    stap_live_udp_stop(j->rx);
    cli_graceful_end();
    stap_live_udp_counts(j->rx, &j->n);
    if (status) return status;
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
    j.first_cpi = -1;
    cli_opt opts[] = {
        {"vrt", 0, CLI_STRING, &j.vrt, "udp://HOST:PORT",
         "where to listen (HOST a name, an IPv4 address or [IPv6];\nport 0: a free port, named on stderr)",
         .flags = CLI_REQUIRED},
        {"shape", 0, CLI_STRING, &j.shape_s, "C,P,R", "the stream's channels, pulses a CPI, range gates",
         .flags = CLI_REQUIRED},
        {"discard", 0, CLI_FLAG, &j.discard, NULL,
         "the receive path alone: count complete CPIs and drop them\n(no engine; needed until listen feeds it)"},
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
        CLI_OPT_JSON(&j.json),
        CLI_OPT_FORCE(&j.force),
        {0}};
    int status = cli_parse(&listen_cmd, opts, argc, argv);
    if (status != CLI_GO) return status;
    if ((status = parse_shape(&j)) || (status = cli_output_ok(j.json, j.force))) return status;
    if (!j.discard)
        return cli_error(EXIT_USAGE, "listen into the engine comes with the stream runtime (issue 44); give "
                         "--discard for the receive path alone");
    status = listen_run(&j);
    signal_rx = NULL;
    stap_live_udp_destroy(j.rx);
    free(j.ranges);
    return status;
}
