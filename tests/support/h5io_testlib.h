/* h5io_testlib: what the HDF5 tests (test_h5io, test_h5io_layout, test_h5io_result) share:
 * their temporary folder, a path in it, random draws, the extra hook that writes /truth, the
 * six axis orders, and a test program's start and end. */
#ifndef H5IO_TESTLIB_H
#define H5IO_TESTLIB_H

#include <stddef.h>

#include "h5io.h"
#include "la_check.h"
#include "testutil.h"

extern char h5t_dir[4096];
extern const char *const h5t_orders[6];

/* buf = h5t_dir/name */
void h5t_path(char *buf, size_t len, const char *name);
int h5t_exists(const char *path);
int h5t_randint(tc_rng *r, int lo, int hi);
void h5t_random_cf32(tc_rng *r, stap_cf32 *x, size_t n);

typedef struct h5t_hook_state {
    int calls;
    int fail;
} h5t_hook_state;
/* An extra hook writing /truth (int32, 3 values) with the raw API, or failing. */
int h5t_truth_hook(stap_h5_file *f, void *user, stap_error *err);

/* a test program's start: the seed (RTSTAP_SEED or the fixed one), rng seeded, h5t_dir made
 * (non-zero when it cannot be); its end: no HDF5 object open, no temporary left, h5t_dir
 * removed, the verdict printed; the exit status */
int h5t_begin(const char *name, uint64_t *seed, tc_rng *rng);
int h5t_end(const char *name, uint64_t seed);

#endif
