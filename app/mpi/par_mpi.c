/* par_mpi.c: rtstap-mpi's ranks (par.h) over MPI. MPI is asked for MPI_THREAD_SERIALIZED:
 * the main thread makes the collectives, the writer thread its ranges' writes
 * (par_file_write_at) while the main thread runs the stream, never two at once. */
#include "par.h"
#include "par_posix.h"

#include <mpi.h>
#include <sched.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PAR_MSG = 1024, PAR_PIECE = 1 << 30 /* bytes per MPI call: counts are int */ };

static int rank, size = 1, local_rank, begun, hosts = 1;
static char describe[512], last_error[PAR_MSG];

/* The tasks Slurm's srun started in this job step (SLURM_STEP_NUM_TASKS), 0 outside srun.
 * mpirun's ranks inside an allocation see the step of mpirun's daemons (one task a node):
 * the world mpirun says it made (OMPI_COMM_WORLD_SIZE) is theirs. */
static long launched_tasks(void)
{
    const char *ompi = getenv("OMPI_COMM_WORLD_SIZE"), *step = getenv("SLURM_STEP_NUM_TASKS");
    const char *n = ompi ? ompi : step;
    return n ? strtol(n, NULL, 10) : 0;
}

/* A launcher that started several tasks and gave them no MPI world: srun without a PMI
 * plugin (Debian's Slurm defaults to MpiDefault=none; Debian's Open MPI speaks PMIx only),
 * whose tasks would abort in MPI_Init with Open MPI's page of text, or run as singletons
 * that all write the same output. Said in one line, before MPI is started or anything is
 * written. */
static int refuse_no_world(long tasks, const char *why)
{
    const char *task = getenv("SLURM_PROCID"); /* (said by the first task alone) */
    if (!task || !strcmp(task, "0"))
        fprintf(stderr, "rtstap-mpi: error: srun started %ld tasks %s: launch them with "
                "`srun --mpi=pmix` (or MpiDefault=pmix in slurm.conf), or with mpirun inside the "
                "allocation (docs/mpi.md)\n", tasks, why);
    return -1;
}

int par_init(int *argc, char ***argv)
{
    const long tasks = launched_tasks();
    if (tasks > 1 && !getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK") &&
        !getenv("PMI_RANK") && !getenv("PMI_FD"))
        return refuse_no_world(tasks, "without an MPI world (no PMIx or PMI)");
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) return -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size == 1 && tasks > 1) { /* N singletons: each would write the same output */
        MPI_Finalize();
        return refuse_no_world(tasks, "that each started MPI alone (a world of 1 rank)");
    }
    /* the ranks of this host: each takes its own GPU */
    MPI_Comm host;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host);
    int host_size = 1;
    MPI_Comm_rank(host, &local_rank);
    MPI_Comm_size(host, &host_size);
    MPI_Comm_free(&host);
    /* hosts: the ranks that are first on their host */
    int first = local_rank == 0;
    MPI_Allreduce(&first, &hosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    lib[0] = '\0';
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, ",\n")] = '\0'; /* "Open MPI v4.1.4, package: ..." */
    lib[200] = '\0'; /* (the name and version come first) */
    snprintf(describe, sizeof describe, "%.200s, %d rank%s on %d host%s%s", lib, size,
             size > 1 ? "s" : "", hosts, hosts > 1 ? "s" : "",
             provided < MPI_THREAD_SERIALIZED ? " (without MPI_THREAD_SERIALIZED)" : "");
    if (size > PAR_MAX_RANKS) {
        if (rank == 0)
            fprintf(stderr, "rtstap-mpi: error: %d ranks; at most %d\n", size, PAR_MAX_RANKS);
        MPI_Finalize();
        return -1;
    }
    if (provided < MPI_THREAD_SERIALIZED && size > 1) {
        if (rank == 0)
            fprintf(stderr, "rtstap-mpi: error: the MPI library gives thread level %d; rtstap-mpi's "
                    "writer thread needs MPI_THREAD_SERIALIZED\n", provided);
        MPI_Finalize();
        return -1;
    }
    /* standard output is rank 0's (help, --json -, the pictures' paths): the others' goes
     * nowhere; their standard error stays (warnings of their own CPIs, crashes) */
    if (rank > 0) {
        FILE *quiet = freopen("/dev/null", "w", stdout);
        (void)quiet; /* (failing, the rank prints what rank 0 prints: harmless) */
    }
    /* mpirun binds each of 2 or fewer ranks to one core by default: a rank's reader, writer
     * and engine threads would share it. Said, not undone (the binding is the user's). */
    cpu_set_t set;
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (size > 1 && rank == 0 && sched_getaffinity(0, sizeof set, &set) == 0 &&
        CPU_COUNT(&set) < 4 && online > CPU_COUNT(&set))
        fprintf(stderr, "rtstap-mpi: warning: rank 0 is bound to %d of the host's %ld CPUs: its "
                "reader, writer and engine threads share %s (mpirun --bind-to socket, or none, "
                "gives each rank more)\n", CPU_COUNT(&set), online, CPU_COUNT(&set) > 1 ? "them" : "it");
    return 0;
}

