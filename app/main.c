/* rtstap: real-time space-time adaptive processing for airborne radar.
 * main.c dispatches the subcommands; each lives in its own cmd_*.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "signals.h"
#include "cli.h"
#include "cli_files.h"
#include "cli_opts.h" /* cli_suggest */
#include "commands.h"
#include "engine.h" /* stap_gpu_info */
#include "env.h"
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

/* The lapack baseline at its real speed. OpenBLAS picks its kernels when it loads, before
 * main, and reads OPENBLAS_CORETYPE only then; Debian's 0.3.21 takes some AVX-512 CPUs under
 * virtualization for Prescott (generic SSE3 kernels, about 3.5x slower). Only the lapack
 * backend runs OpenBLAS (the cpu backend's kernels are rtstap's own, so its results never
 * depend on OpenBLAS's choice): so only a command that will run the lapack backend — bench,
 * bench-qr, or any command given --backend lapack — starts again, once, with the core type
 * that fits. Nothing is printed here: the core and where it came from are reported with the
 * measurements (--version, the benches' platform line, the JSON reports' "blas" object).
 * A user's own OPENBLAS_CORETYPE is left alone; RTSTAP_BLAS_RECHECK=1 (the tests' simulated
 * misdetection) judges it like a detection. */
static int runs_vendor_blas(int argc, char **argv)
{
    if (argc < 2) return 0;
    if (!strcmp(argv[1], "bench") || !strcmp(argv[1], "bench-qr")) return 1;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "--backend=lapack")) return 1;
        if (!strcmp(argv[i], "--backend") && i + 1 < argc && !strcmp(argv[i + 1], "lapack")) return 1;
    }
    return 0;
}

static void fit_blas_to_cpu(int argc, char **argv)
{
    const char *from = getenv("RTSTAP_BLAS_REEXEC_FROM");
    if (from) { /* the second start: remember, and hand nothing on to child processes */
        cli_blas_set_restarted_from(from);
        unsetenv("RTSTAP_BLAS_REEXEC_FROM");
        return;
    }
    const int recheck = getenv("RTSTAP_BLAS_RECHECK") != NULL;
    if (!runs_vendor_blas(argc, argv) || (getenv("OPENBLAS_CORETYPE") && !recheck)) return;
    unsetenv("RTSTAP_BLAS_RECHECK");
    stap_la_blas_info bi;
    stap_la_blas_query(&bi);
    if (!bi.better_core) return;
    setenv("OPENBLAS_CORETYPE", bi.better_core, 1);
    setenv("RTSTAP_BLAS_REEXEC_FROM", bi.core, 1);
    execv("/proc/self/exe", argv);
    /* not restarted: go on with what OpenBLAS chose (reported with the measurements) */
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv("RTSTAP_BLAS_REEXEC_FROM");
}

/* an unknown command: the closest one named (the usage promises it), else the commands */
static int unknown_command(const char *name)
{
    const char *names[64] = {0};
    int n = 0;
    while (n < cli_command_count && n < 64) names[n] = cli_commands[n].name, n++;
    char best[256], all[512] = "";
    if (cli_suggest(name, strlen(name), names, n, "", best, sizeof best))
        return cli_error(EXIT_USAGE, "unknown command '%s'; did you mean %s? (see rtstap --help)",
                         name, best);
    for (int i = 0; i < n; i++) {
        const size_t u = strlen(all);
        snprintf(all + u, sizeof all - u, "%s%s", i ? ", " : "", names[i]);
    }
    return cli_error(EXIT_USAGE, "unknown command '%s'; the commands are %s (see rtstap --help)",
                     name, all);
}

static int dispatch(int argc, char **argv);

int main(int argc, char **argv)
{
    fit_blas_to_cpu(argc, argv); /* (may start again: before MPI) */
    if (par_init(&argc, &argv)) return EXIT_PROCESSING;
    cli_signals_install(); /* no hidden .NAME.tmp.* left by an interrupted write */
    stap_error err;
    int status = cli_env_process(&err) ? cli_fail(&err) : dispatch(argc, argv);
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
        if (bi.better_core) /* the lapack baseline would run generic kernels: say what happens */
            printf("BLAS note: OpenBLAS took this CPU for %s (generic kernels); bench, bench-qr and "
                   "--backend lapack restart with OPENBLAS_CORETYPE=%s%s\n",
                   bi.core, bi.better_core,
                   getenv("OPENBLAS_CORETYPE") ? " unless OPENBLAS_CORETYPE is set" : "");
        if (*stap_la_gpu_library()) printf("GPU library: %s\n", stap_la_gpu_library());
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
