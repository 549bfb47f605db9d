/* cmd_stream.c: `rtstap stream` — real-time throughput: CPIs kept in flight through one
 * engine, a ring of distinct synthesized CPIs in pinned memory replayed (the engine, not
 * the disk, is measured), reporting sustained CPIs/s, host-to-host latency percentiles,
 * deadline misses, copy bandwidth against the measured link, and memory. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "signals.h"
#include "cli_json.h"
#include "cli_look.h"
#include "cli_opts.h"
#include "progress.h"
#include "rtstap/common.h" /* stap_now_ms */
#include "par.h"
#include "report.h"
#include "workload.h"

static const cli_command stream_cmd = {
    "stream",
    "Streams CPIs through one engine with S of them in flight (copy-in of one, compute\n"
    "of another and copy-out of a third overlap on the GPU) and reports sustained\n"
    "CPIs/s, host-to-host latency per CPI (submit to results in host memory: min, p50,\n"
    "p99, max), deadline misses, achieved copy bandwidth against the measured link, and\n"
    "host and device memory. A ring of distinct synthesized CPIs, held in pinned host\n"
    "memory, is replayed (the engine is measured, not the disk); with --input a recording\n"
    "is read by reader threads as it streams (the whole chain: it says whether reading\n"
    "or computing limits it, against plain parallel reads of the same file).\n",
    "SIGINT or SIGTERM stops the stream cleanly: the CPIs in flight finish, the report\n"
    "covers the CPIs run, and the exit status is 128 + the signal.\n"};

/* --timeline FILE: one CSV line per timed CPI — its slot, host submit and completion times
 * and the CUDA-event stage times — to see where the slow CPIs lose their time */
typedef struct timeline {
    FILE *f;
    char tmp[4096]; /* written as a temporary, published at the end (rt_atomic_*) */
    long long warmup;
    int slots;
    double t0;
} timeline;

static int timeline_sink(void *user, const stap_cpi_result *r, stap_error *err)
{
    timeline *t = user;
    if (r->cpi < t->warmup) return STAP_OK;
    if (t->t0 == 0) t->t0 = r->submit_ms;
    fprintf(t->f, "%lld,%lld,%.4f,%.4f,%.4f", r->cpi - t->warmup, r->cpi % t->slots,
            r->submit_ms - t->t0, r->done_ms - t->t0, r->done_ms - r->submit_ms);
    for (int s = 0; s < STAP_STAGE_COUNT; s++) fprintf(t->f, ",%.4f", r->stage_ms[s]);
    fputc('\n', t->f);
    return ferror(t->f) ? stap_fail(err, STAP_EIO, "writing the timeline failed") : STAP_OK;
}

/* --mem-every N: host RSS and device memory in use, sampled from the sink every N CPIs */
typedef struct mem_samples {
    long long every, count, cap;
    long long *cpi;
    double *host_mb, *dev_mb; /* dev_mb < 0: not a GPU run */
    int gpu;
} mem_samples;

static void mem_sample(mem_samples *m, long long cpi)
{
    if (m->count == m->cap) {
        long long cap = m->cap ? 2 * m->cap : 256;
        long long *c = realloc(m->cpi, sizeof *c * cap);
        if (c) m->cpi = c;
        double *h = realloc(m->host_mb, sizeof *h * cap);
        if (h) m->host_mb = h;
        double *d = realloc(m->dev_mb, sizeof *d * cap);
        if (d) m->dev_mb = d;
        if (!c || !h || !d) return; /* a sample lost to a failed allocation: not fatal */
        m->cap = cap;
    }
    size_t fr = 0, tot = 0;
    stap_error ignore;
    double dev = -1;
    if (m->gpu && stap_gpu_info(NULL, 0, &fr, &tot, &ignore) == STAP_OK) dev = (double)(tot - fr) / 1e6;
    m->cpi[m->count] = cpi;
    m->host_mb[m->count] = stream_rss_bytes() / 1e6;
    m->dev_mb[m->count] = dev;
    m->count++;
}

typedef struct stream_sinks {
    timeline *tl;
    mem_samples *mem;
} stream_sinks;

static int stream_sink(void *user, const stap_engine *e, const stap_cpi_result *r, long long input_cpi,
                       stap_error *err)
{
    stream_sinks *s = user;
    if (s->mem->every > 0 && r->cpi % s->mem->every == 0) mem_sample(s->mem, r->cpi);
    return s->tl->f ? timeline_sink(s->tl, r, err) : STAP_OK;
}

/* --format T: value is the ring's stap_sample_format */
/* the stream's progress (stap_stream_options.progress) */
static void stream_progress(void *pg, long long done) { progress_update(pg, done); }

static int parse_format(const cli_opt *opt, const char *s)
{
    stap_error err;
    if (stap_sample_type_parse(s, opt->value, &err)) {
        cli_error(EXIT_USAGE, "--format: %s", err.msg);
        return -1;
    }
    return 0;
}

struct stream_job;
static int stream_parse_devices(struct stream_job *j);

/* One rank's stream, as rank 0 reports it (rtstap-mpi) */
typedef struct rank_stream {
    int device;
    long long cpis;
    double seconds, cpis_per_s, lat_p50, lat_p99, lat_max;
} rank_stream;

