/* fuzz_cli: rtstap's command line. The input is text, one argument a line: the first line
 * names a subcommand (or picks one by its first byte), the others are its arguments. Each
 * subcommand runs its real option parsing and checks; a trailing "stopper" that the parser
 * must accept or reject (an output in a missing directory, a missing input, an invalid
 * value, whichever that command checks first) keeps it from computing or writing, so
 * every input ends in a usage or processing error, or --help. The pseudo-commands
 * "cli_int" and "cli_double" give their lines to the strict number parsers of app/cli.c.
 * Checks: no crash, no undefined behaviour, no leak, no file written in the working
 * directory (a scratch directory, entered for the call), and the number parsers' results in range. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_scene.h"
#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_ARGS = 64 };

typedef struct command {
    const char *name;
    int (*fn)(int, char **);
    const char *stop_flag, *stop_value; /* "%s" in the value: the scratch directory */
} command;

static const command commands[] = {
    {"run", cmd_run, "--output", "%s/no-such-dir/out.h5"},
    {"stream", cmd_stream, "--input", "%s/no-such-dir/in.h5"},
    {"bench", cmd_bench_pipeline, "--workloads", "no-such-workload"},
    {"bench-qr", cmd_bench_qr, "--json", "%s"}, /* exists: refused before any timing */
    {"perfect", cmd_perfect, "--output", "%s/no-such-dir/out.bin"},
    {"import-perfect", cmd_import_perfect, "--input-dir", "%s/no-such-dir"},
    {"gen", cmd_gen, "--channels", "0"},        /* checked after every other flag */
    {"sinr", cmd_sinr, "--input", "%s/no-such-dir/in.h5"},
    {"plot", cmd_plot, "--input", "%s/no-such-dir/in.h5"},
    {"send", cmd_send, "--input", "%s/no-such-dir/in.h5"}, /* opened before --vrt's host is resolved */
    {"listen", cmd_listen, "--shape", "0,1,1"}, /* checked before the socket is bound */
    {"cli_int", NULL, NULL, NULL},
    {"cli_double", NULL, NULL, NULL},
};
enum { NCOMMANDS = sizeof commands / sizeof *commands };

static char cwd[4096];
static int home = -1; /* the directory the fuzzer started in (corpus and artifacts) */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    /* commands print usage and errors: stdout goes nowhere (libFuzzer reports on stderr;
     * run.sh adds -close_fd_mask=2 for the commands' own stderr) */
    if (!freopen("/dev/null", "w", stdout)) fz_die("harness: cannot redirect stdout");
    fz_path("cwd", cwd, sizeof cwd);
    home = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (mkdir(cwd, 0700) != 0 || home < 0) fz_die("harness: cannot make %s", cwd);
    /* OpenBLAS reads it once: the commands that run the lapack baseline would have rtstap's
     * main restart itself without it (the harness has no such main) */
    setenv("OPENBLAS_CORETYPE", "Haswell", 0);
    return 0;
}

static void check_cwd_empty(const char *name)
{
    DIR *d = opendir(cwd);
    if (!d) fz_die("harness: cannot list %s", cwd);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            fz_die("'%s' wrote '%s' into the working directory", name, e->d_name);
    closedir(d);
}

static void numbers(int which, int argc, char **argv)
{
    static const long ranges[][2] = {{1, 1 << 20}, {0, 4096}, {-5, 5}, {1, 100000}, {0, 0}};
    static const double dranges[][2] = {{0, 1e30}, {1e-300, 0.5}, {-150, 150}, {1e-3, 399}};
    for (int a = 1; a < argc; a++) {
        const int r = a % 4;
        if (which == 0) {
            int v = -12345;
            if (!cli_int("--int", argv[a], ranges[r][0], ranges[r][1], &v) &&
                (v < ranges[r][0] || v > ranges[r][1] || v != strtol(argv[a], NULL, 10)))
                fz_die("cli_int accepted '%s' as %d outside [%ld, %ld]", argv[a], v, ranges[r][0],
                       ranges[r][1]);
        } else {
            double v = NAN;
            if (!cli_double("--double", argv[a], dranges[r][0], dranges[r][1], &v) &&
                (!isfinite(v) || v < dranges[r][0] || v > dranges[r][1]))
                fz_die("cli_double accepted '%s' as %g outside [%g, %g]", argv[a], v,
                       dranges[r][0], dranges[r][1]);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the lines, each its own allocation (so that reading past one is caught) */
    char *args[MAX_ARGS + 4];
    int argc = 0;
    size_t at = 0;
    while (at <= size && argc < MAX_ARGS) {
        size_t end = at;
        while (end < size && data[end] != '\n') end++;
        args[argc] = malloc(end - at + 1);
        memcpy(args[argc], data + at, end - at);
        args[argc][end - at] = '\0'; /* a NUL inside ends the argument, as in argv */
        argc++;
        at = end + 1;
    }
    const command *c = NULL;
    for (int k = 0; k < NCOMMANDS && !c; k++)
        if (!strcmp(args[0], commands[k].name)) c = &commands[k];
    if (!c) c = &commands[size ? data[0] % NCOMMANDS : 0];
    free(args[0]);
    args[0] = strdup(c->name);
    if (!c->fn) {
        numbers(strcmp(c->name, "cli_int") ? 1 : 0, argc, args);
    } else {
        char value[4096 + 64];
        snprintf(value, sizeof value, c->stop_value, fz_dir());
        args[argc++] = strdup(c->stop_flag);
        args[argc++] = strdup(value);
        args[argc] = NULL;
        /* getopt may permute argv: the harness keeps its own list of what to free */
        char *argv[MAX_ARGS + 4], *owned[MAX_ARGS + 4];
        memcpy(argv, args, sizeof(char *) * (size_t)(argc + 1));
        memcpy(owned, args, sizeof(char *) * (size_t)argc);
        if (chdir(cwd) != 0) fz_die("harness: cannot enter %s", cwd);
        fz_watch(c->name);
        const int st = c->fn(argc, argv);
        fz_unwatch();
        if (fchdir(home) != 0) fz_die("harness: cannot return to the starting directory");
        if (st != EXIT_OK && st != EXIT_PROCESSING && st != EXIT_USAGE)
            fz_die("'%s' returned exit status %d", c->name, st);
        memcpy(args, owned, sizeof(char *) * (size_t)argc);
        check_cwd_empty(c->name);
    }
    for (int k = 0; k < argc; k++) free(args[k]);
    return 0;
}
