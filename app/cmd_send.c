/* cmd_send: `rtstap send` — a recording as a live stream (issue 45, docs/live.md): one
 * VITA-49.0 IF data packet a UDP datagram (include/rtstap/vrt.h), paced so that each CPI's
 * packets go out evenly over its period (deadlines on CLOCK_MONOTONIC, sendmmsg batches of
 * the packets due), with a report of the rate achieved; --loss drops packets on purpose
 * (seeded) and names the CPIs it made incomplete. complex64 samples are sent as int16 with
 * a scale it names; integer recordings as they are stored. */
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cli_json.h"
#include "zmq_live.h"
#include "cli_opts.h"
#include "h5io.h"
#include "signals.h"
#include "report.h" /* stream_json_report */
#include "vrt.h"

static const cli_command send_cmd = {
    "send",
    "Send a recording as a live stream (docs/live.md): one VITA-49.0 IF data packet a UDP\n"
    "datagram, the samples as int16 (i, q), each CPI's packets paced evenly over its\n"
    "period (1 / --rate), never in bursts. Reports the rate achieved. complex64 samples\n"
    "are sent as int16 with a scale it chooses and names (x = scale * v); integer\n"
    "recordings as they are stored (their own scale). --loss drops packets on purpose\n"
    "and reports exactly which CPIs it made incomplete. A context packet (stream 0) opens\n"
    "each CPI when the recording has a sample rate or carrier frequency. The receiver\n"
    "into the engine, `listen`, comes with the stream runtime (issue 44).\n",
    NULL};

enum { BATCH = 64, MAX_LISTED = 50, MTU_GATES = 1472 / 4 - STAP_VRT_HEADER_WORDS /* 363 */ };

typedef struct send_job {
    const char *input, *vrt, *json;
    double rate, loss, iq_scale;
    int loop, gates, force, seed_given;
    unsigned long long seed;
    cli_input_opts inopts;
    char host[256], port[16];
    /* the recording and its samples */
    stap_recording *rec;
    stap_input in;
    stap_vrt_shape s;
    long long ncpi;              /* written CPIs: the stream's CPIs of one pass          */
    int stored;                  /* integer samples, sent as stored                       */
    stap_sample_format fmt;      /* their format (scale 0: read as the integers)          */
    double scale;                /* a sample is scale * v                                 */
    unsigned long long clipped;  /* components beyond int16 (--iq-scale)                 */
    int16_t *cube;
    stap_cf32 *cf;
    void *raw;
    /* sending */
    const char *zmq;             /* --zmq: a PUB socket bound there (else --vrt's UDP)    */
    double wait_sub;             /* --zmq: seconds to wait for a first subscriber         */
    stap_zmq_pub *zpub;
    int fd;
    unsigned char *bufs;         /* BATCH datagrams                                       */
    size_t bufsize;
    int has_sr, has_rf;
    double sr, rf;
    long long cpis, packets, dropped, contexts, bytes, retries;
    double elapsed, max_lag;
    int stopped_by;
    long long *incomplete;       /* stream CPIs with a packet dropped, in order           */
    long long nincomplete, cap;
} send_job;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void sleep_until(double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        if (cli_graceful_requested()) return;
}

/* udp://HOST:PORT (HOST a name, an IPv4 address or [IPv6]) into host and port */
static int parse_vrt(send_job *j)
{
    const char *u = j->vrt;
    if (strncmp(u, "udp://", 6))
        return cli_error(EXIT_USAGE, "--vrt expects udp://HOST:PORT (got '%s')", u);
    u += 6;
    const char *colon = strrchr(u, ':');
    size_t hl = colon ? (size_t)(colon - u) : 0;
    const char *h = u;
    if (hl >= 2 && u[0] == '[' && u[hl - 1] == ']') h++, hl -= 2;
    int port = 0;
    if (!colon || !hl || hl >= sizeof j->host || memchr(h, '[', hl) || memchr(h, ']', hl) ||
        cli_int("--vrt's port", colon + 1, 1, 65535, &port))
        return cli_error(EXIT_USAGE, "--vrt expects udp://HOST:PORT with a port 1..65535 (got '%s')", j->vrt);
    memcpy(j->host, h, hl);
    j->host[hl] = '\0';
    snprintf(j->port, sizeof j->port, "%d", port);
    return EXIT_OK;
}

