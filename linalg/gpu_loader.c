/* gpu_loader.c: linalg's GPU entry points in librtstap — each loads the GPU backends'
 * library (la_gpu_module.h) on first use and calls its implementation, or says why there is
 * none: built without CUDA, or the library not found or not loadable. librtstap itself
 * links no CUDA library. */
#include "la_gpu_module.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef RTSTAP_HAVE_CUDA
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <unistd.h>

static struct {
    pthread_once_t once;
    void *handle;
    const la_gpu_api *api;
    char path[4096];
    char why[768];
    long long hook_alloc, hook_trap; /* stap_la_gpu_test_hooks, handed on at the load */
} mod = {PTHREAD_ONCE_INIT, NULL, NULL, "", "", 0, 0};

static int try_open(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        /* the first reason that is not "no such file" is the one worth telling */
        if (!mod.why[0] || strstr(mod.why, "No such file"))
            snprintf(mod.why, sizeof mod.why, "%.760s", e ? e : path);
        return 0;
    }
    mod.handle = h;
    snprintf(mod.path, sizeof mod.path, "%s", path);
    return 1;
}

/* path of the folder holding the object this code was linked into, with '/' at the end:
 * librtstap.so's own file, or the program's (/proc/self/exe) when it was linked in
 * statically, since dladdr names the program by its argv[0] ("rtstap" when found on PATH) */
static int own_folder(char *buf, size_t len)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (!dladdr1((void *)own_folder, &info, (void **)&map, RTLD_DL_LINKMAP) || !map) return 0;
    char file[4096];
    if (map->l_name && map->l_name[0]) { /* a shared object: the name it was loaded by */
        if (snprintf(file, sizeof file, "%s", map->l_name) >= (int)sizeof file) return 0;
    } else { /* the program itself */
        const ssize_t n = readlink("/proc/self/exe", file, sizeof file - 1);
        if (n <= 0) return 0;
        file[n] = '\0';
    }
    const char *slash = strrchr(file, '/');
    if (!slash) return 0;
    const size_t n = (size_t)(slash - file) + 1;
    if (n >= len) return 0;
    memcpy(buf, file, n);
    buf[n] = '\0';
    return 1;
}

static void load(void)
{
    const char *name = RTSTAP_GPU_MODULE_NAME;
    char path[4096];
    const char *env = getenv("RTSTAP_GPU_LIBRARY");
    int ok = 0;
    if (env && env[0]) {
        ok = try_open(env);
        if (!ok) {
            char e[sizeof mod.why];
            snprintf(e, sizeof e, "%s", mod.why);
            snprintf(mod.why, sizeof mod.why, "RTSTAP_GPU_LIBRARY=%.200s: %.500s", env, e);
            return; /* the user's choice, no other */
        }
    }
    char dir[4000];
    if (!ok && own_folder(dir, sizeof dir)) {
        /* beside it (librtstap.so, or a program in the build tree), then the library folder
         * of an installed program (bin/../lib) */
        if (snprintf(path, sizeof path, "%s%s", dir, name) < (int)sizeof path) ok = try_open(path);
#ifdef RTSTAP_GPU_RELDIR
        if (!ok && snprintf(path, sizeof path, "%s%s/%s", dir, RTSTAP_GPU_RELDIR, name) <
                       (int)sizeof path)
            ok = try_open(path);
#endif
    }
    if (!ok) ok = try_open(name); /* loaded already, LD_LIBRARY_PATH, the run path, the cache */
#ifdef RTSTAP_GPU_LIBDIR
    if (!ok && snprintf(path, sizeof path, "%s/%s", RTSTAP_GPU_LIBDIR, name) < (int)sizeof path)
        ok = try_open(path);
#endif
    if (!ok) return;
    la_gpu_linalg_entry entry = (la_gpu_linalg_entry)dlsym(mod.handle, LA_GPU_LINALG_ENTRY);
    const la_gpu_api *api = entry ? entry(RTSTAP_GPU_ABI) : NULL;
    if (!api || api->size != sizeof *api) {
        snprintf(mod.why, sizeof mod.why, "%.600s is not the GPU library of this build of "
                 "rtstap %s (another version or ABI)", mod.path, RTSTAP_VERSION);
        dlclose(mod.handle);
        mod.handle = NULL;
        mod.path[0] = '\0';
        return;
    }
    mod.api = api;
    api->test_hooks(mod.hook_alloc, mod.hook_trap);
}

static const la_gpu_api *api(stap_error *err)
{
    pthread_once(&mod.once, load);
    if (mod.api) return mod.api;
    stap_fail(err, STAP_EUNSUPPORTED, "the GPU backends' library %s could not be loaded: %s",
              RTSTAP_GPU_MODULE_NAME, mod.why);
    return NULL;
}

void *stap_la_gpu_module_symbol(const char *name, stap_error *err)
{
    if (!api(err)) return NULL;
    void *s = dlsym(mod.handle, name);
    if (!s) stap_fail(err, STAP_EUNSUPPORTED, "%s has no %s", mod.path, name);
    return s;
}

const char *stap_la_gpu_module_path(void) { return mod.api ? mod.path : ""; }

void stap_la_gpu_test_hooks(long long fail_alloc_at, long long trap_at)
{
    mod.hook_alloc = fail_alloc_at;
    mod.hook_trap = trap_at;
    if (mod.api) mod.api->test_hooks(fail_alloc_at, trap_at);
}