/* One `rtstap stream`: its options, then what it made and measured. */
typedef struct stream_job {
    const char *preset, *json, *input, *timeline_path;
    int cpis_given, cpis, ring_n, quiet, threads, force, device_n, mem_every;
    cli_processing proc;            /* run's processing options, over the preset */
    int readers, host_decode, progress, resident;
    const char *devices_s;          /* --devices LIST|all */
    int devices[STAP_STREAM_MAX_DEVICES], ndevices; /* resolved: > 0 runs one engine per device */
    unsigned keep;                  /* --keep: STAP_KEEP_* */
    stap_sample_format ring_format; /* --format: the ring's samples */
    char samples[200];              /* how the samples reach the engine, for the report */
    double deadline;
    stap_backend backend;
    stap_qr_method qr;     /* --qr */
    cli_input_opts inopts; /* --layout, --strict */
    stap_engine_options eo;
    cli_training tw;
    stap_write_mode mode;
    workload w;
    int have_w;
    stap_engine *eng;
    struct {
        void **cube; /* pinned, as the engine takes them */
        int count;
    } ring;
    stap_stream *stream;
    stap_stream_report rep;
    stap_recording *rec;
    stap_input in;
    double plain_gbs;
    mem_samples mem;
    timeline tl;
    size_t rss0, rss1, rss2, cube_len;
    char device[256];
    double h2d, d2h, t_run, read_s, wait_s;
    int have_link;
    long long warm;
    stap_stream_stats st;
    rank_stream ranks[PAR_MAX_RANKS]; /* rtstap-mpi: every rank's stream (rank 0 reports) */
    int nranks;
} stream_job;

static int stream_parse(stream_job *j, int argc, char **argv)
{
    j->preset = "hard";
    j->cpis = 2000;
    j->ring_n = 8;
    j->device_n = -1;
    j->backend = STAP_BACKEND_AUTO;
    stap_error env_err;
    if (cli_env_engine_defaults(&j->eo, &env_err)) return cli_fail(&env_err);
    j->eo.slots = 3;
    j->keep = STAP_KEEP_DETECTIONS | STAP_KEEP_WEIGHTS;
    cli_training_defaults(&j->tw);
    cli_opt opts[] = {
        {"preset", 0, CLI_STRING, &j->preset, "NAME",
         "easy | medium | hard | perfect-small | perfect-medium |\n"
         "perfect-large (default hard)"},
        {"input", 0, CLI_STRING, &j->input, "FILE",
         "a recording (/data/iq: CPIs x C x P x R) or one CPI; the\n"
         "run's parameters as for rtstap run with this file: D = P,\n"
         "the preset's Q, S, K, B (only the preset's processing\n"
         "parameters are used)", .flags = CLI_INPUT},
        CLI_OPT_LAYOUT(&j->inopts),
        CLI_OPT_DATASET(&j->inopts),
        CLI_OPT_STRICT(&j->inopts, "refuse an input without axis labels"),
        CLI_OPT_SCALE(&j->inopts),
        CLI_OPT_READERS(&j->readers),
        CLI_OPT_HOST_DECODE(&j->host_decode),
        {"format", 0, CLI_CALL, &j->ring_format, "T",
         "the ring's samples: cf32 (default), or ci16, ci8, ci32:\n"
         "integer (i, q) pairs scaled to the ring's peak, crossing the\n"
         "link as stored (without --input)", .parse = parse_format},
        {"cpis", 0, CLI_INT, &j->cpis, "N",
         "timed CPIs (default 2000; with --input: the recording's CPIs),\n"
         "after 2 x S warm-up CPIs (a recording is replayed from its\n"
         "start)",
         .lo = 1, .hi = 100000000, .given = &j->cpis_given},
        {"slots", 0, CLI_INT, &j->eo.slots, "S", "CPIs in flight, 1..8 (default 3)", .lo = 1,
         .hi = STAP_ENGINE_MAX_SLOTS},
        {"ring", 0, CLI_INT, &j->ring_n, "K", "distinct CPIs replayed (default 8)", .lo = 1,
         .hi = 1024},
        {"deadline-ms", 0, CLI_DOUBLE, &j->deadline, "T", "count CPIs whose latency exceeds T ms",
         .lo = 1e-6, .hi = 1e9},
        CLI_OPT_BACKEND(&j->backend),
        CLI_OPT_QR(&j->qr),
        CLI_OPT_DEVICE(&j->device_n),
        {"devices", 0, CLI_STRING, &j->devices_s, "LIST|all",
         "one engine per GPU, each in its own thread with its share of\n"
         "the CPIs (e.g. 0,1 or all; the synthesized ring: not with\n"
         "--input, --timeline, --mem-every or --device)"},
        CLI_OPT_THREADS(&j->threads),
        {"keep", 0, CLI_CALL, &j->keep, "LIST",
         "what comes back per CPI, comma-separated: detections,\n"
         "weights, output (default detections,weights)", .parse = cli_parse_keep},
        CLI_OPTS_CFAR(&j->eo.cfar, NULL),
        CLI_OPTS_PROCESSING(&j->proc),
        CLI_OPT_TRAINING(&j->tw),
        {"resident", 0, CLI_FLAG, &j->resident, NULL,
         "the ring stays in device memory: each slot's cube is copied\n"
         "once, then run again with no copy-in - device compute alone\n"
         "(GPU; results still come back: --keep detections for the\n"
         "least; not with --input or --devices)"},
        {"no-graphs", 0, CLI_CLEAR, &j->eo.graphs, NULL,
         "launch each CPI's kernels directly instead of a CUDA graph"},
        CLI_OPT_JSON(&j->json),
        {"timeline", 0, CLI_STRING, &j->timeline_path, "FILE",
         "one CSV line per timed CPI: cpi, slot, submit and done (ms from\n"
         "the first submit), latency, and the 8 stage times (CUDA events)", .flags = CLI_OUTPUT},
        CLI_OPT_FORCE(&j->force),
        {"mem-every", 0, CLI_INT, &j->mem_every, "N",
         "sample host RSS and device memory in use every N CPIs (a soak\n"
         "test: the report gives first, last and largest; JSON: all)", .lo = 1,
         .hi = 100000000},
        {"quiet", 0, CLI_FLAG, &j->quiet, NULL, "no text report"},
        CLI_OPT_PROGRESS(&j->progress),
        {0}};
    int pst = cli_parse(&stream_cmd, opts, argc, argv);
    if (pst != CLI_GO) return pst;
    if (j->resident && (j->input || j->devices_s))
        return cli_error(EXIT_USAGE, "--resident replays the synthesized ring from one GPU's "
                         "memory: not with --input or --devices");
    j->eo.resident = j->resident;
    j->eo.keep_weights = (j->keep & STAP_KEEP_WEIGHTS) != 0;
    j->eo.keep_output = (j->keep & STAP_KEEP_OUTPUT) != 0;
    if (par_size() > 1) { /* rtstap-mpi: every rank replays; one GPU each */
        if (j->timeline_path || j->mem_every)
            return cli_error(EXIT_USAGE, "--timeline and --mem-every: one process (rtstap), not "
                             "%d ranks", par_size());
        if ((pst = cli_rank_device(j->devices_s, j->backend, &j->device_n))) return pst;
        j->devices_s = NULL;
    }
    if (j->devices_s && (pst = stream_parse_devices(j))) return pst;
    if (cli_input_opts_need_input(&j->inopts, j->input)) return EXIT_USAGE;
    if ((pst = cli_select_device(j->device_n))) return pst;
    j->mode = cli_write_mode(j->force);
    if ((pst = cli_output_ok(j->json, j->force)) || (pst = cli_output_ok(j->timeline_path, j->force)))
        return pst;
    return CLI_GO;
}

