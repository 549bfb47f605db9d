/* engine.c: what every STAP engine shares (engine.h) — configuration, window and
 * steering, slot bookkeeping and the choice of implementation, made once at create. */
#include "algorithm_stages.h"
#include "engine_internal.h"
#include "gpu_module.h"
#include "la_device.h"
#include "la_gpu_module.h"
#include "testing.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>


void stap_engine_options_defaults(stap_engine_options *o)
{
    memset(o, 0, sizeof *o);
    o->slots = 2;
    o->keep_weights = 1;
    o->keep_output = 0;
    stap_cfar_defaults(&o->cfar);
    o->graphs = 1;
    o->qr_variant = -1;
    o->input = (stap_sample_format){.type = STAP_SAMPLES_CF32, .scale = 1.0};
}

size_t stap_weights_count(const stap_config *c, int beams)
{
    return (size_t)c->doppler_bins * c->segments * beams * stap_dof(c);
}
size_t stap_output_count(const stap_config *c, int beams)
{
    return (size_t)beams * c->doppler_bins * c->range_gates;
}

void stap_engine_destroy(stap_engine *e)
{
    if (!e) return;
    if (e->ops && e->impl) e->ops->destroy(e);
    free(e->win);
    free(e->V);
    stap_algo_tables_free(&e->tables);
    free(e->cells);
    free(e->conv);
    free(e);
}

/* ---- memory: estimate, availability, check --------------------------------------- */

static int is_gpu_backend(stap_backend b) { return b == STAP_BACKEND_GPU || b == STAP_BACKEND_CUBLAS; }

int stap_engine_tuning_check(const stap_engine_tuning *t, stap_error *err)
{
    if (t->doppler_one_kernel < -1 || t->doppler_one_kernel > 1)
        return stap_fail(err, STAP_EINVAL, "tuning doppler_one_kernel %d: expected -1, 0 or 1",
                         t->doppler_one_kernel);
    if (t->doppler_tile != 0 && t->doppler_tile != 32)
        return stap_fail(err, STAP_EINVAL, "tuning doppler_tile %d: expected 0 or 32", t->doppler_tile);
    if (t->apply_kernel < 0 || t->apply_kernel > 2)
        return stap_fail(err, STAP_EINVAL, "tuning apply_kernel %d: expected 0 (dispatched), 1 (rows) "
                         "or 2 (FP32)", t->apply_kernel);
    if ((t->apply_cfar_apart | t->cfar.two_pass) & ~1)
        return stap_fail(err, STAP_EINVAL, "tuning apply_cfar_apart and cfar.two_pass are 0 or 1");
    const int tpl = t->cfar.line_threads;
    if (tpl && tpl != 32 && tpl != 64 && tpl != 128)
        return stap_fail(err, STAP_EINVAL, "tuning cfar.line_threads %d: expected 0, 32, 64 or 128", tpl);
    return stap_la_tuning_check(&t->la, err);
}

size_t stap_engine_hit_capacity(const stap_config *c, int B, const stap_engine_options *o)
{
    if (o->cfar.kind == STAP_CFAR_NONE) return 0;
    const size_t cells = stap_output_count(c, B);
    double cap = o->hit_capacity ? (double)o->hit_capacity : 16.0 * (double)cells * o->cfar.pfa;
    if (!o->hit_capacity && cap < 65536) cap = 65536;
    return cap < (double)cells ? (size_t)cap : cells;
}