/* a connected UDP socket to host:port */
static int open_socket(send_job *j)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_NUMERICSERV;
    const int gai = getaddrinfo(j->host, j->port, &hints, &res);
    if (gai) return cli_error(EXIT_PROCESSING, "--vrt: cannot resolve '%s': %s", j->host, gai_strerror(gai));
    int err = 0;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        j->fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (j->fd >= 0 && connect(j->fd, a->ai_addr, a->ai_addrlen) == 0) break;
        err = errno;
        if (j->fd >= 0) close(j->fd);
        j->fd = -1;
    }
    freeaddrinfo(res);
    if (j->fd < 0) return cli_error(EXIT_PROCESSING, "--vrt: cannot send to %s: %s", j->vrt, strerror(err));
    const int sndbuf = 4 << 20;
    setsockopt(j->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf); /* as much as allowed */
    return EXIT_OK;
}

/* recording CPI k (the k-th written) as int16 (i, q) into j->cube */
static int load_cpi(send_job *j, long long k, stap_error *err)
{
    const long long idx = stap_recording_written_index(j->rec, k);
    const size_t n = (size_t)j->s.channels * j->s.pulses * j->s.range_gates;
    if (j->stored) {
        if (stap_recording_read_stored(j->rec, idx, j->raw, err)) return -1;
        stap_cube_to_cf32(&j->fmt, j->raw, j->s.channels, j->s.pulses, j->s.range_gates, j->cf);
    } else if (stap_recording_read(j->rec, idx, j->cf, err))
        return -1;
    const float *x = (const float *)j->cf;
    for (size_t i = 0; i < 2 * n; i++) {
        double v = j->stored ? (double)x[i] : nearbyint((double)x[i] / j->scale);
        if (!(v >= -32768.0 && v <= 32767.0)) { /* (NaN: a scan refused it before) */
            j->clipped++;
            v = v > 0 ? 32767.0 : -32768.0;
        }
        j->cube[i] = (int16_t)v;
    }
    return 0;
}

/* the samples: integer ones as stored; complex64 at --iq-scale, or at a scale from a scan */
static int choose_samples(send_job *j)
{
    stap_error err;
    if (!stap_recording_stored_format(j->rec, &j->fmt, &err) &&
        (j->fmt.type == STAP_SAMPLES_CI16 || j->fmt.type == STAP_SAMPLES_CI8)) {
        if (j->iq_scale > 0)
            return cli_error(EXIT_USAGE, "--iq-scale applies to complex64 recordings; %s stores integers, sent "
                             "as they are", j->input);
        j->stored = 1;
        j->scale = j->fmt.scale == 0 ? 1 : j->fmt.scale;
        j->fmt.scale = 0; /* the integers themselves */
        return EXIT_OK;
    }
    if (j->iq_scale > 0) {
        j->scale = j->iq_scale;
        return EXIT_OK;
    }
    const size_t n = 2 * (size_t)j->s.channels * j->s.pulses * j->s.range_gates;
    double peak = 0;
    int whole = 1;
    for (long long k = 0; k < j->ncpi; k++) {
        if (stap_recording_read(j->rec, stap_recording_written_index(j->rec, k), j->cf, &err))
            return cli_fail(&err);
        const float *x = (const float *)j->cf;
        for (size_t i = 0; i < n; i++) {
            if (!isfinite(x[i]))
                return cli_error(EXIT_PROCESSING, "%s: CPI %lld holds a sample that is not finite; not sent",
                                 j->input, stap_recording_written_index(j->rec, k));
            const double a = fabs((double)x[i]);
            if (a > peak) peak = a;
            if (whole && (x[i] != floorf(x[i]) || x[i] < -32768.0f || x[i] > 32767.0f)) whole = 0;
        }
    }
    j->scale = whole || peak == 0 ? 1 : peak / 32767.0;
    return EXIT_OK;
}