/* the workload: the preset, the options over it */
static int stream_workload(stream_job *j)
{
    stap_error err;
    int pst;
    if (workload_get(j->preset, &j->w, &err)) return cli_error(EXIT_USAGE, "--preset: %s", err.msg);
    j->have_w = 1;
    workload *w = &j->w;
    w->cfg.backend = j->backend;
    w->cfg.qr = j->qr;
    w->cfg.threads = j->threads;
    if ((pst = cli_training_apply(&j->tw, j->proc.seg > 0, &w->cfg)) ||
        (pst = cli_training_order(&j->tw, &j->proc.dorder)))
        return pst;
    cli_processing_apply(&j->proc, &w->cfg);
    /* a PERFECT workload brings its steering vectors: their width is its N */
    if (w->steering && stap_dof(&w->cfg) != w->steering_len)
        return cli_error(EXIT_USAGE, "--preset %s: its steering vectors are %d long (channels x "
                         "Doppler order %d); the run's %s would need %d", j->preset,
                         w->steering_len, w->steering_len / w->cfg.channels,
                         stap_is_subcpi(&w->cfg) ? "sub-CPI" : "Doppler order", stap_dof(&w->cfg));
    return EXIT_OK;
}

/* --input: the recording and its shape into the workload */
static int stream_open_input(stream_job *j)
{
    const int status = cli_open_recording(j->input, &j->inopts, &j->rec, &j->in, 0);
    if (status) return status;
    if (!j->cpis_given) j->cpis = (int)stap_recording_written(j->rec);
    stap_config *c = &j->w.cfg;
    c->channels = j->in.channels;
    c->pulses = j->in.pulses;
    c->range_gates = j->in.range_gates;
    c->doppler_bins = j->proc.dbins > 0 ? j->proc.dbins : 0; /* D = P unless given */
    char note[400];
    cli_fit_to_shape(c, &j->proc, note, sizeof note); /* the preset's values it cannot hold */
    if (note[0] && !j->quiet && par_rank() == 0)
        fprintf(stderr, "rtstap: note: %s: from its shape: %s\n", j->input, note);
    if (j->in.meta.has_element_spacing) c->element_spacing = j->in.meta.element_spacing_wavelengths;
    /* an /array geometry or calibration: the default beams through it, as run steers them */
    static const cli_look no_looks;
    const int st = cli_look_apply(&no_looks, &j->in, c, j->input);
    if (st) return st;
    snprintf(j->w.name, sizeof j->w.name, "%.31s", j->input);
    return EXIT_OK;
}

/* The ring's cubes, synthesized (complex64, j->cube_len each) into tmp; for integer samples
 * (--format) the scale that puts the ring's peak at the type's largest value into f */
static int stream_synthesize(stream_job *j, stap_cf32 *tmp, stap_sample_format *f)
{
    stap_error err;
    for (int k = 0; k < j->ring_n; k++)
        if (workload_cube(&j->w, k, tmp + j->cube_len * (size_t)k, &err)) return cli_fail(&err);
    f->scale = stream_peak_scale(f->type, tmp, j->cube_len * (size_t)j->ring_n);
    return EXIT_OK;
}

