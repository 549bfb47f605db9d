/* run_agree.c: rtstap-mpi's ranks agree on what they run before any of them writes (issue 43).
 *
 * Each rank opened its own input with its own arguments: an MPMD job (mpirun -n 1 ... a.h5 :
 * -n 1 ... b.h5), another --beams on one rank, or a file replaced by a rename while the ranks
 * opened it, gave each rank another recording or configuration, and the ranks' rows were
 * written into one file as if they were one run's (rows of another size: a heap over-read;
 * one rank's one CPI against the others' recording: collectives that never met, a hang).
 * Here every rank that opened its input meets the others (par_check: a rank that failed is
 * named) and gives its fingerprint: which file it opened (device, inode, size, mtime of the
 * descriptor HDF5 holds), its shape, sample type and scale, the resolved configuration, the
 * detector, what the file keeps and where it goes. Any field another rank sees otherwise
 * than rank 0 stops every rank with exit 1, naming the rank and the field, before any rank
 * takes a path of its own: nothing is written. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "par.h"
#include "run_job.h"

enum { AGREE_MAX = 64 };
typedef enum { AG_INT, AG_REAL, AG_HASH, AG_DEVICE } agree_kind;

typedef struct fingerprint {
    int n;
    const char *name[AGREE_MAX];
    agree_kind kind[AGREE_MAX];
    uint64_t v[AGREE_MAX];
} fingerprint;

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return s ? h : 0;
}

static void put(fingerprint *f, const char *name, agree_kind kind, uint64_t v)
{
    f->name[f->n] = name;
    f->kind[f->n] = kind;
    f->v[f->n++] = v;
}

static void put_int(fingerprint *f, const char *name, long long v) { put(f, name, AG_INT, (uint64_t)v); }

static void put_real(fingerprint *f, const char *name, double x)
{
    uint64_t v;
    memcpy(&v, &x, sizeof v);
    put(f, name, AG_REAL, v);
}

/* the input: which file, its shape, its samples */
static int input_fields(const run_job *j, fingerprint *f)
{
    stap_file_identity id = {0};
    stap_error err;
    if (j->rec && stap_recording_identity(j->rec, &id, &err)) return cli_fail(&err);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    put(f, "host", AG_HASH, fnv1a(host)); /* (not compared: the file's device is, on one host) */
    put_int(f, "input (a recording, one CPI or synthesized)", j->rec ? stap_recording_rank(j->rec) : 0);
    put_int(f, "channels", j->in.channels);
    put_int(f, "pulses", j->in.pulses);
    put_int(f, "range gates", j->in.range_gates);
    put_int(f, "CPIs in the file", j->rec ? stap_recording_cpis(j->rec) : 1);
    put_int(f, "written CPIs", j->rec ? stap_recording_written(j->rec) : 1);
    put(f, "sample type", AG_HASH, fnv1a(j->in.samples));
    put_real(f, "scale", j->in.scale);
    const stap_layout *l = &j->in.layout.layout;
    put_int(f, "axis order", l->axis[0] * 16 + l->axis[1] * 4 + l->axis[2]);
    put_int(f, "steering vectors", j->in.steering_beams);
    put(f, "input file's device", AG_DEVICE, id.device);
    put_int(f, "input file's inode", (long long)id.inode);
    put_int(f, "input file's size", id.size);
    put_int(f, "input file's mtime (ns)", id.mtime_ns);
    return EXIT_OK;
}

/* the configuration as run_apply_options resolves it (on a copy: the note is said later,
 * once), the detector, what the result keeps and where it goes */