/* cfg validated, backend resolved; B beams */
static void estimate_resolved(const stap_config *c, int B, const stap_engine_options *o,
                              size_t *host, size_t *dev)
{
    const size_t C = c->channels, P = c->pulses, R = c->range_gates, D = c->doppler_bins;
    const size_t N = stap_dof(c), M = stap_training_rows(c), batch = D * c->segments;
    const size_t Nt = stap_adaptive_dof(c), mats = (size_t)stap_training_matrices(c);
    const size_t z = sizeof(stap_cf32), slots = (size_t)o->slots;
    const size_t nw = stap_weights_count(c, B), ny = stap_output_count(c, B);
    const unsigned tr = stap_algorithm_traits(c);
    const int sub = (tr & STAP_TRAIT_SUBCPI) != 0, beamspace = (tr & STAP_TRAIT_BEAMSPACE) != 0;
    /* sub-CPI: Q staggered cubes; the solve steering (D*B or B vectors) */
    const size_t X = z * C * D * R * (sub ? (size_t)c->doppler_order : 1), T = z * mats * M * Nt;
    const size_t Vs = sub ? z * N * B * (tr & STAP_TRAIT_STEER_PER_BIN ? D : 1) : 0;
    const int cfar = o->cfar.kind != STAP_CFAR_NONE;
    const size_t prefix =
        stap_cfar_uses_prefix(o->cfar.kind) ? sizeof(double) * B * D * (R + 1) : 0;
    const size_t hit_cap = stap_engine_hit_capacity(c, B, o);
    const size_t hit = 24; /* rtk_cfar_hit / stap_cfar_hit */
    /* integer input: the host's complex64 cube (engine.c) and, on the GPU, each slot's
     * cube as stored */
    const int as_stored = !stap_sample_format_is_native(&o->input);
    const size_t base = sizeof(float) * P + z * B * N + Vs + sizeof(int) * c->segments * c->training +
                        (as_stored ? z * C * P * R : 0);
    if (is_gpu_backend(c->backend)) {
        /* the training matrices are materialized only by cuBLAS and for shapes that no
         * gathering QR kernel takes or whose plan runs the QR alone (JDL: one beam a solve) */
        const int solve_beams = beamspace ? 1 : B;
        const int cholesky = c->backend == STAP_BACKEND_GPU && (c->qr == STAP_QR_CHOLQR || c->qr == STAP_QR_CHOLQR2);
        const size_t Tm = sub || cholesky ||
                                  stap_la_dev_weights_materializes(c->backend, o->qr_variant, &o->tuning.la, (int)M,
                                                                   (int)Nt, (int)mats, solve_beams)
                              ? T : 0;
        /* the adaptive detectors: the R factors a fused solve keeps (materialized: in T) */
        const size_t Rk = stap_cfar_is_adaptive(o->cfar.kind) && !Tm ? z * mats * Nt * Nt : 0;
        /* beamspace (JDL): every beam's beamspace cube (Nt / Q "channels") and weights */
        const size_t jdl = beamspace ? z * B * D * (Nt / c->doppler_order) * R + z * B * batch * Nt
                                     : 0;
        size_t per = z * C * P * R + (as_stored ? stap_sample_bytes(&o->input) * C * P * R : 0) +
                     X + z * nw + z * ny + 256 + prefix + hit * hit_cap +
                     X /* cuFFT work, at most about the transform's size */ + Tm + Rk + jdl;
        if (o->apply_gemm) per += z * nw + sizeof(void *) * 3 * (sub ? 1 : c->doppler_order) * batch;
        /* the cuBLAS solver's pointer arrays (geqrf: 2 per matrix; trsm: 2 per item) and tau */
        if (c->backend == STAP_BACKEND_CUBLAS)
            per += sizeof(void *) * 2 * (mats + batch * (beamspace ? B : 1)) +
                   z * mats * Nt;
        *dev = base + slots * per;
        size_t hper = 256 + (o->keep_weights ? z * nw : 0) + (o->keep_output ? z * ny : 0) +
                      hit * hit_cap + (cfar ? sizeof(stap_detection) * hit_cap : 0);
        *host = base + slots * hper;
    } else {
        const size_t threads = c->threads > 0 ? (size_t)c->threads : 64;
        size_t per = z * nw + z * ny + (cfar ? sizeof(stap_detection) * hit_cap : 0);
        /* JDL's beamspace weights; the sub-CPI solves' weights before their reordering */
        const size_t jdl_wt = stap_engine_needs_wt(c) ? z * B * batch * Nt : 0;
        /* per thread: the apply's conjugated weights of a tap (C*Q channels for sub-CPI) */
        const size_t wc = threads * z * B * C * (sub ? (size_t)c->doppler_order : 1);
        *host = base + 2 * X /* Doppler cube, FFTW's plan */ + T + jdl_wt + wc +
                (cfar ? prefix + sizeof(stap_detection) * hit_cap : 0) + slots * per;
        *dev = 0;
    }
}