/* --devices LIST|all (cli_devices): the ring only */
static int stream_parse_devices(stream_job *j)
{
    if (j->input || j->timeline_path || j->mem_every || j->device_n >= 0)
        return cli_error(EXIT_USAGE, "--devices replays the synthesized ring: not with --input, "
                         "--timeline, --mem-every or --device");
    return cli_devices(j->devices_s, j->backend, j->devices, STAP_STREAM_MAX_DEVICES, &j->ndevices);
}

/* --devices: the ring synthesized once, each device's engine and pinned copy of it in its
 * own thread, the shares streamed at once; the report per device and in all */
static int stream_multi(stream_job *j)
{
    stap_error err;
    workload *w = &j->w;
    j->cube_len = workload_cube_len(w);
    j->eo.input = j->ring_format;
    stap_cf32 *tmp = malloc(sizeof(stap_cf32) * j->cube_len * (size_t)j->ring_n);
    if (!tmp) return cli_error(EXIT_PROCESSING, "out of memory for the ring");
    int status = stream_synthesize(j, tmp, &j->eo.input);
    /* the ring as the engines take it; the stream pins a copy of it on each device */
    const size_t bytes = j->cube_len * stap_sample_bytes(&j->eo.input);
    char *host = status ? NULL : malloc(bytes * (size_t)j->ring_n);
    void *cubes[1024];
    if (!status && !host) status = cli_error(EXIT_PROCESSING, "out of memory for the ring");
    for (int k = 0; !status && k < j->ring_n; k++) {
        cubes[k] = host + bytes * (size_t)k;
        stap_samples_from_cf32(&j->eo.input, tmp + j->cube_len * (size_t)k, j->cube_len, cubes[k]);
    }
    free(tmp);
    const stap_stream_source src = {.kind = STAP_STREAM_RING, .cpis = j->cpis,
                                    .ring = (const void *const *)cubes, .ring_count = j->ring_n};
    stap_stream_options so;
    stap_stream_options_defaults(&so);
    so.warmup = 2LL * j->eo.slots;
    if (!status && stap_stream_create(&j->stream, &w->cfg, w->steering, w->nbeams,
                                      w->steering ? w->steering_len : 0, &j->eo, j->devices,
                                      j->ndevices, &src, NULL, &so, &err))
        status = cli_fail(&err);
    free(host);
    if (status) return status;
    char name[STAP_STREAM_MAX_DEVICES][128];
    for (int k = 0; k < j->ndevices; k++) { /* each device's name, with it selected */
        name[k][0] = '\0';
        if (j->devices[k] >= 0 && !stap_la_gpu_select(j->devices[k], &err)) stap_gpu_info(name[k], sizeof name[k], NULL, NULL, &err);
    }
    if (j->devices[0] >= 0) stap_la_gpu_select(j->devices[0], &err);
    cli_graceful_begin();
    cli_graceful_attach(j->stream);
    if (stap_stream_run(j->stream, &j->rep, &err)) status = cli_fail(&err);
    cli_graceful_end();
    if (status) return status;
    const stap_stream_report *rep = &j->rep;
    const double wall_s = rep->wall_s;
    char d[96];
    stap_sample_format_describe(&j->eo.input, d, sizeof d);
    long long total = 0;
    for (int k = 0; k < j->ndevices; k++) total += rep->device[k].cpis;
    const double rate = wall_s > 0 ? total / wall_s : 0;
    if (!j->quiet) {
        fprintf(stderr, "rtstap stream: %s on %d devices, %s over the link\n  engine: %s\n", w->name,
                j->ndevices, d, stap_engine_describe(stap_stream_engine(j->stream, 0)));
        for (int k = 0; k < j->ndevices; k++)
            fprintf(stderr, "  device %d (%s): %lld CPIs, %.1f CPIs/s, latency p50 %.3f ms, p99 %.3f ms\n",
                    j->devices[k], name[k], rep->device[k].cpis, rep->device[k].cpis_per_s,
                    rep->device[k].lat_p50, rep->device[k].lat_p99);
        fprintf(stderr, "  all: %lld CPIs in %.3f s: %.1f CPIs/s\n", total, wall_s, rate);
    }
    if (!j->json) return EXIT_OK;
    cJSON *doc = stream_json_report("stream");
    cJSON_AddStringToObject(doc, "workload", w->name);
    cJSON_AddStringToObject(doc, "samples", d);
    cJSON_AddNumberToObject(doc, "cpis", (double)total);
    cJSON_AddNumberToObject(doc, "seconds", wall_s);
    cJSON_AddNumberToObject(doc, "cpis_per_s", rate);
    cJSON *arr = cJSON_AddArrayToObject(doc, "devices");
    for (int k = 0; k < j->ndevices; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "device", j->devices[k]);
        cJSON_AddStringToObject(o, "name", name[k]);
        cJSON_AddStringToObject(o, "engine", stap_engine_describe(stap_stream_engine(j->stream, k)));
        stream_json_stats(o, &rep->device[k]);
        cJSON_AddItemToArray(arr, o);
    }
    status = cli_json_write(j->json, doc, j->mode, &err) ? cli_fail(&err) : EXIT_OK;
    cJSON_Delete(doc);
    return status;
}