void par_finalize(void) { MPI_Finalize(); }
int par_rank(void) { return rank; }
int par_size(void) { return size; }
int par_local_rank(void) { return local_rank; }
const char *par_program(void) { return "rtstap-mpi"; }
const char *par_describe(void) { return describe; }
int par_begun(void) { return begun; }
void par_set_last_error(const char *msg) { snprintf(last_error, sizeof last_error, "%s", msg); }

typedef struct rank_status {
    int status, in_command; /* in_command: par_check (else main's par_check_end) */
    char msg[PAR_MSG];
} rank_status;

static int meet(int status, int in_command);
int par_check(int status) { return meet(status, 1); }
int par_check_end(int status) { return meet(status, 0); }

/* rank 0: a rank that left its command without failing while another met in its command */
static int left_early(const rank_status *all, int worst)
{
    int met = -1;
    for (int r = 0; r < size && met < 0; r++)
        if (all[r].in_command) met = r;
    for (int r = 0; r < size && met >= 0; r++)
        if (!all[r].in_command && !all[r].status) {
            fprintf(stderr, "rtstap-mpi: rank %d: error: it ended without running the command that "
                    "rank %d runs (were the ranks given other commands or arguments?)\n", r, met);
            worst = par_worse(worst, 1);
        }
    return worst;
}

static int meet(int status, int in_command)
{
    begun = 1;
    if (size == 1) return status;
    rank_status mine = {status, in_command, ""}, *all = rank == 0 ? malloc(sizeof *all * (size_t)size) : NULL;
    if (status) memcpy(mine.msg, last_error, sizeof mine.msg);
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0, MPI_COMM_WORLD);
    int worst = status;
    if (rank == 0 && all) {
        for (int r = 1; r < size; r++) {
            worst = par_worse(worst, all[r].status);
            /* each failed rank's message, but one rank 0 printed already (its own, and
             * the same failure met everywhere: a usage error) */
            if (all[r].status && !(status && !strcmp(all[r].msg, last_error)))
                fprintf(stderr, "rtstap-mpi: rank %d: error: %s\n", r,
                        all[r].msg[0] ? all[r].msg : "(no message)");
        }
        worst = left_early(all, worst);
    }
    free(all);
    MPI_Bcast(&worst, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return worst;
}

