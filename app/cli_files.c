/* cli_files.c: inputs and outputs of a command, kept apart (cli_files.h). */
#include "cli_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "h5io.h"

enum { MAX_FILES = 64 };

typedef struct file_entry {
    const char *flag;
    char path[PATH_MAX];
    char canon[PATH_MAX];   /* realpath, or realpath of the directory + the name          */
    int output, exists;
    dev_t dev;
    ino_t ino;
    int hashed;             /* invariants: the input's bytes when registered              */
    uint64_t hash;
    long long size;
} file_entry;

static file_entry files[MAX_FILES];
static int nfiles;

static void canonical(const char *path, char *out, size_t len)
{
    char buf[PATH_MAX];
    if (realpath(path, buf)) {
        snprintf(out, len, "%s", buf);
        return;
    }
    /* not there (yet): its directory's real path and its name */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    const char *base = slash ? path + (slash - dir) + 1 : path;
    if (slash == dir) snprintf(dir, sizeof dir, "/");
    else if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
    if (realpath(dir, buf) && strlen(buf) + strlen(base) + 2 <= len) {
        size_t n = strcmp(buf, "/") ? strlen(buf) : 0;
        memcpy(out, buf, n);
        out[n] = '/';
        memcpy(out + n + 1, base, strlen(base) + 1);
    } else {
        snprintf(out, len, "%s", path);
    }
}

static int same_file(const file_entry *a, const file_entry *b)
{
    if (a->exists && b->exists) return a->dev == b->dev && a->ino == b->ino;
    return !strcmp(a->canon, b->canon);
}

static int hash_file(const char *path, uint64_t *hash, long long *size)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return -1;
    }
    static unsigned char buf[1 << 20];
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    long long n = 0;
    for (;;) {
        ssize_t k = read(fd, buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        for (ssize_t i = 0; i < k; i++) h = (h ^ buf[i]) * 1099511628211ull;
        n += k;
    }
    close(fd);
    *hash = h;
    *size = n;
    return 0;
}

static int add(const char *flag, const char *path, int output)
{
    if (!path || (output && !strcmp(path, "-"))) return EXIT_OK;
    if (nfiles == MAX_FILES) return EXIT_OK; /* no command names this many files */
    file_entry *e = &files[nfiles];
    memset(e, 0, sizeof *e);
    e->flag = flag;
    e->output = output;
    snprintf(e->path, sizeof e->path, "%s", path);
    canonical(path, e->canon, sizeof e->canon);
    struct stat sb;
    if (stat(path, &sb) == 0) {
        e->exists = 1;
        e->dev = sb.st_dev;
        e->ino = sb.st_ino;
    }
    for (int i = 0; i < nfiles; i++) {
        const file_entry *o = &files[i];
        if ((!output && !o->output) || !same_file(e, o)) continue;
        const file_entry *out = output ? e : o, *other = output ? o : e;
        const char *named = strcmp(out->path, other->path) ? " (the same file)" : "";
        if (!other->output)
            return cli_error(EXIT_USAGE, "%s '%s' is the input %s '%s'%s: rtstap never writes "
                             "over a file it reads, not even with -f", out->flag, out->path,
                             other->flag, other->path, named);
        return cli_error(EXIT_USAGE, "%s '%s' and %s '%s' name the same file%s; give each output "
                         "its own", other->flag, other->path, out->flag, out->path,
                         named[0] ? "" : "");
    }
    if (!output && e->exists && S_ISREG(sb.st_mode) && getenv("RTSTAP_TEST_INVARIANTS"))
        e->hashed = hash_file(path, &e->hash, &e->size) == 0;
    nfiles++;
    return EXIT_OK;
}

int cli_files_input(const char *flag, const char *path) { return add(flag, path, 0); }
int cli_files_output(const char *flag, const char *path) { return add(flag, path, 1); }

/* ---- the test suite's invariants ------------------------------------------------------ */

typedef struct violations {
    char text[4096];
    size_t at;
    int n;
} violations;

static void violated(violations *v, const char *fmt, const char *a, const char *b)
{
    char line[2 * PATH_MAX + 256];
    snprintf(line, sizeof line, fmt, a, b);
    fprintf(stderr, "rtstap: internal error: invariant: %s\n", line);
    if (v->at < sizeof v->text)
        v->at += (size_t)snprintf(v->text + v->at, sizeof v->text - v->at, "%s\n", line);
    v->n++;
}

/* temporaries of this process left beside an output: ".BASE.tmp.OWNER.PID.XXXXXX" */
static void check_temporaries(const file_entry *e, violations *v)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", e->path);
    char *slash = strrchr(dir, '/');
    const char *base = slash ? e->path + (slash - dir) + 1 : e->path;
    if (slash == dir) snprintf(dir, sizeof dir, "/");
    else if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
    DIR *d = opendir(dir);
    if (!d) return;
    char prefix[PATH_MAX], pid[32];
    snprintf(prefix, sizeof prefix, ".%s.tmp.", base);
    snprintf(pid, sizeof pid, ".%ld.", (long)getpid());
    struct dirent *de;
    while ((de = readdir(d)))
        if (!strncmp(de->d_name, prefix, strlen(prefix)) && strstr(de->d_name + strlen(prefix), pid))
            violated(v, "temporary file '%s' left in '%s'", de->d_name, dir);
    closedir(d);
}

int cli_files_invariants(int status, int argc, char **argv)
{
    const char *dir = getenv("RTSTAP_TEST_INVARIANTS");
    if (!dir || !*dir) return status;
    violations v = {"", 0, 0};
    char num[32];
    snprintf(num, sizeof num, "%d", status);
    if (status != EXIT_OK && status != EXIT_PROCESSING && status != EXIT_USAGE &&
        status != 128 + SIGHUP && status != 128 + SIGINT && status != 128 + SIGTERM)
        violated(&v, "exit status %s is not 0, 1, 2 or 128 + a stopping signal%s", num, "");
    const int open_objects = stap_io_open_objects();
    snprintf(num, sizeof num, "%d", open_objects);
    if (open_objects) violated(&v, "%s HDF5 object(s) open at exit%s", num, "");
    snprintf(num, sizeof num, "%d", stap_atomic_pending());
    if (stap_atomic_pending()) violated(&v, "%s temporary file(s) still registered at exit%s", num, "");
    for (int i = 0; i < nfiles; i++) {
        const file_entry *e = &files[i];
        if (e->output) {
            check_temporaries(e, &v);
            continue;
        }
        uint64_t h;
        long long size;
        if (e->hashed && (hash_file(e->path, &h, &size) != 0 || h != e->hash || size != e->size))
            violated(&v, "input %s '%s' changed", e->flag, e->path);
    }
    if (!v.n) return status;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/violation.%ld", dir, (long)getpid());
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "command:");
        for (int i = 0; i < argc; i++) fprintf(f, " '%s'", argv[i]);
        fprintf(f, "\nexit status: %d\n%s", status, v.text);
        fclose(f);
    }
    return 70;
}
