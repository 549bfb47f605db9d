/* h5io_testlib.c: h5io_testlib.h. */
#include "h5io_testlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5io_extra.h"
#include "h5x.h"

char h5t_dir[4096];
const char *const h5t_orders[6] = {"C,P,R", "C,R,P", "P,C,R", "P,R,C", "R,C,P", "R,P,C"};

void h5t_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", h5t_dir, name);
}

int h5t_exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}


int h5t_randint(tc_rng *r, int lo, int hi) { return lo + (int)(tc_uniform(r) * (hi - lo + 1)); }

void h5t_random_cf32(tc_rng *r, stap_cf32 *x, size_t n)
{
    for (size_t k = 0; k < n; k++) x[k] = tc_cnormal(r);
}


int h5t_truth_hook(stap_h5_file *f, void *user, stap_error *err)
{
    h5t_hook_state *h = user;
    h->calls++;
    if (h->fail) return stap_fail(err, STAP_EINVAL, "hook refused on purpose");
    const int v[3] = {7, 8, 9};
    stap_h5x_put_ints(f, "/truth", 3, v);
    return stap_h5x_status(f, err);
}

int h5t_begin(const char *name, uint64_t *seed, tc_rng *rng)
{
    *seed = tc_seed_from_env(TC_FIXED_SEED);
    tc_rng_seed(rng, *seed);
    const char *base = getenv("TMPDIR");
    snprintf(h5t_dir, sizeof h5t_dir, "%s/%s.XXXXXX", base && *base ? base : "/tmp", name);
    if (!mkdtemp(h5t_dir)) {
        fprintf(stderr, "%s: cannot make a temporary directory: %s\n", name, strerror(errno));
        return 1;
    }
    return 0;
}

int h5t_end(const char *name, uint64_t seed)
{
    CHECK(stap_io_open_objects() == 0, "HDF5 objects left open at the end");
    CHECK(tc_count_tmp(h5t_dir) == 0, "temporary files left in %s", h5t_dir);
    tc_remove_tree(h5t_dir);
    if (tc_failures) {
        fprintf(stderr, "%s: %d failure(s) (seed %llu)\n", name, tc_failures, (unsigned long long)seed);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}
