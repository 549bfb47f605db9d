/* atomic.c: atomic publication (h5io.h) — a temporary beside the output, created
 * exclusively, published by link() or rename() when complete; stale temporaries swept. */
#include "io_internal.h"
#include "h5io_extra.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h> /* sig_atomic_t */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------
 * Atomic publication */

/* The process's umask, without changing it (umask(2) would, racily). */
static mode_t current_umask(void)
{
    mode_t mask = 022;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return mask;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        unsigned m;
        if (sscanf(line, "Umask: %o", &m) == 1) {
            mask = (mode_t)m;
            break;
        }
    }
    fclose(f);
    return mask;
}

/* Temporary files in progress, for stap_atomic_remove_pending: a program's signal handler
 * unlinks them when SIGINT, SIGTERM or SIGHUP ends the process (they were left behind, up
 * to 184 MB each). Slots are claimed and released in normal code; the handler only reads. */
#define RT_TMP_SLOTS 16
static char tmp_names[RT_TMP_SLOTS][4096];
static volatile sig_atomic_t tmp_used[RT_TMP_SLOTS];
static pthread_mutex_t tmp_lock = PTHREAD_MUTEX_INITIALIZER;

static void tmp_register(const char *tmp)
{
    pthread_mutex_lock(&tmp_lock);
    for (int i = 0; i < RT_TMP_SLOTS; i++)
        if (!tmp_used[i]) {
            snprintf(tmp_names[i], sizeof tmp_names[i], "%s", tmp);
            tmp_used[i] = 1;
            break;
        }
    pthread_mutex_unlock(&tmp_lock);
}

static void tmp_unregister(const char *tmp)
{
    pthread_mutex_lock(&tmp_lock);
    for (int i = 0; i < RT_TMP_SLOTS; i++)
        if (tmp_used[i] && !strcmp(tmp_names[i], tmp)) tmp_used[i] = 0;
    pthread_mutex_unlock(&tmp_lock);
}

void stap_atomic_remove_pending(void)
{
    for (int i = 0; i < RT_TMP_SLOTS; i++)
        if (tmp_used[i]) unlink(tmp_names[i]); /* async-signal-safe */
}

/* The host part of temporary names: a hostname without '.' (sweeping needs to know that
 * a temporary was made on this machine before it asks whether its process lives). */
static void tmp_owner(char *owner, size_t len)
{
    char h[64] = "host";
    if (gethostname(h, sizeof h) != 0) snprintf(h, sizeof h, "host");
    h[sizeof h - 1] = 0;
    size_t k = 0;
    for (const char *c = h; *c && k + 1 < len; c++)
        owner[k++] = (*c == '.' || *c == '/') ? '_' : *c;
    owner[k] = 0;
}

/* Remove stale temporaries of this output: ".BASE.tmp.OWNER.PID.XXXXXX" in its directory
 * made on this host by a process that no longer exists (killed by SIGKILL, a crash, a
 * power cut). Another live writer's temporary, or one from another host sharing the
 * directory, is left alone. */
static void sweep_stale(const char *path, int dlen, const char *base, const char *owner)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", path ? (dlen ? dlen : 1) : 1, path ? path : ".");
    DIR *d = opendir(dir);
    if (!d) return;
    char prefix[600];
    int pl = snprintf(prefix, sizeof prefix, ".%s.tmp.%s.", base, owner);
    struct dirent *de;
    while (pl > 0 && (size_t)pl < sizeof prefix && (de = readdir(d))) {
        if (strncmp(de->d_name, prefix, (size_t)pl)) continue;
        char *end;
        long pid = strtol(de->d_name + pl, &end, 10);
        if (pid <= 0 || *end != '.' || strlen(end + 1) != 6) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to ask */
        char victim[4700];
        snprintf(victim, sizeof victim, "%s/%s", dir, de->d_name);
        unlink(victim);
    }
    closedir(d);
}

int stap_atomic_begin(const char *path, char *tmp, size_t tmplen, stap_write_mode mode,
                      stap_error *err)
{
    if (tmp && tmplen) tmp[0] = '\0';
    if (!path || !*path) return stap_fail(err, STAP_EINVAL, "empty output path");
    if (!tmp) return stap_fail(err, STAP_EINVAL, "stap_atomic_begin: no buffer for the name");
    if (mode != STAP_WRITE_NEW && mode != STAP_WRITE_REPLACE)
        return stap_fail(err, STAP_EINVAL, "stap_atomic_begin: invalid write mode %d", (int)mode);
    size_t n = strlen(path);
    if (path[n - 1] == '/')
        return stap_fail(err, STAP_EINVAL, "output path '%s' names a directory, not a file", path);
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        if (mode == STAP_WRITE_NEW)
            return stap_fail(err, STAP_EIO, "'%s' already exists; refusing to overwrite", path);
        /* replacing renames a new file over the name: only a regular file is replaced
         * (not a directory, nor the target of a symbolic link, nor a device or FIFO) */
        if (!S_ISREG(sb.st_mode))
            return stap_fail(err, STAP_EIO, "'%s' exists and is %s; only a regular file is "
                             "replaced", path, S_ISDIR(sb.st_mode) ? "a directory"
                             : S_ISLNK(sb.st_mode) ? "a symbolic link" : "not a regular file");
    }
    int fd = stap_io_tmp_make(path, tmp, tmplen, err);
    if (fd < 0) return err ? err->code : STAP_EIO;
    close(fd);
    return STAP_OK;
}

/* A new temporary "<dir>/.<base>.tmp.<owner>.<pid>.XXXXXX" beside path, created
 * exclusively with the usual permissions and registered for the signal handlers; its
 * descriptor (open for writing), or -1 with err. Stale temporaries of path are swept. */
