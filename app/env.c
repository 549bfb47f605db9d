/* env.c: the environment variables rtstap reads and hands on (env.h). */
#include "env.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rtstap/testing.h"

static const char *var(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* a byte count with an optional k/M/G/T suffix (powers of 1024) */
static int env_bytes(const char *name, size_t *out, stap_error *err)
{
    const char *s = var(name);
    *out = 0;
    if (!s) return STAP_OK;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    double mul = 1;
    if (*end == 'k' || *end == 'K') mul = 1024.0, end++;
    else if (*end == 'm' || *end == 'M') mul = 1048576.0, end++;
    else if (*end == 'g' || *end == 'G') mul = 1073741824.0, end++;
    else if (*end == 't' || *end == 'T') mul = 1099511627776.0, end++;
    if (end == s || *end || errno || !(v >= 0) || v * mul > 1.8e19)
        return stap_fail(err, STAP_EINVAL, "%s: expected a byte count such as 2000000 or 8G (got '%s')",
                         name, s);
    *out = (size_t)(v * mul);
    return STAP_OK;
}

/* a count K >= 0 (a test hook's call number) */
static int env_count(const char *name, long long *out, stap_error *err)
{
    const char *s = var(name);
    *out = 0;
    if (!s) return STAP_OK;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno || v < 0)
        return stap_fail(err, STAP_EINVAL, "%s: expected a call number >= 0 (got '%s')", name, s);
    *out = v;
    return STAP_OK;
}

/* one of `names` (index returned in *out, default `dflt` when unset) */
static int env_choice(const char *name, const char *const *names, int n, int dflt, int *out,
                      stap_error *err)
{
    const char *s = var(name);
    *out = dflt;
    if (!s) return STAP_OK;
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i])) {
            *out = i;
            return STAP_OK;
        }
    char list[160] = "";
    for (int i = 0; i < n; i++) {
        strncat(list, names[i], sizeof list - strlen(list) - 1);
        if (i + 1 < n) strncat(list, i + 2 == n ? " or " : ", ", sizeof list - strlen(list) - 1);
    }
    return stap_fail(err, STAP_EINVAL, "%s: expected %s (got '%s')", name, list, s);
}

int cli_env_process(stap_error *err)
{
    static const char *const kernels[] = {"auto", "portable"};
    int k, st = env_choice("RTSTAP_CPU_KERNELS", kernels, 2, 0, &k, err);
    if (st || (st = stap_la_cpu_kernels_select(kernels[k], err))) return st;
    stap_test_hooks h;
    if ((st = env_count("RTSTAP_TEST_FAIL_ENGINE", &h.fail_collect, err)) ||
        (st = env_count("RTSTAP_TEST_FAIL_DEVICE_ALLOC", &h.fail_device_alloc, err)) ||
        (st = env_count("RTSTAP_TEST_DEVICE_TRAP", &h.device_trap, err)))
        return st;
    stap_test_hooks_set(&h);
    return STAP_OK;
}

int cli_env_tuning(stap_engine_tuning *t, stap_error *err)
{
    static const char *const flag[] = {"0", "1"};
    static const char *const tiles[] = {"0", "32"};
    static const char *const threads[] = {"0", "32", "64", "128"};
    static const char *const dispatch[] = {"model", "table", "fused", "separate"};
    static const char *const solver[] = {"blocked", "subst"};
    int fused, tile, rows, fp32, apply_cfar, two, tpl, st;
    memset(t, 0, sizeof *t);
    if ((st = env_choice("RTSTAP_DOPPLER_FUSED", flag, 2, -1, &fused, err)) ||
        (st = env_choice("RTSTAP_DOPPLER_TILE", tiles, 2, 0, &tile, err)) ||
        (st = env_choice("RTSTAP_APPLY_ROWS", flag, 2, 0, &rows, err)) ||
        (st = env_choice("RTSTAP_APPLY_FP32", flag, 2, 0, &fp32, err)) ||
        (st = env_choice("RTSTAP_APPLY_CFAR", flag, 2, 1, &apply_cfar, err)) ||
        (st = env_choice("RTSTAP_CFAR_TWO_PASS", flag, 2, 0, &two, err)) ||
        (st = env_choice("RTSTAP_CFAR_LINE_THREADS", threads, 4, 0, &tpl, err)) ||
        (st = env_choice("RTSTAP_QR_DISPATCH", dispatch, 4, 0, &t->la.qr_dispatch, err)) ||
        (st = env_choice("RTSTAP_FUSED_SOLVER", solver, 2, 0, &t->la.fused_subst, err)))
        return st;
    t->doppler_one_kernel = fused == 1 ? 1 : fused == 0 ? -1 : 0;
    t->doppler_tile = tile ? 32 : 0;
    t->apply_kernel = rows ? 1 : fp32 ? 2 : 0; /* the row kernel first, as before */
    t->apply_cfar_apart = !apply_cfar;
    t->cfar.two_pass = two;
    t->cfar.line_threads = tpl ? 16 << tpl : 0;
    return STAP_OK;
}

int cli_env_engine_defaults(stap_engine_options *o, stap_error *err)
{
    stap_engine_options_defaults(o);
    int st;
    if ((st = env_bytes("RTSTAP_MEMORY_LIMIT", &o->host_limit, err)) ||
        (st = env_bytes("RTSTAP_DEVICE_MEMORY_LIMIT", &o->device_limit, err)) ||
        (st = cli_env_tuning(&o->tuning, err)))
        return st;
    o->host_limit_name = "RTSTAP_MEMORY_LIMIT";
    o->device_limit_name = "RTSTAP_DEVICE_MEMORY_LIMIT";
    return STAP_OK;
}

int cli_env_reader(stap_read_options *r, stap_error *err)
{
    static const char *const readers[] = {"direct", "hdf5"};
    return env_choice("RTSTAP_READER", readers, 2, 0, &r->hdf5_only, err);
}