void par_bcast(void *buf, size_t bytes, int root)
{
    for (size_t at = 0; at < bytes; at += PAR_PIECE) {
        const size_t n = bytes - at < PAR_PIECE ? bytes - at : PAR_PIECE;
        MPI_Bcast((char *)buf + at, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
    }
}

void par_allgather(const void *mine, size_t bytes, void *all)
{
    /* small records (a rank's status and rates): one call */
    MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
}

int par_gatherv(const void *mine, size_t bytes, void **all, size_t *counts, int root, stap_error *err)
{
    uint64_t b = bytes, *sizes = rank == root ? malloc(sizeof *sizes * (size_t)size) : NULL;
    MPI_Gather(&b, 1, MPI_UINT64_T, sizes, 1, MPI_UINT64_T, root, MPI_COMM_WORLD);
    int ok = 1;
    char *buf = NULL;
    if (rank == root) {
        size_t total = 0;
        for (int r = 0; sizes && r < size; r++) total += counts[r] = (size_t)sizes[r];
        buf = sizes ? malloc(total ? total : 1) : NULL;
        ok = buf != NULL;
    }
    /* root says whether it can take them; then each rank sends, in pieces */
    MPI_Bcast(&ok, 1, MPI_INT, root, MPI_COMM_WORLD);
    if (!ok) {
        free(sizes);
        *all = NULL;
        return stap_fail(err, STAP_ENOMEM, "rank %d: out of memory for the ranks' rows", root);
    }
    if (rank == root) {
        size_t at = 0;
        for (int r = 0; r < size; r++) {
            if (r == root) {
                memcpy(buf + at, mine, bytes);
            } else {
                for (size_t k = 0; k < counts[r]; k += PAR_PIECE) {
                    const size_t n = counts[r] - k < PAR_PIECE ? counts[r] - k : PAR_PIECE;
                    MPI_Recv(buf + at + k, (int)n, MPI_BYTE, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }
            }
            at += counts[r];
        }
        *all = buf;
    } else {
        for (size_t k = 0; k < bytes; k += PAR_PIECE) {
            const size_t n = bytes - k < PAR_PIECE ? bytes - k : PAR_PIECE;
            MPI_Send((const char *)mine + k, (int)n, MPI_BYTE, root, 7, MPI_COMM_WORLD);
        }
        *all = NULL;
    }
    free(sizes);
    return STAP_OK;
}

struct par_file {
    posix_file *posix; /* every rank on one host (par.h) */
    MPI_File fh;
    char path[4096];
};

static void mpi_message(int code, char *out, int len)
{
    int n = 0;
    if (MPI_Error_string(code, out, &n) != MPI_SUCCESS) snprintf(out, (size_t)len, "MPI error %d", code);
}

int par_file_open(par_file **out, const char *path, stap_error *err)
{
    *out = NULL;
    const char *how = getenv("RTSTAP_MPI_IO");
    const int posix = hosts == 1 && !(how && !strcmp(how, "mpiio"));
    par_file *f = calloc(1, sizeof *f);
    int ok = f != NULL, all_ok = 0, rc = MPI_SUCCESS;
    stap_error perr = {0};
    if (ok && posix) {
        ok = posix_file_open(&f->posix, path, &perr) == STAP_OK;
    } else if (ok) { /* each rank its own handle: only independent writes, so a rank's
                        failure to open leaves no collective unmatched */
        rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &f->fh);
        ok = rc == MPI_SUCCESS;
    }
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        char m[MPI_MAX_ERROR_STRING] = "another rank could not open it";
        if (!ok && posix) snprintf(m, sizeof m, "%.200s", perr.msg);
        else if (!ok) mpi_message(rc, m, sizeof m);
        if (ok && posix) posix_file_close(f->posix, &perr);
        else if (ok) MPI_File_close(&f->fh);
        free(f);
        return stap_fail(err, STAP_EIO, "rank %d: cannot open '%s' (%s): %s", rank, path,
                         posix ? "pwrite" : "MPI-IO", m);
    }
    snprintf(f->path, sizeof f->path, "%s", path);
    *out = f;
    return STAP_OK;
}

const char *par_file_method(const par_file *f)
{
    return !f ? "" : f->posix ? "pwrite (every rank on one host)" : "MPI-IO";
}

int par_file_write_at(par_file *f, long long at, const void *buf, size_t n, stap_error *err)
{
    if (f->posix) {
        const int st = posix_file_write_at(f->posix, at, buf, n, err);
        if (st) stap_error_prefix(err, "rank %d", rank);
        return st;
    }
    for (size_t k = 0; k < n;) {
        const int piece = (int)(n - k < PAR_PIECE ? n - k : PAR_PIECE);
        MPI_Status st;
        int got = 0;
        const int rc = MPI_File_write_at(f->fh, (MPI_Offset)(at + (long long)k), (const char *)buf + k,
                                         piece, MPI_BYTE, &st);
        if (rc == MPI_SUCCESS) MPI_Get_count(&st, MPI_BYTE, &got);
        if (rc != MPI_SUCCESS || got <= 0) {
            char m[MPI_MAX_ERROR_STRING] = "nothing written";
            if (rc != MPI_SUCCESS) mpi_message(rc, m, sizeof m);
            return stap_fail(err, STAP_EIO, "rank %d: cannot write %zu bytes at %lld of '%s': %s",
                             rank, n, at, f->path, m);
        }
        k += (size_t)got;
    }
    return STAP_OK;
}

int par_file_close(par_file *f, stap_error *err)
{
    if (!f) return STAP_OK;
    if (f->posix) { /* synced (rank 0 publishes after the ranks' next meeting) */
        const int st = posix_file_close(f->posix, err);
        free(f);
        if (st) stap_error_prefix(err, "rank %d", rank);
        return st;
    }
    int rc = MPI_File_sync(f->fh);
    const int rc2 = MPI_File_close(&f->fh);
    if (rc == MPI_SUCCESS) rc = rc2;
    int st = STAP_OK;
    if (rc != MPI_SUCCESS) {
        char m[MPI_MAX_ERROR_STRING];
        mpi_message(rc, m, sizeof m);
        st = stap_fail(err, STAP_EIO, "rank %d: cannot finish '%s': %s", rank, f->path, m);
    }
    free(f);
    return st;
}
