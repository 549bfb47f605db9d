/* rtstap: real-time space-time adaptive processing for airborne radar.
 * main.c dispatches the subcommands; each lives in its own cmd_*.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "signals.h"
#include "cli.h"
#include "cli_files.h"
#include "cli_opts.h" /* cli_edit_distance */
#include "commands.h"
#include "engine.h" /* stap_gpu_info */
#include "h5io.h"
#include "cmd_scene.h"
#include "linalg.h"
#include "par.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: rtstap <command> [options]\n       rtstap help [<command>] | --help | "
            "--version (-V) | --help-all markdown|man|bash\n\ncommands:\n");
    for (int i = 0; i < cli_command_count; i++)
        fprintf(f, "  %-15s %s\n", cli_commands[i].name, cli_commands[i].summary);
    fprintf(f, "\n'rtstap help <command>' (or 'rtstap <command> --help') describes a command's "
            "options;\na mistyped command or option is answered with the closest name.\n");
}

/* The lapack baseline at its real speed: when OpenBLAS took this CPU for one without AVX2
 * (it reads OPENBLAS_CORETYPE only when it loads, before main), start again with the core
 * type that fits, once; say so once. A user's own OPENBLAS_CORETYPE is left alone. */
static void fit_blas_to_cpu(char **argv)
{
    const char *from = getenv("RTSTAP_BLAS_REEXEC_FROM");
    if (from) {
        stap_la_blas_info bi;
        stap_la_blas_query(&bi);
        fprintf(stderr, "rtstap: note: OpenBLAS took this CPU (%s) for %s, generic kernels; "
                "restarted with OPENBLAS_CORETYPE=%s\n", bi.cpu_features, from, bi.core);
        unsetenv("RTSTAP_BLAS_REEXEC_FROM");
        return;
    }
    /* RTSTAP_BLAS_RECHECK=1 (tests): judge a user's OPENBLAS_CORETYPE like a detection */
    if (getenv("OPENBLAS_CORETYPE") && !getenv("RTSTAP_BLAS_RECHECK")) return;
    unsetenv("RTSTAP_BLAS_RECHECK");
    stap_la_blas_info bi;
    stap_la_blas_query(&bi);
    if (!bi.better_core) return;
    setenv("OPENBLAS_CORETYPE", bi.better_core, 1);
    setenv("RTSTAP_BLAS_REEXEC_FROM", bi.core, 1);
    execv("/proc/self/exe", argv);
    /* not restarted: go on with what OpenBLAS chose (reported by --version and benches) */
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv("RTSTAP_BLAS_REEXEC_FROM");
}

/* an unknown command: the closest one named, then the usage */
static int unknown_command(const char *name)
{
    const char *best = NULL;
    size_t bd = strlen(name) / 3 > 1 ? strlen(name) / 3 + 1 : 2;
    for (int i = 0; i < cli_command_count; i++) {
        const size_t d = cli_edit_distance(cli_commands[i].name, strlen(cli_commands[i].name), name,
                                           strlen(name));
        if (d < bd) bd = d, best = cli_commands[i].name;
    }
    if (best) cli_error(EXIT_USAGE, "unknown command '%s'; did you mean %s?", name, best);
    else cli_error(EXIT_USAGE, "unknown command '%s'", name);
    usage(stderr);
    return EXIT_USAGE;
}

static int dispatch(int argc, char **argv);

int main(int argc, char **argv)
{
    fit_blas_to_cpu(argv); /* (may start again: before MPI) */
    if (par_init(&argc, &argv)) return EXIT_PROCESSING;
    cli_signals_install(); /* no hidden .NAME.tmp.* left by an interrupted write */
    int status = dispatch(argc, argv);
    /* rtstap-mpi: the ranks that did not meet in the command meet here (par.h) */
    if (!par_begun()) status = par_check_end(status);
    par_finalize();
    return status;
}

/* rtstap-mpi with several ranks: run and stream run on every rank; any other command on rank
 * 0 alone (the others wait for its status in main's par_check) */
static int rank_runs(const char *command)
{
    if (par_size() == 1 || !command || !strcmp(command, "run") || !strcmp(command, "stream")) return 1;
    if (par_rank() == 0 && command[0] != '-' && strcmp(command, "help"))
        fprintf(stderr, "rtstap-mpi: '%s' runs on rank 0 alone\n", command);
    return par_rank() == 0;
}

static int dispatch(int argc, char **argv)
{
    if (!rank_runs(argc > 1 ? argv[1] : NULL)) return EXIT_OK;
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "help")) { /* rtstap help [CMD]: the usage, or CMD --help */
        if (argc < 3) {
            usage(stdout);
            return EXIT_OK;
        }
        char *help_argv[] = {argv[2], (char *)"--help", NULL};
        for (int i = 0; i < cli_command_count; i++)
            if (!strcmp(argv[2], cli_commands[i].name)) return cli_commands[i].fn(2, help_argv);
        return unknown_command(argv[2]);
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        stap_error e;
        int gpu = stap_backend_available(STAP_BACKEND_GPU, &e) == STAP_OK;
        stap_la_blas_info bi;
        stap_la_blas_query(&bi);
        char line[600] = "available", dev[256];
        if (!gpu) /* e.g. "no CUDA driver (CUDA driver version is insufficient for ...)" */
            snprintf(line, sizeof line, "not available: %s", e.msg);
        else if (stap_gpu_info(dev, sizeof dev, NULL, NULL, &e) == STAP_OK)
            snprintf(line, sizeof line, "available (device 0: %s)", dev);
        printf("%s %s (commit %s)\nGPU backend: %s\nCPU: %s (%s); cpu backend kernels %s\n"
               "BLAS: %s; core %s\n",
               par_program(), RTSTAP_VERSION, RTSTAP_COMMIT, line, bi.cpu_model, bi.cpu_features,
               stap_la_cpu_kernels(), bi.library, bi.core);
        if (*par_describe()) printf("MPI: %s\n", par_describe());
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--help-all")) { /* the reference documentation (docs/cli.md) */
        if (argc != 3)
            return cli_error(EXIT_USAGE, "--help-all takes one format: markdown, man or bash");
        return cli_doc(argv[2]);
    }
    for (int i = 0; i < cli_command_count; i++)
        if (!strcmp(argv[1], cli_commands[i].name))
            return cli_files_invariants(cli_commands[i].fn(argc - 1, argv + 1), argc, argv);
    return unknown_command(argv[1]);
}