int stap_engine_estimate(const stap_config *cfg_in, int nbeams, int steering_len,
                         const stap_engine_options *opt, size_t *host, size_t *dev, stap_error *err)
{
    stap_config cfg = *cfg_in;
    int st = stap_config_validate(&cfg, nbeams > 0, nbeams, nbeams > 0 ? steering_len : 0, err);
    if (st) return st;
    if (cfg.backend == STAP_BACKEND_AUTO) {
        stap_error probe;
        cfg.backend = stap_backend_available(STAP_BACKEND_GPU, &probe) == STAP_OK ? STAP_BACKEND_GPU
                                                                            : STAP_BACKEND_CPU;
    }
    estimate_resolved(&cfg, cfg.beams, opt, host, dev);
    return STAP_OK;
}

/* a number from the first line of a file ("max" = unlimited: 0 returned) */
static int read_first_number(const char *path, unsigned long long *v)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[64] = {0};
    int ok = fgets(line, sizeof line, f) != NULL && sscanf(line, "%llu", v) == 1;
    fclose(f);
    return ok;
}

int stap_memory_available(size_t *host, const char **src, stap_error *err)
{
    unsigned long long avail = 0;
    *src = "MemAvailable";
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[128];
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %llu kB", &avail) == 1) {
                avail *= 1024;
                break;
            }
        fclose(f);
    }
    if (!avail) { /* no /proc: physical pages available */
        long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        avail = pages > 0 && psz > 0 ? (unsigned long long)pages * (unsigned long long)psz : ~0ULL;
        *src = "available physical pages";
    }
    /* a cgroup v2 limit (containers, systemd slices) */
    f = fopen("/proc/self/cgroup", "r");
    if (f) {
        char line[512], path[600];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "0::", 3)) continue;
            line[strcspn(line, "\n")] = 0;
            unsigned long long max = 0, cur = 0;
            snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", line + 3);
            if (read_first_number(path, &max)) {
                snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.current", line + 3);
                if (!read_first_number(path, &cur)) cur = 0;
                const unsigned long long left = max > cur ? max - cur : 0;
                if (left < avail) {
                    avail = left;
                    *src = "the cgroup's memory.max";
                }
            }
            break;
        }
        fclose(f);
    }
    (void)err;
    *host = (size_t)avail;
    return STAP_OK;
}

static double gb(size_t b) { return (double)b / 1e9; }

/* which: 1 = host short, 2 = device short */
static int check_memory_resolved(const stap_config *cfg, const stap_engine_options *opt,
                                 int *which, stap_error *err)
{
    size_t host, dev, avail;
    const char *src;
    *which = 0;
    estimate_resolved(cfg, cfg->beams, opt, &host, &dev);
    int st = stap_memory_available(&avail, &src, err);
    if (st) return st;
    if (opt->host_limit && opt->host_limit < avail) {
        avail = opt->host_limit;
        src = opt->host_limit_name ? opt->host_limit_name : "the engine options' host_limit";
    }
    /* the caller's copies of a CPI's detections (its writer's queue), at the hit capacity */
    const size_t queued = opt->host_reserve + (size_t)(opt->detection_copies > 0 ? opt->detection_copies : 0) *
                                                  stap_engine_hit_capacity(cfg, cfg->beams, opt) *
                                                  sizeof(stap_detection);
    const size_t need = host + queued;
    if (need > avail) {
        *which = 1;
        return stap_fail(err, STAP_ENOMEM, "the run needs about %.3g GB of host memory (engine %.3g "
                         "GB, cubes and queues %.3g GB) but %.3g GB are available (%s)",
                         gb(need), gb(host), gb(queued), gb(avail), src);
    }
    if (!is_gpu_backend(cfg->backend)) return STAP_OK;
    char name[128] = "the GPU";
    size_t dfree = 0, dtotal = 0;
    if ((st = stap_gpu_info(name, sizeof name, &dfree, &dtotal, err))) {
        *which = 2;
        return st;
    }
    const char *dsrc = "free";
    char dlim[160];
    if (opt->device_limit && opt->device_limit < dfree) {
        dfree = opt->device_limit;
        snprintf(dlim, sizeof dlim, "allowed by %s",
                 opt->device_limit_name ? opt->device_limit_name : "the engine options' device_limit");
        dsrc = dlim;
    }
    if (dev > dfree) {
        *which = 2;
        return stap_fail(err, STAP_ENOMEM, "the run needs about %.3g GB of device memory but %.3g GB "
                         "are %s on %s", gb(dev), gb(dfree), dsrc, name);
    }
    return STAP_OK;
}