int stap_io_tmp_make(const char *path, char *tmp, size_t tmplen, stap_error *err)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    int dlen = slash ? (int)(slash - path) : 0;
    char owner[96];
    tmp_owner(owner, sizeof owner);
    sweep_stale(slash ? path : NULL, dlen, base, owner);
    int w = slash ? snprintf(tmp, tmplen, "%.*s/.%s.tmp.%s.%ld.XXXXXX", dlen, path, base, owner,
                             (long)getpid())
                  : snprintf(tmp, tmplen, ".%s.tmp.%s.%ld.XXXXXX", base, owner, (long)getpid());
    if (w < 0 || (size_t)w >= tmplen) {
        tmp[0] = '\0';
        stap_fail(err, STAP_EINVAL, "output path '%s' is too long", path);
        return -1;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        tmp[0] = '\0';
        stap_fail(err, STAP_EIO, "cannot write '%s' (directory '%.*s'): %s", path,
                  slash ? (dlen ? dlen : 1) : 1, slash ? path : ".", strerror(e));
        return -1;
    }
    /* mkstemp makes 0600; a published file gets the usual permissions. */
    if (fchmod(fd, 0666 & ~current_umask()) != 0) { /* not fatal: the file stays private */ }
    tmp_register(tmp);
    return fd;
}

int stap_atomic_commit(const char *tmp, const char *path, stap_write_mode mode, stap_error *err)
{
    /* The data must be on disk before the name appears, so that even a crash never
     * publishes a partial file. */
    int fd = open(tmp, O_RDONLY);
    if (fd < 0) {
        int e = errno;
        return stap_fail(err, STAP_EIO, "cannot publish '%s': temporary '%s' vanished: %s", path, tmp,
                         strerror(e));
    }
    if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
        int e = errno;
        close(fd);
        stap_atomic_abort(tmp);
        return stap_fail(err, STAP_EIO, "cannot write '%s': %s", path, strerror(e));
    }
    close(fd);

    if (mode == STAP_WRITE_REPLACE) {
        /* rename() replaces the old file in one step: readers see the old file or the
         * new one, never a mixture, and a failure leaves the old one as it was */
        struct stat sb;
        if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
            stap_atomic_abort(tmp);
            return stap_fail(err, STAP_EIO, "'%s' is no longer a regular file; not replaced", path);
        }
        if (rename(tmp, path) == 0) {
            tmp_unregister(tmp);
            return STAP_OK;
        }
        int e = errno;
        stap_atomic_abort(tmp);
        return stap_fail(err, STAP_EIO, "cannot replace '%s': %s", path, strerror(e));
    }
    /* link() fails with EEXIST instead of replacing an existing file, unlike rename(). */
    if (link(tmp, path) == 0) {
        unlink(tmp);
        tmp_unregister(tmp);
        return STAP_OK;
    }
    int e = errno;
    if (e == EPERM || e == EOPNOTSUPP || e == ENOSYS || e == EMLINK) {
        /* A file system without hard links: rename, still refusing to replace. */
#ifdef RENAME_NOREPLACE
        if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0) {
            tmp_unregister(tmp);
            return STAP_OK;
        }
        e = errno;
        if (e == EINVAL || e == ENOSYS || e == EOPNOTSUPP)
#endif
        {
            struct stat sb;
            if (lstat(path, &sb) == 0) e = EEXIST;
            else if (rename(tmp, path) == 0) {
                tmp_unregister(tmp);
                return STAP_OK;
            }
            else e = errno;
        }
    }
    stap_atomic_abort(tmp);
    if (e == EEXIST)
        return stap_fail(err, STAP_EIO, "'%s' already exists; refusing to overwrite", path);
    return stap_fail(err, STAP_EIO, "cannot create '%s': %s", path, strerror(e));
}

int stap_atomic_write(const char *path, const void *data, size_t len, stap_write_mode mode,
                      stap_error *err)
{
    char tmp[4096];
    int st = stap_atomic_begin(path, tmp, sizeof tmp, mode, err);
    if (st) return st;
    int fd = open(tmp, O_WRONLY | O_CLOEXEC), e = fd < 0 ? errno : 0;
    const char *p = data;
    for (size_t left = len; !e && left;) {
        ssize_t k = write(fd, p, left);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) e = k < 0 ? errno : EIO;
        else p += k, left -= (size_t)k;
    }
    if (fd >= 0 && close(fd) != 0 && !e) e = errno;
    if (e) {
        stap_atomic_abort(tmp);
        return stap_fail(err, STAP_EIO, "cannot write '%s': %s", path, strerror(e));
    }
    return stap_atomic_commit(tmp, path, mode, err);
}

int stap_atomic_pending(void)
{
    int n = 0;
    pthread_mutex_lock(&tmp_lock);
    for (int i = 0; i < RT_TMP_SLOTS; i++) n += tmp_used[i] != 0;
    pthread_mutex_unlock(&tmp_lock);
    return n;
}

void stap_atomic_abort(const char *tmp)
{
    if (tmp && *tmp) {
        unlink(tmp);
        tmp_unregister(tmp);
    }
}

int stap_output_check(const char *path, stap_error *err)
{
    return stap_output_check_mode(path, STAP_WRITE_NEW, err);
}

int stap_output_check_mode(const char *path, stap_write_mode mode, stap_error *err)
{
    char tmp[4096];
    int st = stap_atomic_begin(path, tmp, sizeof tmp, mode, err);
    if (st) return st;
    stap_atomic_abort(tmp);
    return STAP_OK;
}