/* the engine, the ring of pinned synthesized CPIs (without --input), the link */
static int stream_engine(stream_job *j)
{
    stap_error err;
    int status;
    workload *w = &j->w;
    const stap_input *in = &j->in;
    j->eo.host_reserve = sizeof(stap_cf32) * workload_cube_len(w) *
                         (size_t)(j->rec ? j->eo.slots + 2 : j->ring_n);
    j->cube_len = workload_cube_len(w);
    stap_cf32 *tmp = NULL; /* the synthesized ring, before it is stored as the engine takes it */
    if (j->rec) {
        stap_stream_input_format(j->rec, j->host_decode, &j->eo.input, j->samples, sizeof j->samples);
    } else {
        j->eo.input = j->ring_format;
        tmp = malloc(sizeof(stap_cf32) * j->cube_len * (size_t)j->ring_n);
        if (!tmp) return cli_error(EXIT_PROCESSING, "out of memory for the ring");
        if ((status = stream_synthesize(j, tmp, &j->eo.input))) {
            free(tmp);
            return status;
        }
        char d[96];
        stap_sample_format_describe(&j->eo.input, d, sizeof d);
        snprintf(j->samples, sizeof j->samples, "%s %s (the synthesized ring%s)", d,
                 j->resident ? "resident in device memory, no copy-in per CPI" : "over the link",
                 j->eo.input.type != STAP_SAMPLES_CF32 ? ", quantized to its peak" : "");
    }
    int dst = cli_detector_check(&j->eo.cfar, &w->cfg);
    if (dst) {
        free(tmp);
        return dst;
    }
    if (stap_engine_create(&j->eng, &w->cfg, in->steering ? in->steering : w->steering,
                           in->steering ? in->steering_beams : w->nbeams,
                           in->steering ? in->steering_len : (w->steering ? w->steering_len : 0),
                           &j->eo, &err)) {
        free(tmp);
        return cli_fail(&err);
    }
    if (*stap_engine_note(j->eng)) /* warnings are not silenced by --quiet */
        fprintf(stderr, "rtstap: warning: %s\n", stap_engine_note(j->eng));
    j->ring.cube = calloc((size_t)j->ring_n, sizeof *j->ring.cube);
    const size_t bytes = stap_engine_cube_bytes(j->eng);
    for (int k = 0; k < j->ring_n && !j->rec && j->ring.cube; k++, j->ring.count++) {
        j->ring.cube[k] = stap_engine_host_alloc(j->eng, bytes);
        if (!j->ring.cube[k]) {
            free(tmp);
            return cli_error(EXIT_PROCESSING, "cannot allocate %d pinned cubes of %.1f MB",
                             j->ring_n, bytes / 1e6);
        }
        stap_samples_from_cf32(&j->eo.input, tmp + j->cube_len * (size_t)k, j->cube_len,
                               j->ring.cube[k]);
    }
    free(tmp);
    if (!j->ring.cube) return cli_error(EXIT_PROCESSING, "out of memory");
    j->rss1 = stream_rss_bytes();
    snprintf(j->device, sizeof j->device, "host CPU");
    const stap_config *cfg = stap_engine_config(j->eng);
    if (cfg->backend == STAP_BACKEND_GPU || cfg->backend == STAP_BACKEND_CUBLAS) {
        j->have_link = stap_gpu_link_bandwidth(sizeof(stap_cf32) * j->cube_len, 20, &j->h2d, &j->d2h,
                                               &err) == STAP_OK;
        stap_gpu_info(j->device, sizeof j->device, NULL, NULL, &err);
    }
    return EXIT_OK;
}

/* --timeline: opened as a temporary, published when the stream ran */
static int stream_timeline_open(stream_job *j)
{
    stap_error err;
    timeline *tl = &j->tl;
    if (stap_atomic_begin(j->timeline_path, tl->tmp, sizeof tl->tmp, j->mode, &err))
        return cli_fail(&err);
    tl->f = fopen(tl->tmp, "w");
    if (!tl->f) {
        int st = cli_error(EXIT_PROCESSING, "cannot create '%s' (as '%s'): %s", j->timeline_path,
                           tl->tmp, strerror(errno));
        stap_atomic_abort(tl->tmp);
        return st;
    }
    fprintf(tl->f, "cpi,slot,submit_ms,done_ms,latency_ms");
    for (int i = 0; i < STAP_STAGE_COUNT; i++) fprintf(tl->f, ",%s_ms", stap_stage_names[i]);
    fputc('\n', tl->f);
    return EXIT_OK;
}

/* the timeline published when the stream ran (or stopped cleanly), else removed */
static int stream_timeline_close(stream_job *j, int sr, stap_error *err)
{
    timeline *tl = &j->tl;
    errno = 0;
    const int bad = ferror(tl->f) || fflush(tl->f) != 0;
    const int e = errno;
    if ((fclose(tl->f) != 0 || bad) && !sr)
        sr = stap_fail(err, STAP_EIO, "cannot write '%s': %s", j->timeline_path,
                       e ? strerror(e) : errno ? strerror(errno) : "write error");
    if (sr) stap_atomic_abort(tl->tmp);
    else sr = stap_atomic_commit(tl->tmp, j->timeline_path, j->mode, err);
    tl->f = NULL;
    return sr;
}

