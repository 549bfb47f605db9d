/* par: the processes a command runs in. rtstap is one process (par_serial.c); rtstap-mpi is
 * the ranks of an MPI job (mpi/par_mpi.c), one per GPU or CPU socket. The commands are the
 * same code either way: with one process these calls cost nothing and `run` and `stream`
 * take their one-process paths.
 *
 * Calls marked "collective" are made by every rank, in the same order. A command's ranks
 * meet first in par_check; from there on none leaves early: a failure travels as a status
 * through the later collectives (run_ranks.c, cmd_stream.c). A rank that fails before it
 * reaches par_check meets the others in main's par_check with its status, and rank 0 prints
 * its message (cli_error keeps each rank's last one; only rank 0 prints). */
#ifndef PAR_H
#define PAR_H

#include <stddef.h>

#include "rtstap/common.h" /* stap_error */

/* rtstap-mpi's ranks at most (par_init refuses more): the reports' fixed arrays */
enum { PAR_MAX_RANKS = 1024 };

/* main's first and last calls (MPI_Init_thread, MPI_Finalize); 0 on success. */
int par_init(int *argc, char ***argv);
void par_finalize(void);
/* this process among the job's (0 .. size-1), and among those of its host */
int par_rank(void);
int par_size(void);
int par_local_rank(void);
/* "rtstap" or "rtstap-mpi", and the MPI library with the job's ranks and hosts, e.g.
 * "Open MPI v4.1.4, 2 ranks on 1 host" ("" for one process) */
const char *par_program(void);
const char *par_describe(void);

/* Collective: every rank's exit status at this point (0: went well); returns the worst
 * (par_worse). Rank 0 prints the message of each failed rank, but not one it printed itself
 * (its own failure, when another rank's is the same). The first call of a command marks it
 * begun (par_begun). */
int par_check(int status);
/* The worse of two exit statuses: a failure (1 or 2) before a stop by a signal (128 + n),
 * the higher within each. */
static inline int par_worse(int a, int b)
{
    const int fa = a > 0 && a < 128, fb = b > 0 && b < 128;
    if (fa != fb) return fa ? a : b;
    return a > b ? a : b;
}
/* Collective: main's meeting of the ranks that did not meet in their command (par_check's,
 * met by the others' first par_check). A rank ending here without failing while another met
 * in its command (the ranks given other commands or arguments, e.g. --help on one) fails
 * them all, named by rank 0: the ranks in the command would wait for it in their next
 * meeting. */
int par_check_end(int status);
int par_begun(void);
/* the last error message of this rank (cli_error keeps it), for par_check */
void par_set_last_error(const char *msg);
/* Collective: root's `bytes` at buf to every rank. */
void par_bcast(void *buf, size_t bytes, int root);
/* Collective: every rank's `bytes` at mine into all[rank * bytes] on every rank. */
void par_allgather(const void *mine, size_t bytes, void *all);
/* Collective: each rank's `bytes` (they differ) to root, concatenated in rank order into a
 * new *all (malloc; root only, free()d by the caller), each rank's size in counts[rank]
 * (root only, par_size() entries). STAP_ENOMEM at root when it cannot hold them. */
int par_gatherv(const void *mine, size_t bytes, void **all, size_t *counts, int root,
                stap_error *err);

/* A file the ranks write at once, each its own byte ranges: with ranks on several hosts by
 * MPI-IO (MPI_File_write_at, whose drivers know Lustre, GPFS and NFS); with every rank on
 * one host, or one process, by pwrite in parallel parts (par_posix.h: one page cache, and a
 * writer thread per rank is not enough to fill it). RTSTAP_MPI_IO=mpiio takes MPI-IO on one
 * host too. */
typedef struct par_file par_file;
/* Collective (the ranks agree that every one opened it): open an existing file for writing,
 * each rank its own handle. */
int par_file_open(par_file **f, const char *path, stap_error *err);
int par_file_write_at(par_file *f, long long at, const void *buf, size_t n, stap_error *err);
/* "MPI-IO" or "pwrite", for reports */
const char *par_file_method(const par_file *f);
/* This rank's writes on the file synced, then closed (not a meeting: rank 0 publishes after
 * the ranks' next one); NULL is a no-op. */
int par_file_close(par_file *f, stap_error *err);

#endif