static void config_fields(const run_job *j, fingerprint *f)
{
    run_job c = *j;
    c.quiet = 1;
    memset(&c.look, 0, sizeof c.look); /* the configuration only: no steering built here */
    (void)run_apply_options(&c);
    const stap_config *g = &c.cfg;
    put_int(f, "--preset", j->preset);
    put_int(f, "--backend", g->backend);
    put_int(f, "--algorithm", g->algorithm);
    put_int(f, "--doppler-bins", g->doppler_bins);
    put_int(f, "--doppler-order", g->doppler_order);
    put_int(f, "--segments", g->segments);
    put_int(f, "--training", g->training);
    put_int(f, "--training-window", g->training_window);
    put_int(f, "block", g->block);
    put_int(f, "guard", g->guard);
    put_int(f, "--beams", g->beams);
    put_int(f, "--look", j->look.n);
    put_int(f, "--sector", j->look.sector_given);
    put_real(f, "--loading", g->loading);
    put_int(f, "--window", g->window);
    put_real(f, "--window's sidelobe level", g->chebyshev_db);
    put_real(f, "element spacing", g->element_spacing);
    put_int(f, "angle bins", g->angle_bins);
    put_int(f, "DPCA shift", g->dpca_shift);
    put_int(f, "--cfar", j->cfar.kind);
    put_real(f, "--cfar-pfa", j->cfar.pfa);
    put_int(f, "--cfar-guard", j->cfar.guard);
    put_int(f, "--cfar-train", j->cfar.train);
    put_int(f, "--cfar-os-rank", j->cfar.os_rank);
    put_int(f, "CFAR Doppler guard", j->cfar.guard_doppler);
    put_int(f, "CFAR Doppler training", j->cfar.train_doppler);
    put_int(f, "the detector given", j->cfar_given);
    put_int(f, "--keep", (long long)j->keep);
    put_int(f, "--keep-output", j->keep_output);
    put_int(f, "--check", j->check);
    put_int(f, "--strict", j->inopts.strict);
    put(f, "--output", AG_HASH, fnv1a(j->output));
    put_int(f, "--force", j->force);
}

static void value_string(const fingerprint *f, int i, uint64_t v, char *out, size_t len)
{
    double x;
    memcpy(&x, &v, sizeof x);
    if (f->kind[i] == AG_REAL) snprintf(out, len, "%.17g", x);
    else snprintf(out, len, "%llu", (unsigned long long)v);
}

int run_agree(run_job *j, int status)
{
    status = par_check(status); /* every rank opened its input (else each failed one is named) */
    if (status || par_size() == 1) return status;
    static fingerprint f; /* (one per process) */
    memset(&f, 0, sizeof f);
    int ok = input_fields(j, &f) == EXIT_OK, oks[PAR_MAX_RANKS];
    config_fields(j, &f);
    par_allgather(&ok, sizeof ok, oks);
    for (int k = 0; k < par_size(); k++)
        if (!oks[k]) return par_rank() == k ? EXIT_PROCESSING
                                            : cli_error(EXIT_PROCESSING, "rank %d could not tell which "
                                                        "file it opened; nothing written", k);
    static uint64_t all[PAR_MAX_RANKS * AGREE_MAX];
    par_allgather(f.v, sizeof f.v, all);
    /* every rank compares every rank's with rank 0's (each comes to the same verdict) */
    for (int k = 1; k < par_size(); k++)
        for (int i = 0; i < f.n; i++) {
            const uint64_t mine = all[(size_t)k * AGREE_MAX + i], first = all[i];
            if (mine == first || !strcmp(f.name[i], "host")) continue;
            if (f.kind[i] == AG_DEVICE && all[(size_t)k * AGREE_MAX] != all[0]) continue;
            const char *in = j->input ? j->input : j->input_name;
            const char *hint = strstr(f.name[i], "file's") ? " (was it replaced while they opened it?)" : "";
            if (f.kind[i] == AG_HASH)
                return cli_error(EXIT_PROCESSING, "%s: rank %d's %s differs from rank 0's: the ranks "
                                 "must run one recording with one configuration; nothing written", in,
                                 k, f.name[i]);
            char a[64], b[64];
            value_string(&f, i, mine, a, sizeof a);
            value_string(&f, i, first, b, sizeof b);
            return cli_error(EXIT_PROCESSING, "%s: rank %d's %s is %s, rank 0's %s%s: the ranks must "
                             "run one recording with one configuration; nothing written", in, k,
                             f.name[i], a, b, hint);
        }
    return EXIT_OK;
}