int stap_engine_check_memory(const stap_config *cfg_in, int nbeams, int steering_len,
                             const stap_engine_options *opt, stap_error *err)
{
    stap_config cfg = *cfg_in;
    int which;
    int st = stap_config_validate(&cfg, nbeams > 0, nbeams, nbeams > 0 ? steering_len : 0, err);
    if (st) return st;
    if (cfg.backend == STAP_BACKEND_AUTO) cfg.backend = STAP_BACKEND_CPU; /* the host only */
    return check_memory_resolved(&cfg, opt, &which, err);
}

/* ---- create ------------------------------------------------------------------------ */

static int create_resolved(stap_engine **out, const stap_config *cfg, const stap_cf32 *steering,
                           const stap_engine_options *opt, stap_error *err)
{
    stap_engine *e = calloc(1, sizeof *e);
    if (!e) return stap_fail(err, STAP_ENOMEM, "out of memory creating the STAP engine");
    e->cfg = *cfg;
    e->opt = *opt;
    e->N = stap_dof(cfg);
    e->Nt = stap_adaptive_dof(cfg);
    e->M = stap_training_rows(cfg);
    e->L = cfg->range_gates / cfg->segments;
    e->B = cfg->beams;
    e->batch = cfg->doppler_bins * cfg->segments;
    e->win = calloc((size_t)cfg->pulses, sizeof(float)); /* stap_window_len(cfg) used */
    e->V = malloc(sizeof(stap_cf32) * (size_t)e->B * e->N);
    e->cells = malloc(sizeof(int) * (size_t)cfg->segments * cfg->training);
    /* integer samples: the cube the CPU engine computes from (a GPU engine may move to the
     * CPU in the middle of a run, so every engine made for them holds it) */
    const int as_stored = !stap_sample_format_is_native(&opt->input);
    if (as_stored)
        e->conv = malloc(sizeof(stap_cf32) * (size_t)cfg->channels * cfg->pulses * cfg->range_gates);
    if (!e->win || !e->V || !e->cells || (as_stored && !e->conv)) {
        stap_engine_destroy(e);
        return stap_fail(err, STAP_ENOMEM, "out of memory for the window, steering vectors and "
                         "training-cell table");
    }
    for (int s = 0; s < cfg->segments; s++)
        stap_training_cells(cfg, s, e->cells + (size_t)s * cfg->training);
    int st = stap_window(cfg, e->win, err);
    if (st) {
        stap_engine_destroy(e);
        return st;
    }
    if (steering) memcpy(e->V, steering, sizeof(stap_cf32) * (size_t)e->B * e->N);
    else stap_default_steering(cfg, e->V);
    e->custom_steering = steering != NULL;
    const stap_algo_stages *al = stap_algo_stages_of(cfg);
    if (al->prepare && (st = al->prepare(e, err))) {
        stap_engine_destroy(e);
        return st;
    }

    switch (cfg->backend) {
    case STAP_BACKEND_CPU:
    case STAP_BACKEND_LAPACK: e->ops = &stap_engine_cpu_ops; break;
    case STAP_BACKEND_GPU:
    case STAP_BACKEND_CUBLAS: { /* the GPU backends' library, loaded on first use */
        const stap_gpu_api *gpu = stap_gpu_api_get(err);
        if (!gpu) {
            stap_engine_destroy(e);
            return STAP_EUNSUPPORTED;
        }
        e->ops = gpu->engine;
        break;
    }
    default:
        stap_engine_destroy(e);
        return stap_fail(err, STAP_EUNSUPPORTED, "no engine for backend %s",
                         stap_backend_name(cfg->backend));
    }
    if ((st = e->ops->create(e, err))) {
        stap_engine_destroy(e);
        return st;
    }
    e->host_ops = e->ops;
    e->moved_at = -1;
    stap_error ignore;
    if (!is_gpu_backend(cfg->backend) ||
        stap_gpu_info(e->device, sizeof e->device, NULL, NULL, &ignore) != STAP_OK) {
        stap_la_blas_info bi;
        stap_la_blas_query(&bi);
        snprintf(e->device, sizeof e->device, "%s", bi.cpu_model);
    }
    *out = e;
    return STAP_OK;
}

