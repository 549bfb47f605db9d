/* fuzz_util.c: scratch files, byte choices, HDF5 identifier counts (see fuzz_util.h). */
#include "fuzz_util.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>

#include "testutil.h"

void fz_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz finding: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

/* ---- scratch directory -------------------------------------------------------------- */

static char scratch[4096];

static void scratch_cleanup(void)
{
    if (scratch[0]) tc_remove_tree(scratch);
}

static int usable_dir(const char *d)
{
    struct stat sb;
    return d && *d && stat(d, &sb) == 0 && S_ISDIR(sb.st_mode) && access(d, W_OK | X_OK) == 0;
}

const char *fz_dir(void)
{
    if (scratch[0]) return scratch;
    const char *cand[] = {getenv("FUZZ_TMPDIR"), "/dev/shm", getenv("TMPDIR"), "/tmp"};
    const char *base = "/tmp";
    for (size_t i = 0; i < sizeof cand / sizeof *cand; i++)
        if (usable_dir(cand[i])) {
            base = cand[i];
            break;
        }
    snprintf(scratch, sizeof scratch, "%s/rtstap-fuzz.XXXXXX", base);
    if (!mkdtemp(scratch)) {
        int e = errno;
        scratch[0] = '\0';
        fz_die("cannot create a scratch directory in %s: %s", base, strerror(e));
    }
    atexit(scratch_cleanup);
    return scratch;
}

const char *fz_path(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", fz_dir(), name);
    return buf;
}

void fz_remove(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0) return;
    if (S_ISDIR(sb.st_mode)) tc_remove_tree(path);
    else unlink(path);
}

void fz_write_file(const char *path, const void *data, size_t n)
{
    fz_remove(path);
    FILE *f = fopen(path, "wb");
    if (!f) fz_die("harness: cannot write %s: %s", path, strerror(errno));
    const int short_write = n && fwrite(data, 1, n, f) != n;
    if (fclose(f) != 0 || short_write) fz_die("harness: cannot write %s (scratch full?)", path);
}

/* ---- byte choices ------------------------------------------------------------------- */

unsigned fz_u8(fz_bytes *b)
{
    if (!b->n) return 0;
    b->n--;
    return *b->p++;
}

uint32_t fz_u32(fz_bytes *b)
{
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) v |= (uint32_t)fz_u8(b) << (8 * k);
    return v;
}

unsigned fz_pick(fz_bytes *b, unsigned n) { return n ? fz_u8(b) % n : 0; }

void fz_take(fz_bytes *b, void *out, size_t len)
{
    size_t k = len < b->n ? len : b->n;
    memcpy(out, b->p, k);
    memset((char *)out + k, 0, len - k);
    b->p += k;
    b->n -= k;
}

/* ---- results ------------------------------------------------------------------------ */

void fz_check_status(const char *what, int st, const stap_error *err)
{
    static int verbose = -1;
    if (verbose < 0) verbose = getenv("FUZZ_VERBOSE") != NULL;
    if (verbose) fprintf(stderr, "%s: %s\n", what, st ? err->msg : "ok");
    if (st == STAP_OK) return;
    if (st < STAP_EINVAL || st > STAP_EUNSUPPORTED)
        fz_die("%s returned %d, not a stap_status", what, st);
    if (err->code != st) fz_die("%s returned %d but its error says %d", what, st, err->code);
    if (!err->msg[0] || strlen(err->msg) >= sizeof err->msg)
        fz_die("%s failed (%s) without a message", what, stap_status_name(st));
}

/* ---- watchdog ----------------------------------------------------------------------- */

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watch_cond = PTHREAD_COND_INITIALIZER;
static const char *watch_what;
static unsigned long watch_serial;
static pthread_t watch_thread; /* the thread that called fz_watch */

static void *watchdog(void *unused)
{
    pthread_mutex_lock(&watch_lock);
    for (;;) {
        while (!watch_what) pthread_cond_wait(&watch_cond, &watch_lock);
        const unsigned long serial = watch_serial;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += FZ_BLOCK_SECONDS;
        int rc = 0;
        while (watch_what && watch_serial == serial && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&watch_cond, &watch_lock, &until);
        if (watch_what && watch_serial == serial) {
            /* abort in the blocked thread, not here: libFuzzer's handler then prints where
             * it was (our open(2) of a FIFO, or libhdf5 zero-filling a buffer sized by a
             * corrupted header), and run.sh can tell whose it is */
            fprintf(stderr, "fuzz finding: %s has not returned after %d s: blocked (opening a "
                    "FIFO?); its stack follows\n", watch_what, FZ_BLOCK_SECONDS);
            pthread_kill(watch_thread, SIGABRT);
            pthread_mutex_unlock(&watch_lock);
            for (;;) pause();
        }
    }
    return unused;
}

void fz_watch(const char *what)
{
    static int started;
    if (!started) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, watchdog, NULL) != 0)
            fz_die("harness: cannot start the watchdog thread");
        pthread_detach(thread);
        started = 1;
    }
    pthread_mutex_lock(&watch_lock);
    watch_what = what;
    watch_thread = pthread_self();
    watch_serial++;
    pthread_cond_broadcast(&watch_cond);
    pthread_mutex_unlock(&watch_lock);
}

void fz_unwatch(void)
{
    pthread_mutex_lock(&watch_lock);
    watch_what = NULL;
    pthread_cond_broadcast(&watch_cond);
    pthread_mutex_unlock(&watch_lock);
}

/* ---- HDF5 --------------------------------------------------------------------------- */

static const H5I_type_t id_kinds[] = {H5I_FILE,    H5I_GROUP, H5I_DATATYPE,    H5I_DATASPACE,
                                      H5I_DATASET, H5I_ATTR,  H5I_GENPROP_LST, H5I_ERROR_STACK};

void fz_h5_ids_get(fz_h5_ids *ids)
{
    memset(ids, 0, sizeof *ids);
    for (size_t k = 0; k < sizeof id_kinds / sizeof *id_kinds; k++) {
        hsize_t n = 0;
        if (H5Inmembers(id_kinds[k], &n) >= 0) ids->n[k] = (unsigned long long)n;
    }
}

void fz_h5_ids_same(const char *what, const fz_h5_ids *before)
{
    static const char *const names[] = {"file",    "group",     "datatype",      "dataspace",
                                        "dataset", "attribute", "property list", "error stack"};
    fz_h5_ids now;
    fz_h5_ids_get(&now);
    for (size_t k = 0; k < sizeof id_kinds / sizeof *id_kinds; k++)
        if (now.n[k] != before->n[k])
            fz_die("%s left %lld HDF5 %s identifier(s) open (%llu before, %llu after)", what,
                   (long long)(now.n[k] - before->n[k]), names[k], before->n[k], now.n[k]);
}

void fz_h5_init(void)
{
    H5open();
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    /* no free lists: memory HDF5 keeps for reuse made libFuzzer suspect a leak after
     * every input (and run LeakSanitizer again on it) */
    H5set_free_list_limits(0, 0, 0, 0, 0, 0);
}