/* the timed stream, its reader started first when it reads a recording */
static int stream_go(stream_job *j)
{
    stap_error err;
    int status = EXIT_OK;
    j->warm = 2LL * j->eo.slots;
    j->tl = (timeline){NULL, "", j->warm, j->eo.slots, 0};
    if (j->timeline_path && (status = stream_timeline_open(j))) return status;
    const stap_config *cfg = stap_engine_config(j->eng);
    j->mem.gpu = cfg->backend == STAP_BACKEND_GPU || cfg->backend == STAP_BACKEND_CUBLAS;
    stream_sinks sinks = {&j->tl, &j->mem};
    progress pg;
    const stap_stream_source src = j->rec
        ? (stap_stream_source){.kind = STAP_STREAM_RECORDING, .cpis = j->cpis, .recording = j->rec,
                               .readers = j->readers, .buffers = j->eo.slots + 2}
        : (stap_stream_source){.kind = STAP_STREAM_RING, .cpis = j->cpis, .ring = (const void *const *)j->ring.cube,
                               .ring_count = j->ring.count, .resident = j->resident};
    const stap_stream_sink sink = {.each = j->tl.f || j->mem_every ? stream_sink : NULL, .each_user = &sinks};
    stap_stream_options so;
    stap_stream_options_defaults(&so);
    so.warmup = j->warm;
    so.deadline_ms = j->deadline;
    so.progress = stream_progress;
    so.progress_user = &pg;
    if (stap_stream_create_on(&j->stream, &j->eng, NULL, 1, &src, &sink, &so, &err)) {
        if (j->tl.f) {
            fclose(j->tl.f);
            stap_atomic_abort(j->tl.tmp);
        }
        return cli_fail(&err);
    }
    double t_run = stap_now_ms();
    progress_begin(&pg, j->progress, j->quiet, "stream", "CPIs", j->cpis);
    cli_graceful_begin(); /* SIGINT/SIGTERM: finish the CPIs in flight, report them */
    cli_graceful_attach(j->stream);
    int sr = stap_stream_run(j->stream, &j->rep, &err);
    j->st = j->rep.all;
    if (par_size() == 1) cli_graceful_end(); /* rtstap-mpi: after the ranks' report (cmd_stream) */
    progress_end(&pg);
    if (stap_engine_moved_to_cpu(j->eng) >= 0) /* said once, as it ends */
        fprintf(stderr, "rtstap: warning: %s\n", stap_engine_note(j->eng));
    if (!sr && j->st.stopped_by) {
        fprintf(stderr, "rtstap: stream stopped by %s after %lld CPIs (%lld timed)\n",
                j->st.stopped_by == SIGINT ? "SIGINT" : "SIGTERM", j->st.cpis_run, j->st.cpis);
        status = 128 + j->st.stopped_by;
    }
    if (!sr && j->mem_every) mem_sample(&j->mem, j->st.cpis_run); /* the state at the end */
    if (j->tl.f) sr = stream_timeline_close(j, sr, &err);
    if (sr) return cli_fail(&err);
    j->t_run = stap_now_ms() - t_run;
    if (j->rec) {
        j->read_s = j->rep.read_s;
        j->wait_s = j->rep.read_wait_s;
        /* the yardstick: the same file read plainly by as many threads as read it */
        j->plain_gbs = stap_stream_plain_read_gbs(j->input, j->rep.readers);
    }
    j->rss2 = stream_rss_bytes();
    return status;
}

/* bytes a CPI moves each way */
static void stream_bytes(const stream_job *j, double *in_bytes, double *out_bytes)
{
    const stap_config *cfg = stap_engine_config(j->eng);
    const int B = stap_engine_beams(j->eng);
    *in_bytes = j->resident ? 0 : (double)stap_engine_cube_bytes(j->eng); /* resident: none */
    *out_bytes = (j->eo.keep_weights ? sizeof(stap_cf32) * (double)stap_weights_count(cfg, B) : 0) +
                 (j->eo.keep_output ? sizeof(stap_cf32) * (double)stap_output_count(cfg, B) : 0);
}

static void stream_print_memory(const stream_job *j)
{
    const stap_config *cfg = stap_engine_config(j->eng);
    const mem_samples *mem = &j->mem;
    fprintf(stderr, "  memory: engine %.1f MB %s; host RSS %.1f MB at start, %.1f MB with "
            "the ring, %.1f MB at the end\n", stap_engine_memory_bytes(j->eng) / 1e6,
            cfg->backend == STAP_BACKEND_GPU || cfg->backend == STAP_BACKEND_CUBLAS ? "on the device" : "on the host",
            j->rss0 / 1e6, j->rss1 / 1e6, j->rss2 / 1e6);
    if (mem->count == 0) return;
    double hmax = 0, dmax = 0;
    for (long long i = 0; i < mem->count; i++) {
        if (mem->host_mb[i] > hmax) hmax = mem->host_mb[i];
        if (mem->dev_mb[i] > dmax) dmax = mem->dev_mb[i];
    }
    const long long l = mem->count - 1;
    fprintf(stderr, "  memory samples (%lld, every %d CPIs): host RSS %.1f MB at CPI %lld, "
            "%.1f MB at CPI %lld, largest %.1f MB", mem->count, j->mem_every, mem->host_mb[0],
            mem->cpi[0], mem->host_mb[l], mem->cpi[l], hmax);
    if (mem->gpu)
        fprintf(stderr, "; device in use %.1f MB, %.1f MB, largest %.1f MB", mem->dev_mb[0],
                mem->dev_mb[l], dmax);
    fputc('\n', stderr);
}