int stap_engine_create(stap_engine **out, const stap_config *cfg_in, const stap_cf32 *steering,
                       int nbeams, int steering_len, const stap_engine_options *opt, stap_error *err)
{
    *out = NULL;
    stap_config cfg = *cfg_in;
    /* the caller's array width, not the width the configuration expects: a narrower array
     * would be read past its end (issue 10) */
    int st = stap_config_validate(&cfg, steering != NULL, nbeams, steering ? steering_len : 0, err);
    if (st) return st;
    if (opt->slots < 1 || opt->slots > STAP_ENGINE_MAX_SLOTS)
        return stap_fail(err, STAP_EINVAL, "slots %d must be between 1 and %d", opt->slots,
                         STAP_ENGINE_MAX_SLOTS);
    if ((st = stap_sample_format_validate(&opt->input, err)))
        return stap_error_prefix(err, "the engine's input format");
    if ((st = stap_engine_tuning_check(&opt->tuning, err))) return st;
    if (opt->cfar.kind != STAP_CFAR_NONE &&
        (st = stap_cfar_validate(&opt->cfar, cfg.doppler_bins, cfg.range_gates, err)))
        return st;
    const int adaptive = stap_cfar_is_adaptive(opt->cfar.kind);
    if (adaptive && (st = stap_detector_check(&opt->cfar, &cfg, err))) return st;
    const int auto_backend = cfg.backend == STAP_BACKEND_AUTO;
    if (auto_backend) {
        stap_error probe;
        cfg.backend = stap_backend_available(STAP_BACKEND_GPU, &probe) == STAP_OK ? STAP_BACKEND_GPU
                                                                            : STAP_BACKEND_CPU;
    }
    /* the adaptive detectors run on every backend where stap_detector_check passes them
     * (post-Doppler, JDL); the GPU engine refuses a shape its detector kernel cannot hold
     * (engine_gpu.cu: R and the beams' R^-H v in shared memory), and AUTO then runs on the CPU */
    char note[sizeof((stap_engine *)0)->note] = "";
    const int cholesky = cfg.qr == STAP_QR_CHOLQR2 || cfg.qr == STAP_QR_CHOLQR;
    if ((st = stap_backend_available(cfg.backend, err))) return st;
    if (cholesky && cfg.backend != STAP_BACKEND_CPU && cfg.backend != STAP_BACKEND_GPU)
        return stap_fail(err, STAP_EUNSUPPORTED, "stap_config.qr %s runs on the cpu and gpu backends only "
                         "(backend %s factors by Householder)", stap_qr_method_name(cfg.qr),
                         stap_backend_name(cfg.backend));
    if (opt->resident && !is_gpu_backend(cfg.backend))
        return stap_fail(err, STAP_EINVAL, "stap_engine_options.resident needs a GPU backend (the %s "
                         "engine computes from host memory)", stap_backend_name(cfg.backend));
    int which = 0;
    st = check_memory_resolved(&cfg, opt, &which, err);
    if (st && auto_backend && which == 2 && !opt->resident) {
        snprintf(note, sizeof note, "running on the CPU: %.440s", err->msg);
        cfg.backend = STAP_BACKEND_CPU;
        st = check_memory_resolved(&cfg, opt, &which, err);
    }
    if (st) return st;
    st = create_resolved(out, &cfg, steering, opt, err);
    if (st && auto_backend && is_gpu_backend(cfg.backend) && !opt->resident) {
        /* the device failed us (an allocation, a plan, a CUDA call): the CPU can still run */
        snprintf(note, sizeof note, "running on the CPU: the GPU engine could not be made (%.400s)",
                 err->msg);
        cfg.backend = STAP_BACKEND_CPU;
        stap_error_clear(err);
        st = check_memory_resolved(&cfg, opt, &which, err);
        if (!st) st = create_resolved(out, &cfg, steering, opt, err);
    }
    if (st) return st;
    snprintf((*out)->note, sizeof (*out)->note, "%s", note);
    (*out)->fallback = auto_backend && !opt->resident; /* (a resident cube has no host copy) */
    return STAP_OK;
}

