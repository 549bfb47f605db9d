/* cmd_stream.c: `rtstap stream` — real-time throughput: CPIs kept in flight through one
 * engine, a ring of distinct synthesized CPIs in pinned memory replayed (the engine, not
 * the disk, is measured), reporting sustained CPIs/s, host-to-host latency percentiles,
 * deadline misses, copy bandwidth against the measured link, and memory. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "signals.h"
#include "cli_json.h"
#include "cli_opts.h"
#include "rtstap/common.h" /* la_now_ms */
#include "cpi_io.h"
#include "stream_loop.h"
#include "workload.h"

static const cli_command stream_cmd = {
    "stream",
    "Streams CPIs through one engine with S of them in flight (copy-in of one, compute\n"
    "of another and copy-out of a third overlap on the GPU) and reports sustained\n"
    "CPIs/s, host-to-host latency per CPI (submit to results in host memory: min, p50,\n"
    "p99, max), deadline misses, achieved copy bandwidth against the measured link, and\n"
    "host and device memory. A ring of distinct synthesized CPIs, held in pinned host\n"
    "memory, is replayed (the engine is measured, not the disk); with --input a recording\n"
    "is read by a reader thread as it streams (the whole chain: it says whether reading\n"
    "or computing limits it, against a plain sequential read of the same file).\n",
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

static int timeline_sink(void *user, const stap_cpi_result *r, rt_error *err)
{
    timeline *t = user;
    if (r->cpi < t->warmup) return RT_OK;
    if (t->t0 == 0) t->t0 = r->submit_ms;
    fprintf(t->f, "%lld,%lld,%.4f,%.4f,%.4f", r->cpi - t->warmup, r->cpi % t->slots,
            r->submit_ms - t->t0, r->done_ms - t->t0, r->done_ms - r->submit_ms);
    for (int s = 0; s < STAP_STAGE_COUNT; s++) fprintf(t->f, ",%.4f", r->stage_ms[s]);
    fputc('\n', t->f);
    return ferror(t->f) ? rt_fail(err, RT_EIO, "writing the timeline failed") : RT_OK;
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
    rt_error ignore;
    double dev = -1;
    if (m->gpu && stap_gpu_info(NULL, 0, &fr, &tot, &ignore) == RT_OK) dev = (double)(tot - fr) / 1e6;
    m->cpi[m->count] = cpi;
    m->host_mb[m->count] = stream_rss_bytes() / 1e6;
    m->dev_mb[m->count] = dev;
    m->count++;
}

typedef struct stream_sinks {
    timeline *tl;
    mem_samples *mem;
} stream_sinks;

static int stream_sink(void *user, const stap_cpi_result *r, rt_error *err)
{
    stream_sinks *s = user;
    if (s->mem->every > 0 && r->cpi % s->mem->every == 0) mem_sample(s->mem, r->cpi);
    return s->tl->f ? timeline_sink(s->tl, r, err) : RT_OK;
}

/* --keep LIST: value is the stap_engine_options */
static int parse_keep(const cli_opt *opt, const char *s)
{
    stap_engine_options *o = opt->value;
    o->keep_weights = o->keep_output = 0;
    char *copy = strdup(s), *save = NULL;
    int bad = 0;
    for (char *t = strtok_r(copy, ",", &save); t && !bad; t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(t, "weights")) o->keep_weights = 1;
        else if (!strcmp(t, "output")) o->keep_output = 1;
        else if (strcmp(t, "detections")) {
            cli_error(EXIT_USAGE, "--keep: '%s' is not detections, weights or output", t);
            bad = 1;
        }
    }
    free(copy);
    return bad ? -1 : 0;
}

