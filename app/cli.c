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

void cli_print_timing(const stap_config *cfg, const char *input, const double *t,
                         double read_ms, double write_ms, double total_ms)
{
    int N = stap_dof(cfg), M = stap_training_rows(cfg);
    int batch = cfg->doppler_bins * cfg->segments;
    double flops = batch * (8.0 * M * N * N - 8.0 * N * N * N / 3.0);
    fprintf(stderr,
            "rtstap: %s, backend %s\n"
            "  C=%d P=%d R=%d  D=%d Q=%d S=%d K=%d B=%d  loading %g  QR batch %d x %dx%d\n",
            input, la_backend_name(cfg->backend), cfg->channels, cfg->pulses, cfg->range_gates,
            cfg->doppler_bins, cfg->doppler_order, cfg->segments, cfg->training, cfg->beams,
            cfg->loading, batch, M, N);
    double compute = 0;
    for (int i = 0; i < STAP_STAGE_COUNT; i++) compute += t[i];
    fprintf(stderr, "  %-10s %10s %7s\n", "stage", "ms", "share");
    fprintf(stderr, "  %-10s %10.3f\n", "input", read_ms); /* read or synthesized */
    for (int i = 0; i < STAP_STAGE_COUNT; i++) {
        fprintf(stderr, "  %-10s %10.3f %6.1f%%", stap_stage_names[i], t[i],
                compute > 0 ? 100.0 * t[i] / compute : 0.0);
        if (i == STAP_STAGE_QR && t[i] > 0)
            fprintf(stderr, "   %.1f GFLOP/s", flops / (t[i] * 1e6));
        fputc('\n', stderr);
    }
    fprintf(stderr, "  %-10s %10.3f\n", "write", write_ms);
    fprintf(stderr, "  %-10s %10.3f   (compute %.3f ms)\n", "total", total_ms, compute);
}


int cli_parse_layout(const char *value, cli_input_opts *o)
{
    rt_error err;
    if (stap_layout_parse(value, &o->read.layout, &err)) {
        cli_error(EXIT_USAGE, "--layout: %s", err.msg);
        return -1;
    }
    o->read.override = 1;
    o->layout_arg = value;
    return 0;
}

int cli_parse_scale(const char *value, cli_input_opts *o)
{
    double s;
    if (cli_double("--scale", value, 1e-300, 1e300, &s)) return -1;
    o->read.has_scale = 1;
    o->read.scale = s;
    o->scale_arg = value;
    return 0;
}

int cli_input_opts_need_input(const cli_input_opts *o, const char *input)
{
    if (input) return 0;
    if (o->layout_arg) return cli_error(EXIT_USAGE, "--layout needs --input FILE");
    if (o->scale_arg) return cli_error(EXIT_USAGE, "--scale needs --input FILE");
    return 0;
}

int cli_check_layout(const char *path, const stap_input *in, const cli_input_opts *o)
{
    const stap_layout_report *r = &in->layout;
    char order[64], why[128];
    stap_layout_string(&r->layout, r->rank, order, sizeof order);
    if (r->source == STAP_LAYOUT_OVERRIDE && r->labels_differ)
        fprintf(stderr, "rtstap: warning: %s: --layout %s overrides the axis labels of /data/iq "
                "(%s): read as (%s)\n", path, o->layout_arg, r->labels, order);
    if (r->source != STAP_LAYOUT_ASSUMED) return EXIT_OK;
    if (o->strict)
        return cli_error(EXIT_PROCESSING, "%s: /data/iq has no axis labels; --strict refuses to "
                         "read it as (%s) — label it or pass --layout", path, order);
    if (stap_shape_looks_transposed(in->channels, in->pulses, in->range_gates, why, sizeof why))
        return cli_error(EXIT_PROCESSING, "%s: /data/iq (rank %d) has no axis labels, and read "
                         "as (%s) its %d x %d x %d cube has %s: its axes look transposed — label "
                         "them (HDF5 dimension labels, or a 'dims' attribute such as "
                         "\"pulse,channel,range\") or pass --layout with the order they were "
                         "written in", path, r->rank, order, in->channels, in->pulses,
                         in->range_gates, why);
    fprintf(stderr, "rtstap: warning: %s: /data/iq has no axis labels; read as (%s) — label it "
            "or pass --layout\n", path, order);
    return EXIT_OK;
}