static void stream_print(const stream_job *j)
{
    const stap_config *cfg = stap_engine_config(j->eng);
    const stap_stream_stats *st = &j->st;
    double in_bytes, out_bytes;
    stream_bytes(j, &in_bytes, &out_bytes);
    const double in_gbs = in_bytes * st->cpis_per_s / 1e9, out_gbs = out_bytes * st->cpis_per_s / 1e9;
    char wb[64], ab[48];
    fprintf(stderr,
            "rtstap stream: %s (C=%d P=%d R=%d D=%d Q=%d S=%d K=%d%s B=%d%s), backend %s\n"
            "  engine: %s\n  device: %s\n  host: ",
            j->w.name, cfg->channels, cfg->pulses, cfg->range_gates, cfg->doppler_bins,
            cfg->doppler_order, cfg->segments, cfg->training, cli_window_str(cfg, wb, sizeof wb),
            stap_engine_beams(j->eng), cli_algorithm_str(cfg, ab, sizeof ab),
            stap_backend_name(cfg->backend), stap_engine_describe(j->eng), j->device);
    stream_print_platform(stderr, j->threads);
    fprintf(stderr, "  CPIs: %lld (after %d warm-up) in %.3f s: %.1f CPIs/s\n", st->cpis,
            2 * j->eo.slots, st->seconds, st->cpis_per_s);
    fprintf(stderr, "  latency ms: min %.3f  p50 %.3f  p99 %.3f  max %.3f", st->lat_min,
            st->lat_p50, st->lat_p99, st->lat_max);
    if (j->deadline > 0)
        fprintf(stderr, "; deadline %g ms: %lld missed", j->deadline, st->deadline_misses);
    fputc('\n', stderr);
    fprintf(stderr, "  samples: %s\n", j->samples);
    fprintf(stderr, "  copy: in %.2f GB/s (%.1f MB per CPI), out %.2f GB/s (%.2f MB per CPI)",
            in_gbs, in_bytes / 1e6, out_gbs, out_bytes / 1e6);
    if (j->have_link)
        fprintf(stderr, "; link %.1f / %.1f GB/s (pinned): in at %.0f%% of it", j->h2d, j->d2h,
                100 * in_gbs / j->h2d);
    fputc('\n', stderr);
    fprintf(stderr, "  detections: %.2f per CPI\n", st->detections_per_cpi);
    if (j->rec)
        fprintf(stderr, "  reading: %.2f GB/s of CPIs from the file vs %.2f GB/s plain parallel "
                "read (%.0f%%); %d reader%s, %s, reading %.0f%% of the time: %s limits the "
                "stream\n", in_gbs, j->plain_gbs, j->plain_gbs > 0 ? 100 * in_gbs / j->plain_gbs : 0,
                j->rep.readers, j->rep.readers > 1 ? "s" : "",
                j->rep.read_path, 100 * j->read_s / (j->t_run * 1e-3),
                j->read_s > 0.8 * j->t_run * 1e-3 ? "reading" : "compute");
    stream_print_memory(j);
    if (j->nranks > 1) { /* rtstap-mpi: the above is rank 0's stream; every rank's at once */
        double sum = 0;
        for (int k = 0; k < j->nranks; k++) sum += j->ranks[k].cpis_per_s;
        fprintf(stderr, "  ranks: %s, each replaying: %.1f CPIs/s in all (the sum of their rates)\n",
                par_describe(), sum);
        for (int k = 0; k < j->nranks; k++) {
            const rank_stream *q = &j->ranks[k];
            char dev[32];
            fprintf(stderr, "    rank %d (%s): %lld CPIs in %.3f s, %.1f CPIs/s; latency ms p50 %.3f, "
                    "p99 %.3f, max %.3f\n", k, stream_device_name(q->device, dev, sizeof dev), q->cpis, q->seconds, q->cpis_per_s, q->lat_p50,
                    q->lat_p99, q->lat_max);
        }
    }
}

