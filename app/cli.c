/* cli.c: strict option parsing and error reporting shared by the subcommands. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

int cli_error(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("rtstap: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return status;
}

int cli_fail(const rt_error *err)
{
    return cli_error(EXIT_PROCESSING, "%s", err->msg[0] ? err->msg : rt_status_name(err->code));
}

int cli_int(const char *flag, const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi) {
        cli_error(EXIT_USAGE, "%s expects an integer between %ld and %ld (got '%s')", flag, lo,
                  hi, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int cli_double(const char *flag, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < lo || v > hi) {
        cli_error(EXIT_USAGE, "%s expects a number between %g and %g (got '%s')", flag, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}