int cmd_stream(int argc, char **argv)
{
    const char *preset = "hard", *json = NULL, *input = NULL, *timeline_path = NULL;
    int cpis_given = 0;
    int cpis = 2000, ring_n = 8, quiet = 0, threads = 0, force = 0, device_n = -1;
    double deadline = 0;
    int mem_every = 0;
    la_backend backend = LA_BACKEND_AUTO;
    cli_input_opts inopts = {{0}, NULL, NULL, 0}; /* --layout, --strict */
    stap_engine_options eo;
    stap_engine_options_defaults(&eo);
    eo.slots = 3;
    cli_training tw;
    cli_training_defaults(&tw);
    int dorder = 0, train = 0;
    rt_error err;
    rt_clear(&err);
    cli_opt opts[] = {
        {"preset", 0, CLI_STRING, &preset, "NAME",
         "easy | medium | hard | perfect-small | perfect-medium |\n"
         "perfect-large (default hard)"},
        {"input", 0, CLI_STRING, &input, "FILE",
         "a recording (/data/iq: CPIs x C x P x R) or one CPI; the\n"
         "run's parameters as for rtstap run with this file: D = P,\n"
         "the preset's Q, S, K, B (only the preset's processing\n"
         "parameters are used)", .flags = CLI_INPUT},
        CLI_OPT_LAYOUT(&inopts),
        CLI_OPT_STRICT(&inopts, "refuse an input without axis labels"),
        CLI_OPT_SCALE(&inopts),
        {"cpis", 0, CLI_INT, &cpis, "N",
         "timed CPIs (default 2000; with --input: the recording's CPIs),\n"
         "after 2 x S warm-up CPIs (a recording is replayed from its\n"
         "start)",
         .lo = 1, .hi = 100000000, .given = &cpis_given},
        {"slots", 0, CLI_INT, &eo.slots, "S", "CPIs in flight, 1..8 (default 3)", .lo = 1,
         .hi = STAP_ENGINE_MAX_SLOTS},
        {"ring", 0, CLI_INT, &ring_n, "K", "distinct CPIs replayed (default 8)", .lo = 1,
         .hi = 1024},
        {"deadline-ms", 0, CLI_DOUBLE, &deadline, "T", "count CPIs whose latency exceeds T ms",
         .lo = 1e-6, .hi = 1e9},
        CLI_OPT_BACKEND(&backend),
        CLI_OPT_DEVICE(&device_n),
        CLI_OPT_THREADS(&threads),
        {"keep", 0, CLI_CALL, &eo, "LIST",
         "what comes back per CPI, comma-separated: detections,\n"
         "weights, output (default detections,weights)", .parse = parse_keep},
        CLI_OPTS_CFAR(&eo.cfar, NULL),
        {"doppler-order", 0, CLI_CALL, &dorder, "Q",
         "override the preset's Doppler order (odd)", .parse = cli_parse_doppler_order},
        {"training", 0, CLI_INT, &train, "K", "override the preset's training cells",
         .lo = 1, .hi = 1 << 24},
        CLI_OPT_TRAINING(&tw),
        {"no-graphs", 0, CLI_CLEAR, &eo.graphs, NULL,
         "launch each CPI's kernels directly instead of a CUDA graph"},
        CLI_OPT_JSON(&json),
        {"timeline", 0, CLI_STRING, &timeline_path, "FILE",
         "one CSV line per timed CPI: cpi, slot, submit and done (ms from\n"
         "the first submit), latency, and the 8 stage times (CUDA events)", .flags = CLI_OUTPUT},
        CLI_OPT_FORCE(&force),
        {"mem-every", 0, CLI_INT, &mem_every, "N",
         "sample host RSS and device memory in use every N CPIs (a soak\n"
         "test: the report gives first, last and largest; JSON: all)", .lo = 1,
         .hi = 100000000},
        {"quiet", 0, CLI_FLAG, &quiet, NULL, "no text report"},
        {0}};
    int pst = cli_parse(&stream_cmd, opts, argc, argv);
    if (pst != CLI_GO) return pst;
    if (cli_input_opts_need_input(&inopts, input)) return EXIT_USAGE;
    if ((pst = cli_select_device(device_n))) return pst;
    const rt_write_mode mode = cli_write_mode(force);
    if ((pst = cli_output_ok(json, force)) || (pst = cli_output_ok(timeline_path, force)))
        return pst;

    workload w;
    if (workload_get(preset, &w, &err)) return cli_error(EXIT_USAGE, "--preset: %s", err.msg);
    w.cfg.backend = backend;
    w.cfg.threads = threads;
    if ((pst = cli_training_apply(&tw, 0, &w.cfg)) || (pst = cli_training_order(&tw, &dorder)))
        return pst;
    if (dorder > 0) w.cfg.doppler_order = dorder;
    if (train > 0) w.cfg.training = train;
    /* a PERFECT workload brings its steering vectors: their width is its N */
    if (w.steering && stap_dof(&w.cfg) != w.steering_len) {
        workload_free(&w);
        return cli_error(EXIT_USAGE, "--preset %s: its steering vectors are %d long (channels x "
                         "Doppler order %d); the run's %s would need %d", preset,
                         w.steering_len, w.steering_len / w.cfg.channels,
                         stap_is_subcpi(&w.cfg) ? "sub-CPI" : "Doppler order", stap_dof(&w.cfg));
    }
    int status = EXIT_OK;
    stap_engine *eng = NULL;
    stream_ring ring = {NULL, 0};
    cJSON *doc = NULL;
    stap_recording *rec = NULL;
    stap_input in;
    memset(&in, 0, sizeof in);
    cpi_reader *reader = NULL;
    double plain_gbs = 0, file_bytes = 0;
    mem_samples mem = {mem_every, 0, 0, NULL, NULL, NULL, 0};
    const size_t rss0 = stream_rss_bytes();
    if (input) {
        if (stap_recording_open_opts(input, &rec, &in, &inopts.read, &err)) {
            status = cli_fail(&err);
            goto out;
        }
        if ((status = cli_check_layout(input, &in, &inopts)) ||
            (status = cli_check_unwritten(input, rec, inopts.strict)))
            goto out;
        if (!cpis_given) cpis = (int)stap_recording_written(rec);
        w.cfg.channels = in.channels;
        w.cfg.pulses = in.pulses;
        w.cfg.range_gates = in.range_gates;
        w.cfg.doppler_bins = 0;
        if (in.meta.has_element_spacing) w.cfg.element_spacing = in.meta.element_spacing_wavelengths;
        snprintf(w.name, sizeof w.name, "%.31s", input);
        /* the yardstick: the same file read sequentially, plainly (page cache or disk) */
        int fd = open(input, O_RDONLY);
        if (fd >= 0) {
            static char chunk[1 << 22];
            double t0 = la_now_ms();
            ssize_t got;
            while ((got = read(fd, chunk, sizeof chunk)) > 0) file_bytes += (double)got;
            plain_gbs = file_bytes / ((la_now_ms() - t0) * 1e-3) / 1e9;
            close(fd);
        }
    }
    eo.host_reserve = sizeof(cf32) * workload_cube_len(&w) * (size_t)(rec ? eo.slots + 2 : ring_n);
    if (stap_engine_create(&eng, &w.cfg, in.steering ? in.steering : w.steering,
                           in.steering ? in.steering_beams : w.nbeams,
                           in.steering ? in.steering_len : (w.steering ? w.steering_len : 0), &eo, &err)) {
        status = cli_fail(&err);
        goto out;
    }
    if (*stap_engine_note(eng)) /* warnings are not silenced by --quiet */
        fprintf(stderr, "rtstap: warning: %s\n", stap_engine_note(eng));
    ring.cube = calloc((size_t)ring_n, sizeof *ring.cube);
    if (!ring.cube) {
        status = cli_error(EXIT_PROCESSING, "out of memory");
        goto out;
    }
    const size_t cube_len = workload_cube_len(&w);
    for (int k = 0; k < ring_n && !rec; k++, ring.count++) {
        ring.cube[k] = stap_engine_host_alloc(eng, sizeof(cf32) * cube_len);
        if (!ring.cube[k]) {
            status = cli_error(EXIT_PROCESSING, "cannot allocate %d pinned cubes of %.1f MB",
                               ring_n, sizeof(cf32) * cube_len / 1e6);
            goto out;
        }
        if (workload_cube(&w, k, ring.cube[k], &err)) {
            status = cli_fail(&err);
            goto out;
        }
    }
    const size_t rss1 = stream_rss_bytes();
    char device[256] = "host CPU";
    double h2d = 0, d2h = 0;
    int have_link = 0;
    const stap_config *cfg = stap_engine_config(eng);
    if (cfg->backend == LA_BACKEND_GPU || cfg->backend == LA_BACKEND_CUBLAS) {
        have_link = stap_gpu_link_bandwidth(sizeof(cf32) * cube_len, 20, &h2d, &d2h, &err) == RT_OK;
        stap_gpu_info(device, sizeof device, NULL, NULL, &err);
    }
    stream_stats st;
    const long long warm = 2LL * eo.slots;
    timeline tl = {NULL, "", warm, eo.slots, 0};
    if (timeline_path) {
        if (rt_atomic_begin_mode(timeline_path, tl.tmp, sizeof tl.tmp, mode, &err)) {
            status = cli_fail(&err);
            goto out;
        }
        tl.f = fopen(tl.tmp, "w");
        if (!tl.f) {
            status = cli_error(EXIT_PROCESSING, "cannot create '%s' (as '%s'): %s", timeline_path,
                               tl.tmp, strerror(errno));
            rt_atomic_abort(tl.tmp);
            goto out;
        }
        fprintf(tl.f, "cpi,slot,submit_ms,done_ms,latency_ms");
        for (int i = 0; i < STAP_STAGE_COUNT; i++) fprintf(tl.f, ",%s_ms", stap_stage_names[i]);
        fputc('\n', tl.f);
    }
    if (rec && cpi_reader_start(&reader, rec, eng, warm + cpis, eo.slots + 2, &err)) {
        status = cli_fail(&err);
        if (tl.f) {
            fclose(tl.f);
            rt_atomic_abort(tl.tmp);
        }
        goto out;
    }
    double t_run = la_now_ms();
    mem.gpu = cfg->backend == LA_BACKEND_GPU || cfg->backend == LA_BACKEND_CUBLAS;
    stream_sinks sinks = {&tl, &mem};
    stream_sink_fn sink = tl.f || mem_every ? stream_sink : NULL;
    cli_graceful_begin(); /* SIGINT/SIGTERM: finish the CPIs in flight, report them */
    int sr = rec ? stream_run(eng, warm, cpis, cpi_reader_get_fn, cpi_reader_release_fn, reader,
                              sink, &sinks, deadline, !quiet && isatty(2), &st, &err)
                 : stream_run(eng, warm, cpis, stream_ring_source, NULL, &ring, sink, &sinks,
                              deadline, !quiet && isatty(2), &st, &err);
    cli_graceful_end();
    if (stap_engine_moved_to_cpu(eng) >= 0) /* said once, as it ends */
        fprintf(stderr, "rtstap: warning: %s\n", stap_engine_note(eng));
    if (!sr && st.stopped_by) {
        fprintf(stderr, "rtstap: stream stopped by %s after %lld CPIs (%lld timed)\n",
                st.stopped_by == SIGINT ? "SIGINT" : "SIGTERM", st.cpis_run, st.cpis);
        status = 128 + st.stopped_by;
    }
    if (!sr && mem_every) mem_sample(&mem, st.cpis_run); /* the state at the end */
    if (tl.f) { /* published when the stream ran (or stopped cleanly), else removed */
        errno = 0;
        const int bad = ferror(tl.f) || fflush(tl.f) != 0;
        const int e = errno;
        if ((fclose(tl.f) != 0 || bad) && !sr)
            sr = rt_fail(&err, RT_EIO, "cannot write '%s': %s", timeline_path,
                         e ? strerror(e) : errno ? strerror(errno) : "write error");
        if (sr) rt_atomic_abort(tl.tmp);
        else sr = rt_atomic_commit_mode(tl.tmp, timeline_path, mode, &err);
        tl.f = NULL;
    }
    if (sr) {
        status = cli_fail(&err);
        goto out;
    }
    t_run = la_now_ms() - t_run;
    double read_s = 0, wait_s = 0;
    if (reader) cpi_reader_times(reader, &read_s, &wait_s);
    const size_t rss2 = stream_rss_bytes();
    const int B = stap_engine_beams(eng);
    const double in_bytes = sizeof(cf32) * (double)cube_len;
    const double out_bytes = (eo.keep_weights ? sizeof(cf32) * (double)stap_weights_count(cfg, B) : 0) +
                             (eo.keep_output ? sizeof(cf32) * (double)stap_output_count(cfg, B) : 0);
    const double in_gbs = in_bytes * st.cpis_per_s / 1e9, out_gbs = out_bytes * st.cpis_per_s / 1e9;
    const double dev_mb = stap_engine_memory_bytes(eng) / 1e6;
    if (!quiet) {
        char wb[64], ab[48];
        fprintf(stderr,
                "rtstap stream: %s (C=%d P=%d R=%d D=%d Q=%d S=%d K=%d%s B=%d%s), backend %s\n"
                "  engine: %s\n  device: %s\n  host: ",
                w.name, cfg->channels, cfg->pulses, cfg->range_gates, cfg->doppler_bins,
                cfg->doppler_order, cfg->segments, cfg->training, cli_window_str(cfg, wb, sizeof wb),
                B, cli_algorithm_str(cfg, ab, sizeof ab), la_backend_name(cfg->backend),
                stap_engine_describe(eng), device);
        stream_print_platform(stderr, threads);
        fprintf(stderr, "  CPIs: %lld (after %d warm-up) in %.3f s: %.1f CPIs/s\n", st.cpis,
                2 * eo.slots, st.seconds, st.cpis_per_s);
        fprintf(stderr, "  latency ms: min %.3f  p50 %.3f  p99 %.3f  max %.3f", st.lat_min,
                st.lat_p50, st.lat_p99, st.lat_max);
        if (deadline > 0) fprintf(stderr, "; deadline %g ms: %lld missed", deadline, st.deadline_misses);
        fputc('\n', stderr);
        fprintf(stderr, "  copy: in %.2f GB/s (%.1f MB per CPI), out %.2f GB/s (%.2f MB per CPI)",
                in_gbs, in_bytes / 1e6, out_gbs, out_bytes / 1e6);
        if (have_link)
            fprintf(stderr, "; link %.1f / %.1f GB/s (pinned): in at %.0f%% of it", h2d, d2h,
                    100 * in_gbs / h2d);
        fputc('\n', stderr);
        fprintf(stderr, "  detections: %.2f per CPI\n", st.detections_per_cpi);
        if (rec)
            fprintf(stderr, "  reading: %.2f GB/s of CPIs from the file vs %.2f GB/s plain sequential "
                    "read (%.0f%%); the reader read %.0f%% of the time: %s limits the stream\n",
                    in_gbs, plain_gbs, plain_gbs > 0 ? 100 * in_gbs / plain_gbs : 0,
                    100 * read_s / (t_run * 1e-3), read_s > 0.8 * t_run * 1e-3 ? "reading" : "compute");
        fprintf(stderr, "  memory: engine %.1f MB %s; host RSS %.1f MB at start, %.1f MB with "
                "the ring, %.1f MB at the end\n", dev_mb,
                cfg->backend == LA_BACKEND_GPU || cfg->backend == LA_BACKEND_CUBLAS ? "on the device" : "on the host",
                rss0 / 1e6, rss1 / 1e6, rss2 / 1e6);
        if (mem.count > 0) {
            double hmax = 0, dmax = 0;
            for (long long i = 0; i < mem.count; i++) {
                if (mem.host_mb[i] > hmax) hmax = mem.host_mb[i];
                if (mem.dev_mb[i] > dmax) dmax = mem.dev_mb[i];
            }
            const long long l = mem.count - 1;
            fprintf(stderr, "  memory samples (%lld, every %d CPIs): host RSS %.1f MB at CPI %lld, "
                    "%.1f MB at CPI %lld, largest %.1f MB", mem.count, mem_every, mem.host_mb[0],
                    mem.cpi[0], mem.host_mb[l], mem.cpi[l], hmax);
            if (mem.gpu)
                fprintf(stderr, "; device in use %.1f MB, %.1f MB, largest %.1f MB",
                        mem.dev_mb[0], mem.dev_mb[l], dmax);
            fputc('\n', stderr);
        }
    }
    if (json) {
        doc = stream_json_report("stream");
        cJSON_AddStringToObject(doc, "workload", w.name);
        cJSON_AddStringToObject(doc, "backend", la_backend_name(cfg->backend));
        cJSON_AddStringToObject(doc, "engine", stap_engine_describe(eng));
        cJSON_AddStringToObject(doc, "device", device);
        cJSON_AddNumberToObject(doc, "slots", eo.slots);
        cJSON_AddNumberToObject(doc, "ring", ring_n);
        cJSON_AddBoolToObject(doc, "keep_weights", eo.keep_weights);
        cJSON_AddBoolToObject(doc, "keep_output", eo.keep_output);
        stream_json_stats(doc, &st);
        stream_json_platform(doc, threads);
        if (deadline > 0) cJSON_AddNumberToObject(doc, "deadline_ms", deadline);
        cJSON_AddNumberToObject(doc, "copy_in_gbs", in_gbs);
        cJSON_AddNumberToObject(doc, "copy_out_gbs", out_gbs);
        if (have_link) {
            cJSON_AddNumberToObject(doc, "link_h2d_gbs", h2d);
            cJSON_AddNumberToObject(doc, "link_d2h_gbs", d2h);
        }
        cJSON_AddNumberToObject(doc, "engine_memory_mb", dev_mb);
        if (rec) {
            cJSON_AddStringToObject(doc, "input", input);
            cJSON_AddNumberToObject(doc, "plain_read_gbs", plain_gbs);
            cJSON_AddNumberToObject(doc, "reader_busy_fraction", read_s / (t_run * 1e-3));
        }
        cJSON_AddNumberToObject(doc, "host_rss_mb_start", rss0 / 1e6);
        cJSON_AddNumberToObject(doc, "host_rss_mb_ring", rss1 / 1e6);
        cJSON_AddNumberToObject(doc, "host_rss_mb_end", rss2 / 1e6);
        if (st.stopped_by) cJSON_AddNumberToObject(doc, "stopped_by_signal", st.stopped_by);
        cJSON_AddNumberToObject(doc, "cpis_run", (double)st.cpis_run);
        if (mem.count > 0) {
            cJSON *arr = cJSON_AddArrayToObject(doc, "memory_samples");
            for (long long i = 0; arr && i < mem.count; i++) {
                cJSON *o = cJSON_CreateObject();
                cJSON_AddNumberToObject(o, "cpi", (double)mem.cpi[i]);
                cJSON_AddNumberToObject(o, "host_rss_mb", mem.host_mb[i]);
                if (mem.gpu) cJSON_AddNumberToObject(o, "device_used_mb", mem.dev_mb[i]);
                cJSON_AddItemToArray(arr, o);
            }
        }
        if (cli_json_write(json, doc, mode, &err)) status = cli_fail(&err);
    }
out:
    cpi_reader_stop(reader);
    stap_recording_close(rec);
    stap_input_free(&in);
    cJSON_Delete(doc);
    for (int k = 0; k < ring.count; k++) stap_engine_host_free(eng, ring.cube[k]);
    free(ring.cube);
    free(mem.cpi);
    free(mem.host_mb);
    free(mem.dev_mb);
    stap_engine_destroy(eng);
    workload_free(&w);
    return status;
}