/* send count datagrams of the batch (retrying what the socket refused for now) */
static int send_batch(send_job *j, const size_t *lens, int count)
{
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    memset(msgs, 0, sizeof msgs);
    for (int i = 0; i < count; i++) {
        iov[i].iov_base = j->bufs + (size_t)i * j->bufsize;
        iov[i].iov_len = lens[i];
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    int done = 0, tries = 0;
    stap_error err;
    for (; j->zpub && done < count; done++) /* one packet a message, waiting for room */
        if (stap_zmq_pub_send_wait(j->zpub, j->bufs + (size_t)done * j->bufsize, lens[done], &err))
            return cli_fail(&err);
    while (done < count) {
        const int r = sendmmsg(j->fd, msgs + done, (unsigned)(count - done), 0);
        if (r > 0) {
            done += r;
            tries = 0;
            continue;
        }
        /* ECONNREFUSED: an earlier datagram found no listener (ICMP); the error is consumed
         * and this one was not sent: again. ENOBUFS, EAGAIN: the queue is full: wait. */
        if (r < 0 && (errno == EINTR || errno == ECONNREFUSED || errno == ENOBUFS || errno == EAGAIN) &&
            ++tries < 1000) {
            j->retries++;
            if (errno == ENOBUFS || errno == EAGAIN) sleep_until(now_s() + 1e-4);
            continue;
        }
        return cli_error(EXIT_PROCESSING, "sending to %s: %s", j->vrt, r < 0 ? strerror(errno) : "nothing sent");
    }
    for (int i = 0; i < count; i++) j->bytes += (long long)lens[i];
    j->packets += count;
    return EXIT_OK;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int note_incomplete(send_job *j, long long cpi)
{
    if (j->nincomplete && j->incomplete[j->nincomplete - 1] == cpi) return 0;
    if (j->nincomplete == j->cap) {
        j->cap = j->cap ? 2 * j->cap : 64;
        long long *p = realloc(j->incomplete, (size_t)j->cap * sizeof *p);
        if (!p) return cli_error(EXIT_PROCESSING, "out of memory");
        j->incomplete = p;
    }
    j->incomplete[j->nincomplete++] = cpi;
    return 0;
}

/* every CPI of every pass, each packet at its deadline t0 + (cpi + i / n) / rate */
static int send_all(send_job *j)
{
    const long long npk = stap_vrt_cpi_packets(&j->s, j->gates);
    const int ctx = j->has_sr || j->has_rf;
    const long long per = npk + ctx;
    const double period = 1.0 / j->rate;
    unsigned char *counts = calloc((size_t)j->s.channels, 1);
    if (!counts) return cli_error(EXIT_PROCESSING, "out of memory");
    unsigned ctx_count = 0;
    uint64_t rng = j->seed;
    size_t lens[BATCH];
    int nb = 0, status = EXIT_OK;
    double t0 = 0, first_due = 0;
    stap_error err;
    for (long long cpi = 0; cpi < (long long)j->loop * j->ncpi && !status; cpi++) {
        if ((j->stopped_by = cli_graceful_requested())) break;
        if (load_cpi(j, cpi % j->ncpi, &err)) {
            status = cli_fail(&err);
            break;
        }
        if (cpi == 0) t0 = now_s();
        for (long long i = 0; i < per && !status; i++) {
            if ((j->stopped_by = cli_graceful_requested())) break;
            const double due = t0 + ((double)cpi + (double)i / (double)per) * period;
            if (due > now_s()) sleep_until(due); /* (nothing is waiting in the batch then) */
            unsigned char *b = j->bufs + (size_t)nb * j->bufsize;
            int keep = 1;
            if (ctx && i == 0) {
                lens[nb] = stap_vrt_pack_context(b, 0, j->has_sr ? &j->sr : NULL, j->has_rf ? &j->rf : NULL,
                                                 ctx_count++);
                j->contexts++;
            } else {
                lens[nb] = stap_vrt_pack_cpi(b, &j->s, j->gates, j->cube, cpi, i - ctx, counts);
                if (j->loss > 0 && (double)(splitmix(&rng) >> 11) * 0x1p-53 < j->loss) {
                    j->dropped++;
                    status = note_incomplete(j, cpi);
                    keep = 0;
                }
            }
            if (keep && !nb++) first_due = due;
            /* the batch goes when full or when the next packet is not yet due */
            const double next = t0 + ((double)cpi + (double)(i + 1) / (double)per) * period;
            if (nb && !status && (nb == BATCH || next > now_s())) {
                const double lag = now_s() - first_due;
                if (lag > j->max_lag) j->max_lag = lag;
                status = send_batch(j, lens, nb);
                nb = 0;
            }
        }
        if (!status && !j->stopped_by) j->cpis++;
    }
    if (nb && !status) status = send_batch(j, lens, nb);
    if (!status && !j->stopped_by && j->cpis) sleep_until(t0 + (double)j->cpis * period); /* its period ends */
    j->elapsed = j->cpis ? now_s() - t0 : 0;
    free(counts);
    return status;
}

/* how the samples go: "int16, interleaved (last axis iq): the integers as stored",
 * "complex64 as int16: a sample is 0.0012 x v" */
static void samples_desc(const send_job *j, char *buf, size_t len)
{
    char scale[64] = "";
    if (j->scale != 1) snprintf(scale, sizeof scale, " (a sample is %.17g x v)", j->scale);
    if (j->stored)
        snprintf(buf, len, "%s: the integers as stored%s%s", j->in.samples,
                 j->fmt.type == STAP_SAMPLES_CI8 ? ", widened to int16" : "", scale);
    else if (j->scale == 1) snprintf(buf, len, "%s as int16: whole numbers, exact (scale 1)", j->in.samples);
    else snprintf(buf, len, "%s as int16, rounded%s", j->in.samples, scale);
}

/* the report: text on out, and the JSON document */
static cJSON *report(const send_job *j, FILE *out, const char *samples)
{
    const long long npk = stap_vrt_cpi_packets(&j->s, j->gates);
    const double achieved = j->elapsed > 0 ? (double)j->cpis / j->elapsed : 0;
    fprintf(out, "rtstap send: %s -> %s\n", j->input, j->zpub ? stap_zmq_pub_address(j->zpub) : j->vrt);
    fprintf(out, "  stream: C=%d P=%d R=%d, %lld data packets a CPI of up to %d gates%s\n", j->s.channels,
            j->s.pulses, j->s.range_gates, npk, j->gates,
            j->has_sr || j->has_rf ? " and a context packet" : "");
    fprintf(out, "  samples: %s\n", samples);
    if (j->clipped) fprintf(out, "  clipped: %llu components beyond int16 (--iq-scale)\n", j->clipped);
    fprintf(out, "  sent: %lld CPIs (%lld a pass, %d pass%s), %lld packets, %lld bytes in %.3f s\n", j->cpis,
            j->ncpi, j->loop, j->loop == 1 ? "" : "es", j->packets, j->bytes, j->elapsed);
    fprintf(out, "  rate: %.4g CPIs/s achieved (%.4g asked); at worst %.3f ms behind schedule\n",
            achieved, j->rate, 1e3 * j->max_lag);
    if (j->loss > 0) {
        fprintf(out, "  loss: %g (seed %llu): %lld packets dropped, %lld CPIs made incomplete%s", j->loss,
                j->seed, j->dropped, j->nincomplete, j->nincomplete ? ":" : "");
        for (long long i = 0; i < j->nincomplete && i < MAX_LISTED; i++) fprintf(out, " %lld", j->incomplete[i]);
        fprintf(out, "%s\n", j->nincomplete > MAX_LISTED ? " ... (--json lists them all)" : "");
    }
    if (!j->json) return NULL;
    cJSON *doc = stream_json_report("send");
    if (!doc) return NULL;
    cJSON_AddStringToObject(doc, "input", j->input);
    cJSON_AddStringToObject(doc, j->zpub ? "zmq" : "vrt", j->zpub ? stap_zmq_pub_address(j->zpub) : j->vrt);
    cJSON_AddNumberToObject(doc, "channels", j->s.channels);
    cJSON_AddNumberToObject(doc, "pulses", j->s.pulses);
    cJSON_AddNumberToObject(doc, "range_gates", j->s.range_gates);
    cJSON_AddNumberToObject(doc, "gates_per_packet", j->gates);
    cJSON_AddNumberToObject(doc, "packets_per_cpi", (double)npk);
    cJSON_AddBoolToObject(doc, "context_packets", j->has_sr || j->has_rf);
    cJSON_AddStringToObject(doc, "samples", samples);
    cJSON_AddBoolToObject(doc, "samples_as_stored", j->stored);
    cJSON_AddNumberToObject(doc, "scale", j->scale);
    cJSON_AddNumberToObject(doc, "clipped", (double)j->clipped);
    cJSON_AddNumberToObject(doc, "recording_cpis", (double)j->ncpi);
    cJSON_AddNumberToObject(doc, "loops", j->loop);
    cJSON_AddNumberToObject(doc, "cpis", (double)j->cpis);
    cJSON_AddNumberToObject(doc, "packets", (double)j->packets);
    cJSON_AddNumberToObject(doc, "context_packets_sent", (double)j->contexts);
    cJSON_AddNumberToObject(doc, "bytes", (double)j->bytes);
    cJSON_AddNumberToObject(doc, "elapsed_s", j->elapsed);
    cJSON_AddNumberToObject(doc, "rate_requested", j->rate);
    cJSON_AddNumberToObject(doc, "rate_achieved", achieved);
    cJSON_AddNumberToObject(doc, "max_lag_ms", 1e3 * j->max_lag);
    cJSON_AddNumberToObject(doc, "send_retries", (double)j->retries);
    cJSON_AddNumberToObject(doc, "loss", j->loss);
    cJSON_AddNumberToObject(doc, "seed", (double)j->seed);
    cJSON_AddNumberToObject(doc, "packets_dropped", (double)j->dropped);
    cJSON *list = cJSON_AddArrayToObject(doc, "incomplete_cpis");
    for (long long i = 0; list && i < j->nincomplete; i++)
        cJSON_AddItemToArray(list, cJSON_CreateNumber((double)j->incomplete[i]));
    if (j->stopped_by) cJSON_AddNumberToObject(doc, "stopped_by_signal", j->stopped_by);
    return doc;
}

/* the recording opened, its samples chosen, the buffers and the socket made */
static int send_prepare(send_job *j)
{
    stap_error err;
    int status = cli_open_recording(j->input, &j->inopts, &j->rec, &j->in, 1);
    if (status) return status;
    j->s = (stap_vrt_shape){j->in.channels, j->in.pulses, j->in.range_gates};
    if (stap_vrt_shape_validate(&j->s, &err)) return cli_fail(&err);
    j->ncpi = stap_recording_written(j->rec);
    if (j->gates <= 0) j->gates = j->s.range_gates < MTU_GATES ? j->s.range_gates : MTU_GATES;
    if (j->gates > j->s.range_gates) j->gates = j->s.range_gates;
    const size_t n = (size_t)j->s.channels * j->s.pulses * j->s.range_gates;
    j->cube = malloc(n * 2 * sizeof(int16_t));
    j->cf = malloc(n * sizeof(stap_cf32));
    j->raw = malloc(n * sizeof(stap_cf32)); /* stored samples: at most 8 bytes */
    j->bufsize = 4 * ((size_t)STAP_VRT_HEADER_WORDS + (size_t)j->gates);
    if (j->bufsize < STAP_VRT_CONTEXT_BYTES) j->bufsize = STAP_VRT_CONTEXT_BYTES;
    j->bufs = malloc(BATCH * j->bufsize);
    if (!j->cube || !j->cf || !j->raw || !j->bufs)
        return cli_error(EXIT_PROCESSING, "%s: out of memory for a CPI of %zu samples", j->input, n);
    if ((status = choose_samples(j))) return status;
    j->has_sr = j->in.meta.has_sample_rate;
    j->sr = j->in.meta.sample_rate_hz;
    j->has_rf = j->in.meta.has_carrier;
    j->rf = j->in.meta.carrier_frequency_hz;
    if (!j->zmq) return open_socket(j);
    /* --zmq: bound, said, and the first subscriber waited for (a PUB sends to those there) */
    if ((status = stap_zmq_pub_create(&j->zpub, j->zmq, 1 << 20, &err)))
        return status == STAP_EINVAL ? cli_error(EXIT_USAGE, "--zmq %s", err.msg) : cli_fail(&err);
    fprintf(stderr, "rtstap send: publishing on %s, waiting for a subscriber\n", stap_zmq_pub_address(j->zpub));
    fflush(stderr);
    if (stap_zmq_pub_wait_subscriber(j->zpub, (int)(j->wait_sub * 1e3), &err)) return cli_fail(&err);
    return EXIT_OK;
}

int cmd_send(int argc, char **argv)
{
    send_job j;
    memset(&j, 0, sizeof j);
    j.loop = 1;
    j.seed = 1;
    j.fd = -1;
    j.wait_sub = 60;
    cli_opt opts[] = {
        {"input", 0, CLI_STRING, &j.input, "FILE", "the recording to send (schema v1.1; one CPI or many)",
         .flags = CLI_REQUIRED | CLI_INPUT},
        {"vrt", 0, CLI_STRING, &j.vrt, "udp://HOST:PORT",
         "where to send the datagrams (HOST a name, an IPv4 address or\n[IPv6])"},
        {"zmq", 0, CLI_STRING, &j.zmq, "tcp://HOST:PORT",
         "instead of --vrt: bind a ZeroMQ PUB socket there (port 0: a\n"
         "free one, named on stderr), wait for a subscriber, then send\n"
         "one packet a message (listen --zmq)"},
        {"wait-subscriber", 0, CLI_DOUBLE, &j.wait_sub, "S",
         "--zmq: seconds to wait for the first subscriber (default 60)", .lo = 1e-3, .hi = 1e6},
        {"rate", 0, CLI_DOUBLE, &j.rate, "CPIS_PER_S",
         "CPIs a second: each CPI's packets go out evenly over 1 / rate", .lo = 1e-6, .hi = 1e7,
         .flags = CLI_REQUIRED},
        {"loop", 0, CLI_INT, &j.loop, "N",
         "send the recording N times over (default 1); CPI and pulse\nnumbers go on from pass to pass",
         .lo = 1, .hi = 1 << 30},
        {"gates-per-packet", 0, CLI_INT, &j.gates, "G",
         "range gates a packet (default 363: 1472-byte datagrams, one\nEthernet frame; at most R)", .lo = 1,
         .hi = STAP_VRT_MAX_GATES},
        {"loss", 0, CLI_DOUBLE, &j.loss, "P",
         "drop each data packet with probability P on purpose and\nreport the CPIs that made incomplete",
         .lo = 0, .hi = 1},
        {"seed", 0, CLI_U64, &j.seed, "S", "the seed of --loss's choices (default 1)", .given = &j.seed_given},
        {"iq-scale", 0, CLI_DOUBLE, &j.iq_scale, "S",
         "complex64 recordings: send x as round(x / S) (default: 1 when\n"
         "every component is a whole number in int16's range, else\n"
         "the largest |component| / 32767)", .lo = 1e-300, .hi = 1e300},
        CLI_OPT_LAYOUT(&j.inopts),
        CLI_OPT_DATASET(&j.inopts),
        CLI_OPT_JSON(&j.json),
        CLI_OPT_FORCE(&j.force),
        {0}};
    int status = cli_parse(&send_cmd, opts, argc, argv);
    if (status != CLI_GO) return status;
    if (!j.vrt == !j.zmq) return cli_error(EXIT_USAGE, "give one of --vrt udp://HOST:PORT and --zmq tcp://HOST:PORT");
    if (!j.zmq && j.wait_sub != 60) return cli_error(EXIT_USAGE, "--wait-subscriber: with --zmq");
    if ((!j.zmq && (status = parse_vrt(&j))) || (status = cli_output_ok(j.json, j.force))) return status;
    if (j.seed_given && j.loss == 0) return cli_error(EXIT_USAGE, "--seed is the seed of --loss; give --loss P");
    if (!(status = send_prepare(&j))) {
        char samples[300];
        samples_desc(&j, samples, sizeof samples);
        cli_graceful_begin();
        status = send_all(&j);
        cli_graceful_end();
        FILE *out = j.json && !strcmp(j.json, "-") ? stderr : stdout;
        cJSON *doc = status ? NULL : report(&j, out, samples);
        stap_error err;
        if (doc && cli_json_write(j.json, doc, cli_write_mode(j.force), &err)) status = cli_fail(&err);
        cJSON_Delete(doc);
        if (!status && j.stopped_by) status = 128 + j.stopped_by;
    }
    if (j.fd >= 0) close(j.fd);
    stap_zmq_pub_destroy(j.zpub, 10000); /* the queued packets given 10 s to leave */
    stap_recording_close(j.rec);
    stap_input_free(&j.in);
    free(j.cube), free(j.cf), free(j.raw), free(j.bufs), free(j.incomplete);
    return status;
}
