/* cli: shared pieces of rtstap's command line — strict number parsing, error output
 * and exit statuses (0 ok, 1 input or processing error, 2 usage). */
#ifndef CLI_H
#define CLI_H

#include <stdio.h>

#include "rt_error.h"
#include "stap.h"

enum { EXIT_OK = 0, EXIT_PROCESSING = 1, EXIT_USAGE = 2 };

/* Print "rtstap: error: <msg>" on stderr; return the given exit status. */
int cli_error(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The library's error as a processing (1) or, for RT_EINVAL raised by option checks,
 * processing as well: everything the library reports is about inputs or data. */
int cli_fail(const rt_error *err);

/* The usage error for the argument getopt_long refused (returned '?') in `command`. */
int cli_unknown_option(const char *command, int argc, char **argv);

/* Strict parsers: the whole string must be a number in range; on failure print a usage
 * error naming the flag and return -1. */
int cli_int(const char *flag, const char *s, long lo, long hi, int *out);
int cli_double(const char *flag, const char *s, double lo, double hi, double *out);

/* The stage-timing table on stderr (shared by run and perfect). */
void cli_print_timing(const stap_config *cfg, const char *input, const double *t,
                      double read_ms, double write_ms, double total_ms);

/* Subcommands: each takes argv[0] = its name and returns the exit status. */
int cmd_run(int argc, char **argv);
int cmd_bench_qr(int argc, char **argv);
int cmd_perfect(int argc, char **argv);
int cmd_import_perfect(int argc, char **argv);
int cmd_stream(int argc, char **argv);
int cmd_bench_pipeline(int argc, char **argv);

#endif