/* The implementation's submit: the GPU takes the cube as stored; the CPU engine, computing
 * at submit, from its complex64 conversion. */
static int submit_to(stap_engine *e, int slot, const void *cube, stap_error *err)
{
    if (e->conv && e->ops == &stap_engine_cpu_ops) {
        stap_cube_to_cf32(&e->opt.input, cube, e->cfg.channels, e->cfg.pulses, e->cfg.range_gates,
                          e->conv);
        cube = e->conv;
    }
    return e->ops->submit(e, slot, cube, err);
}

size_t stap_engine_cube_bytes(const stap_engine *e) { return stap_engine_input_bytes(e); }

/* ---- a device fault in the middle of a run --------------------------------------------
 * An engine made with AUTO that meets a device error (STAP_EDEVICE: a failed launch or copy,
 * a context lost to a fault) after it was made moves to the CPU: its GPU implementation is
 * destroyed, the CPU's made in its place, and every CPI in flight submitted again, in the
 * order it came, from the caller's cubes (valid until their slot is collected: engine.h).
 * So no CPI is lost, repeated or reordered, and stap_engine_note says from which CPI on it
 * ran on the CPU. An engine made for a named backend reports the error instead. */
static int move_to_cpu(stap_engine *e, const stap_error *cause, stap_error *err)
{
    int order[STAP_ENGINE_MAX_SLOTS], n = 0;
    for (int s = 0; s < e->opt.slots; s++)
        if (e->busy[s]) order[n++] = s;
    for (int i = 1; i < n; i++) /* by submit order */
        for (int k = i; k > 0 && e->slot_cpi[order[k]] < e->slot_cpi[order[k - 1]]; k--) {
            const int t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    const long long first = n ? e->slot_cpi[order[0]] : e->next_cpi;
    char why[300];
    snprintf(why, sizeof why, "%.299s", cause->msg);
    e->ops->destroy(e);
    e->impl = NULL;
    const stap_backend from = e->cfg.backend;
    e->cfg.backend = STAP_BACKEND_CPU;
    e->ops = &stap_engine_cpu_ops;
    int st = e->ops->create(e, err);
    if (st) {
        e->ops = NULL; /* nothing left to run on: every later call fails */
        return stap_error_prefix(err, "%s failed at CPI %lld (%s), and the CPU engine could not be made",
                                 stap_backend_name(from), first, why);
    }
    stap_la_blas_info bi;
    stap_la_blas_query(&bi);
    snprintf(e->device, sizeof e->device, "%s", bi.cpu_model);
    e->moved_at = first;
    snprintf(e->note, sizeof e->note, "running on the CPU from CPI %lld on: the %s engine failed "
             "(%.380s)", first, stap_backend_name(from), why);
    for (int i = 0; i < n; i++)
        if ((st = submit_to(e, order[i], e->slot_cube[order[i]], err))) return st;
    return STAP_OK;
}

/* Test hooks (issue 29; include/rtstap/testing.h): stap_test_hooks.fail_collect = K makes the
 * K-th collect from then on (from 1) fail as a device fault would, on any backend, so that
 * the move to the CPU and a named backend's stop are tested without a GPU. */
static _Atomic long long fault_at = 0, fault_calls = 0;

void stap_test_hooks_set(const stap_test_hooks *h)
{
    const stap_test_hooks off = {0, 0, 0};
    if (!h) h = &off;
    fault_at = h->fail_collect;
    fault_calls = 0;
    stap_la_gpu_test_hooks(h->fail_device_alloc, h->device_trap);
}

static int injected_fault(stap_error *err)
{
    const long long at = fault_at;
    if (at <= 0 || ++fault_calls != at) return STAP_OK;
    return stap_fail(err, STAP_EDEVICE, "injected device fault (the test hook fail_collect = %lld)", at);
}

long long stap_engine_moved_to_cpu(const stap_engine *e) { return e->moved_at; }

const char *stap_engine_note(const stap_engine *e) { return e->note; }

static int check_slot(const stap_engine *e, int slot, stap_error *err)
{
    if (slot < 0 || slot >= e->opt.slots)
        return stap_fail(err, STAP_EINVAL, "slot %d out of range (engine has %d)", slot, e->opt.slots);
    return STAP_OK;
}

int stap_engine_submit(stap_engine *e, int slot, const void *cube, stap_error *err)
{
    int st = check_slot(e, slot, err);
    if (st) return st;
    if (e->busy[slot])
        return stap_fail(err, STAP_EINVAL, "slot %d still holds CPI %lld: collect it first", slot,
                         e->slot_cpi[slot]);
    if (!cube && !(e->opt.resident && e->slot_loaded[slot]))
        return stap_fail(err, STAP_EINVAL, e->opt.resident ? "slot %d holds no cube yet: submit one "
                         "before running it again from device memory" : "null cube", slot);
    if (!e->ops) return stap_fail(err, STAP_EDEVICE, "the engine failed earlier and has no backend");
    e->slot_cpi[slot] = e->next_cpi++;
    e->slot_cube[slot] = cube;
    st = submit_to(e, slot, cube, err);
    if (st == STAP_EDEVICE && e->fallback) {
        e->busy[slot] = 1; /* in flight: submitted again with the others */
        stap_error cause = *err;
        if ((st = move_to_cpu(e, &cause, err))) e->busy[slot] = 0;
        return st;
    }
    if (st) return st;
    e->busy[slot] = 1;
    e->slot_loaded[slot] = 1;
    return STAP_OK;
}

int stap_engine_collect(stap_engine *e, int slot, stap_cpi_result *res, stap_error *err)
{
    int st = check_slot(e, slot, err);
    if (st) return st;
    if (!e->busy[slot]) return stap_fail(err, STAP_EINVAL, "slot %d has no CPI to collect", slot);
    memset(res, 0, sizeof *res);
    res->cpi = e->slot_cpi[slot];
    if (!e->ops) {
        e->busy[slot] = 0;
        return stap_fail(err, STAP_EDEVICE, "the engine failed earlier and has no backend");
    }
    st = injected_fault(err);
    if (!st) st = e->ops->collect(e, slot, res, err);
    if (st == STAP_EDEVICE && e->fallback) {
        stap_error cause = *err;
        st = move_to_cpu(e, &cause, err);
        if (!st) {
            memset(res, 0, sizeof *res);
            res->cpi = e->slot_cpi[slot];
            st = e->ops->collect(e, slot, res, err);
        }
    }
    e->busy[slot] = 0;
    return st;
}

void *stap_engine_host_alloc(stap_engine *e, size_t bytes)
{
    return e->host_ops->host_alloc(e, bytes);
}
void stap_engine_host_free(stap_engine *e, void *p)
{
    if (p) e->host_ops->host_free(e, p);
}
const stap_config *stap_engine_config(const stap_engine *e) { return &e->cfg; }
int stap_engine_slots(const stap_engine *e) { return e->opt.slots; }
int stap_engine_beams(const stap_engine *e) { return e->B; }
const stap_cf32 *stap_engine_steering(const stap_engine *e) { return e->V; }
const stap_engine_options *stap_engine_options_of(const stap_engine *e) { return &e->opt; }
const char *stap_engine_describe(const stap_engine *e) { return e->describe; }
int stap_engine_threads(const stap_engine *e) { return e->threads; }
const char *stap_engine_device(const stap_engine *e) { return e->device; }
int stap_engine_custom_steering(const stap_engine *e) { return e->custom_steering; }
size_t stap_engine_memory_bytes(const stap_engine *e) { return e->ops ? e->ops->memory_bytes(e) : 0; }

int stap_engine_doppler(stap_engine *e, int slot, stap_cf32 *X, stap_error *err)
{
    int st = check_slot(e, slot, err);
    if (st) return st;
    if (!e->ops) return stap_fail(err, STAP_EDEVICE, "the engine failed earlier and has no backend");
    return e->ops->doppler(e, slot, X, err);
}

int stap_engine_fail_input(const stap_engine *e, unsigned long long flat, stap_error *err)
{
    const unsigned long long R = e->cfg.range_gates, P = e->cfg.pulses;
    return stap_fail(err, STAP_EFORMAT, "non-finite input sample at (channel %llu, pulse %llu, "
                     "range %llu)", flat / (P * R), (flat / R) % P, flat % R);
}

int stap_engine_fail_item(const stap_engine *e, int item, stap_error *err)
{
    if (stap_is_subcpi(&e->cfg)) /* the factor is the segment's: one for every bin */
        return stap_fail(err, STAP_ENUMERIC, "singular training data in segment %d (a zero or "
                         "non-finite diagonal of R: rank-deficient sub-CPI training, K < N "
                         "without loading?)", item % e->cfg.segments);
    return stap_fail(err, STAP_ENUMERIC, "singular training data at Doppler bin %d, segment %d "
                     "(a zero or non-finite diagonal of R: rank-deficient training, K < N "
                     "without loading?)", item / e->cfg.segments, item % e->cfg.segments);
}

double stap_engine_conditioning_limit(const stap_engine *e)
{
    return 10.0 * FLT_EPSILON * e->N;
}

int stap_engine_check_conditioning(const stap_engine *e, const stap_cpi_result *r, stap_error *err)
{
    const double limit = stap_engine_conditioning_limit(e);
    if (!(r->diag_ratio < limit)) return STAP_OK;
    if (stap_is_subcpi(&e->cfg))
        return stap_fail(err, STAP_ENUMERIC, "ill-conditioned training data in segment %d: "
                         "min|R_ii|/max|R_ii| = %.2g, below %.2g (10 eps N): the weights are "
                         "dominated by rounding", r->diag_ratio_item % e->cfg.segments,
                         (double)r->diag_ratio, limit);
    return stap_fail(err, STAP_ENUMERIC, "ill-conditioned training data at Doppler bin %d, segment "
                     "%d: min|R_ii|/max|R_ii| = %.2g, below %.2g (10 eps N): the weights are "
                     "dominated by rounding",
                     r->diag_ratio_item / e->cfg.segments, r->diag_ratio_item % e->cfg.segments,
                     (double)r->diag_ratio, limit);
}

int stap_engine_fail_weight(const stap_engine *e, unsigned long long flat, stap_error *err)
{
    const unsigned long long k = flat / ((unsigned long long)e->B * e->N);
    return stap_fail(err, STAP_ENUMERIC, "non-finite adaptive weight at Doppler bin %llu, segment "
                     "%llu, beam %llu", k / e->cfg.segments, k % e->cfg.segments,
                     (flat / e->N) % e->B);
}