static int stream_json(const stream_job *j)
{
    stap_error err;
    const stap_config *cfg = stap_engine_config(j->eng);
    double in_bytes, out_bytes;
    stream_bytes(j, &in_bytes, &out_bytes);
    cJSON *doc = stream_json_report("stream");
    cJSON_AddStringToObject(doc, "workload", j->w.name);
    stream_json_config(doc, cfg, stap_engine_beams(j->eng));
    cJSON_AddStringToObject(doc, "backend", stap_backend_name(cfg->backend));
    cJSON_AddStringToObject(doc, "engine", stap_engine_describe(j->eng));
    cJSON_AddStringToObject(doc, "device", j->device);
    cJSON_AddNumberToObject(doc, "slots", j->eo.slots);
    cJSON_AddNumberToObject(doc, "ring", j->ring_n);
    cJSON_AddBoolToObject(doc, "resident", j->resident);
    cJSON_AddStringToObject(doc, "samples", j->samples);
    cJSON_AddBoolToObject(doc, "keep_weights", j->eo.keep_weights);
    cJSON_AddBoolToObject(doc, "keep_output", j->eo.keep_output);
    stream_json_stats(doc, &j->st);
    stream_json_platform(doc, j->threads);
    if (j->deadline > 0) cJSON_AddNumberToObject(doc, "deadline_ms", j->deadline);
    cJSON_AddNumberToObject(doc, "copy_in_gbs", in_bytes * j->st.cpis_per_s / 1e9);
    cJSON_AddNumberToObject(doc, "copy_out_gbs", out_bytes * j->st.cpis_per_s / 1e9);
    if (j->have_link) {
        cJSON_AddNumberToObject(doc, "link_h2d_gbs", j->h2d);
        cJSON_AddNumberToObject(doc, "link_d2h_gbs", j->d2h);
    }
    cJSON_AddNumberToObject(doc, "engine_memory_mb", stap_engine_memory_bytes(j->eng) / 1e6);
    if (j->rec) {
        cJSON_AddStringToObject(doc, "input", j->input);
        cJSON_AddNumberToObject(doc, "plain_read_gbs", j->plain_gbs);
        cJSON_AddNumberToObject(doc, "reader_busy_fraction", j->read_s / (j->t_run * 1e-3));
        cJSON_AddNumberToObject(doc, "readers", j->rep.readers);
        cJSON_AddStringToObject(doc, "reader_path", j->rep.read_path);
    }
    cJSON_AddNumberToObject(doc, "host_rss_mb_start", j->rss0 / 1e6);
    cJSON_AddNumberToObject(doc, "host_rss_mb_ring", j->rss1 / 1e6);
    cJSON_AddNumberToObject(doc, "host_rss_mb_end", j->rss2 / 1e6);
    if (j->st.stopped_by) cJSON_AddNumberToObject(doc, "stopped_by_signal", j->st.stopped_by);
    cJSON_AddNumberToObject(doc, "cpis_run", (double)j->st.cpis_run);
    if (j->nranks > 1) { /* rtstap-mpi: the keys above are rank 0's */
        double sum = 0;
        cJSON_AddStringToObject(doc, "mpi", par_describe());
        cJSON_AddNumberToObject(doc, "ranks", j->nranks);
        cJSON *arr = cJSON_AddArrayToObject(doc, "rank_stats");
        for (int k = 0; k < j->nranks; k++) {
            const rank_stream *q = &j->ranks[k];
            cJSON *o = stream_json_rank(arr, k, q->device, q->cpis, q->seconds, q->cpis_per_s,
                                        q->lat_p50, q->lat_p99);
            cJSON_AddNumberToObject(o, "latency_max_ms", q->lat_max);
            sum += q->cpis_per_s;
        }
        cJSON_AddNumberToObject(doc, "total_cpis_per_s", sum);
    }
    if (j->mem.count > 0) {
        cJSON *arr = cJSON_AddArrayToObject(doc, "memory_samples");
        for (long long i = 0; arr && i < j->mem.count; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "cpi", (double)j->mem.cpi[i]);
            cJSON_AddNumberToObject(o, "host_rss_mb", j->mem.host_mb[i]);
            if (j->mem.gpu) cJSON_AddNumberToObject(o, "device_used_mb", j->mem.dev_mb[i]);
            cJSON_AddItemToArray(arr, o);
        }
    }
    int status = cli_json_write(j->json, doc, j->mode, &err) ? cli_fail(&err) : EXIT_OK;
    cJSON_Delete(doc);
    return status;
}

/* Collective (rtstap-mpi): every rank's stream, to rank 0's report — each rank's status
 * (a failed rank named by par_check), rate and latency; the worst status back. */
static int stream_ranks(stream_job *j, int status)
{
    status = par_check(status);
    const rank_stream mine = {j->device_n, j->st.cpis, j->st.seconds, j->st.cpis_per_s,
                              j->st.lat_p50, j->st.lat_p99, j->st.lat_max};
    par_allgather(&mine, sizeof mine, j->ranks);
    j->nranks = par_size();
    return status;
}

int cmd_stream(int argc, char **argv)
{
    stream_job *j = calloc(1, sizeof *j);
    if (!j) return cli_error(EXIT_PROCESSING, "out of memory");
    int status = stream_parse(j, argc, argv);
    if (status == CLI_GO) {
        j->mem = (mem_samples){j->mem_every, 0, 0, NULL, NULL, NULL, 0};
        j->rss0 = stream_rss_bytes();
        if (j->ndevices && !(status = stream_workload(j))) {
            status = stream_multi(j);
        } else if (!j->ndevices) {
            if (!(status = stream_workload(j)) && !(status = j->input ? stream_open_input(j) : EXIT_OK))
                status = stream_engine(j);
            /* rtstap-mpi: the ranks meet with their engines made, then replay at once */
            if (par_size() > 1 && !(status = par_check(status)) && par_rank() > 0) {
                j->quiet = 1;
                j->json = NULL;
                j->progress = PROGRESS_NONE;
            }
            if (!status) {
                status = stream_go(j);
                if (par_size() > 1) { /* a rank done early waits here, its stop still graceful */
                    status = stream_ranks(j, status);
                    cli_graceful_end();
                }
                if (status == EXIT_OK || status > 128) { /* a clean stop reports what ran */
                    if (!j->quiet) stream_print(j);
                    int js = j->json ? stream_json(j) : EXIT_OK;
                    if (js) status = js;
                }
            }
        }
    }
    cli_graceful_end();
    stap_stream_destroy(j->stream);
    stap_recording_close(j->rec);
    stap_input_free(&j->in);
    for (int k = 0; k < j->ring.count; k++) stap_engine_host_free(j->eng, j->ring.cube[k]);
    free(j->ring.cube);
    free(j->mem.cpi);
    free(j->mem.host_mb);
    free(j->mem.dev_mb);
    stap_engine_destroy(j->eng);
    if (j->have_w) workload_free(&j->w);
    free(j);
    return status;
}