#else /* built without CUDA: the same entry points, each saying so */

static const la_gpu_api *api(stap_error *err)
{
    stap_fail(err, STAP_EUNSUPPORTED, "rtstap was built without CUDA support");
    return NULL;
}

void *stap_la_gpu_module_symbol(const char *name, stap_error *err)
{
    (void)name;
    api(err);
    return NULL;
}

const char *stap_la_gpu_module_path(void) { return ""; }

void stap_la_gpu_test_hooks(long long fail_alloc_at, long long trap_at)
{
    (void)fail_alloc_at;
    (void)trap_at;
}

#endif

int stap_la_gpu_probe(stap_error *err)
{
    const la_gpu_api *a = api(err);
    return a ? a->probe(err) : STAP_EUNSUPPORTED;
}
const char *stap_la_gpu_library(void) { return stap_la_gpu_module_path(); }
int stap_la_gpu_count(int *devices, stap_error *err)
{
    *devices = 0;
    const la_gpu_api *a = api(err);
    return a ? a->count(devices, err) : STAP_EUNSUPPORTED;
}
int stap_la_gpu_select(int device, stap_error *err)
{
    const la_gpu_api *a = api(err);
    return a ? a->select(device, err) : STAP_EUNSUPPORTED;
}
int stap_la_gpu_init(stap_la_ctx *ctx, stap_error *err)
{
    const la_gpu_api *a = api(err);
    return a ? a->init(ctx, err) : STAP_EUNSUPPORTED;
}
void stap_la_gpu_fini(stap_la_ctx *ctx)
{
    const la_gpu_api *a = ctx->gpu ? api(NULL) : NULL; /* state only if the library made it */
    if (a) a->fini(ctx);
}
int stap_la_gpu_qr(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda, ptrdiff_t stride_a,
              stap_error *err)
{
    const la_gpu_api *a = api(err);
    return a ? a->qr(ctx, m, n, batch, A, lda, stride_a, err) : STAP_EUNSUPPORTED;
}
int stap_la_gpu_weights(stap_la_ctx *ctx, int n, int batch, const stap_cf32 *R, int ldr, ptrdiff_t stride_r,
                   int nbeams, const stap_cf32 *V, stap_cf32 *W, stap_error *err)
{
    const la_gpu_api *a = api(err);
    return a ? a->weights(ctx, n, batch, R, ldr, stride_r, nbeams, V, W, err) : STAP_EUNSUPPORTED;
}
int stap_la_gpu_adaptive_weights(stap_la_ctx *ctx, int m, int n, int batch, stap_cf32 *A, int lda,
                            ptrdiff_t stride_a, int nbeams, const stap_cf32 *V, stap_cf32 *W,
                            stap_la_timing *timing, stap_error *err)
{
    const la_gpu_api *a = api(err);
    return a ? a->adaptive_weights(ctx, m, n, batch, A, lda, stride_a, nbeams, V, W, timing, err)
             : STAP_EUNSUPPORTED;
}
int stap_la_gpu_bench_qr(stap_la_ctx *ctx, int m, int n, int batch, const stap_cf32 *sets, int nsets,
                    int repeat, int with_weights, int nbeams, const stap_cf32 *V,
                    double *median_us, stap_cf32 *R_out, stap_error *err)
{
    const la_gpu_api *a = api(err);
    return a ? a->bench_qr(ctx, m, n, batch, sets, nsets, repeat, with_weights, nbeams, V,
                           median_us, R_out, err)
             : STAP_EUNSUPPORTED;
}
int stap_la_gpu_variant_count(void)
{
    const la_gpu_api *a = api(NULL);
    return a ? a->variant_count() : 0;
}
int stap_la_gpu_variant_query(int v, int m, int n, int batch, int nbeams, stap_la_gpu_variant *out,
                              stap_error *err)
{
    const la_gpu_api *a = api(err);
    return a ? a->variant_query(v, m, n, batch, nbeams, out, err) : STAP_EUNSUPPORTED;
}
int stap_la_gpu_variant_choice(int m, int n, int batch, int nbeams, const stap_la_tuning *t, int *v, int *separate,
                               stap_error *err)
{
    const la_gpu_api *a = api(err);
    return a ? a->variant_choice(m, n, batch, nbeams, t, v, separate, err) : STAP_EUNSUPPORTED;
}
int stap_la_gpu_force_variant(stap_la_ctx *ctx, int v, stap_error *err)
{
    const la_gpu_api *a = api(err);
    return a ? a->force_variant(ctx, v, err) : STAP_EUNSUPPORTED;
}
int stap_la_gpu_force_plan(stap_la_ctx *ctx, int v, int separate, stap_error *err)
{
    const la_gpu_api *a = api(err);
    return a ? a->force_plan(ctx, v, separate, err) : STAP_EUNSUPPORTED;
}

#include "la_device.h"
int stap_la_dev_weights_materializes(stap_backend backend, int variant, const stap_la_tuning *tune, int m, int n,
                                     int batch, int nbeams)
{
    const la_gpu_api *a = api(NULL);
    return a ? a->dev_weights_materializes(backend, variant, tune, m, n, batch, nbeams) : 1;
}
