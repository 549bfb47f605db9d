/* cli.c: strict option parsing and error reporting shared by the subcommands. */
#include "env.h"
#include "cli.h"
#include "par.h"
#include "result_info.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The parameters of the library's messages that are command-line flags. An array field
 * (jammers, targets) is followed by its index in the message, [i]; its flag is given once
 * per element, so it is shown as the flag and the ordinal i + 1. */
static const struct cli_param {
    const char *param, *flag;
} cli_params[] = {
    {"stap_config.doppler_bins", "--doppler-bins"},
    {STAP_SUBCPI_PARAM, "--sub-cpi"}, /* before doppler_order: the longer name first */
    {"stap_config.doppler_order", "--doppler-order"},
    {"stap_config.segments", "--segments"},
    {"stap_config.training_window", "--training-window"},
    {"stap_config.training", "--training"},
    {"stap_config.block", "--block"},
    {"stap_config.guard", "--guard"},
    {"stap_config.loading", "--loading"},
    {"stap_config.beams", "--beams"},
    {"stap_config.threads", "--threads"},
    {"stap_config.qr", "--qr"},
    {"stap_config.chebyshev_db", "--window chebyshev:DB"},
    {"stap_config.angle_bins", "--angle-bins"},
    {"stap_config.algorithm", "--algorithm"},
    {"stap_config.dpca_shift", "--dpca-shift"},
    {"stap_cfar_config.kind", "--cfar"},
    {"stap_cfar_config.pfa", "--cfar-pfa"},
    {"stap_cfar_config.guard", "--cfar-guard"},
    {"stap_cfar_config.train", "--cfar-train"},
    {"stap_cfar_config.os_rank", "--cfar-rank"},
    {"stap_cfar_config.guard_doppler", "--cfar-guard-doppler"},
    {"stap_cfar_config.train_doppler", "--cfar-train-doppler"},
    {"stap_read_options.dataset", "--dataset"},
    {"stap_read_options.layout", "--layout"},
    {"stap_look.doppler", "--doppler-hz"},
    {"stap_look.az_deg", "--look"},
    {"stap_look.el_deg", "--look"},
    {"scene_config.channels", "--channels"},
    {"scene_config.pulses", "--pulses"},
    {"scene_config.range_gates", "--range-gates"},
    {"scene_config.element_spacing", "--spacing"},
    {"scene_config.carrier_hz", "--carrier"},
    {"scene_config.prf_hz", "--prf"},
    {"scene_config.velocity_mps", "--velocity"},
    {"scene_config.altitude_m", "--altitude"},
    {"scene_config.slant_range_m", "--slant-range"},
    {"scene_config.cnr_db", "--cnr"},
    {"scene_config.patches", "--patches"},
    {"scene_config.jammers", "--jammer"},
    {"scene_config.targets", "--target"},
};

static int ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

const char *cli_flag_names(const char *msg, char *buf, size_t len)
{
    size_t o = 0;
    if (!len) return buf;
    for (const char *p = msg; *p && o + 1 < len;) {
        const struct cli_param *hit = NULL;
        size_t n = 0;
        if (p == msg || !ident_char(p[-1]))
            for (size_t i = 0; i < sizeof cli_params / sizeof cli_params[0]; i++) {
                n = strlen(cli_params[i].param);
                if (!strncmp(p, cli_params[i].param, n) && !ident_char(p[n])) {
                    hit = &cli_params[i];
                    break;
                }
            }
        if (!hit) {
            buf[o++] = *p++;
            continue;
        }
        p += n;
        char idx[32] = "";
        char *end;
        long i = p[0] == '[' ? strtol(p + 1, &end, 10) : -1;
        /* scene_config.jammers[2]; an index past INT_MAX (strtol saturates) is left as text */
        if (i >= 0 && i < INT_MAX && end != p + 1 && *end == ']') {
            snprintf(idx, sizeof idx, " %ld", i + 1);
            p = end + 1;
        }
        int w = snprintf(buf + o, len - o, "%s%s", hit->flag, idx);
        o = w < 0 ? o : (size_t)w >= len - o ? len - 1 : o + (size_t)w;
    }
    buf[o] = '\0';
    return buf;
}

const char *cli_flags_in(stap_error *err)
{
    char buf[sizeof err->msg];
    cli_flag_names(err->msg, buf, sizeof buf);
    memcpy(err->msg, buf, sizeof buf);
    return err->msg;
}

int cli_error(int status, const char *fmt, ...)
{
    char text[2048], shown[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    cli_flag_names(text, shown, sizeof shown);
    par_set_last_error(shown); /* rtstap-mpi: rank 0 prints the others' (par_check) */
    if (par_rank() == 0) fprintf(stderr, "rtstap: error: %s\n", shown);
    return status;
}

int cli_fail(const stap_error *err)
{
    return cli_error(EXIT_PROCESSING, "%s", err->msg[0] ? err->msg : stap_status_name(err->code));
}

int cli_unknown_option(const char *command, int argc, char **argv)
{
    /* In a cluster of short options ("-xy": rtstap has none) getopt_long stays on the
     * cluster until its last letter, and argv[optind - 1] is the argument before it. */
    const char *arg = argv[optind - 1];
    if (optind < argc && optopt > 0 && optopt < 128 && argv[optind][0] == '-' &&
        argv[optind][1] != '-' && strchr(argv[optind] + 1, optopt))
        arg = argv[optind];
    return cli_error(EXIT_USAGE, "unknown option '%s' (see rtstap %s --help)", arg, command);
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

const char *cli_window_str(const stap_config *cfg, char *buf, size_t len)
{
    if (cfg->training_window != STAP_TRAINING_SLIDING) return "";
    snprintf(buf, len, " sliding LB=%d G=%d", cfg->block, cfg->guard);
    return buf;
}

const char *cli_algorithm_str(const stap_config *cfg, char *buf, size_t len)
{
    if (stap_algorithm_traits(cfg) == 0) return ""; /* post-Doppler: nothing to say */
    char label[64];
    snprintf(buf, len, " %s", stap_algorithm_label(cfg, label, sizeof label));
    return buf;
}

void cli_print_timing(const stap_config *cfg, const char *input, const double *t,
                         double read_ms, double write_ms, double total_ms)
{
    int N = stap_adaptive_dof(cfg), M = stap_training_rows(cfg);
    long long batch = stap_training_matrices(cfg);
    double flops = batch * (8.0 * M * N * N - 8.0 * N * N * N / 3.0);
    char wb[64], ab[48];
    fprintf(stderr,
            "rtstap: %s, backend %s\n"
            "  C=%d P=%d R=%d  D=%d Q=%d S=%d K=%d%s B=%d%s  loading %g  QR batch %lld x %dx%d\n",
            input, stap_backend_name(cfg->backend), cfg->channels, cfg->pulses, cfg->range_gates,
            cfg->doppler_bins, cfg->doppler_order, cfg->segments, cfg->training,
            cli_window_str(cfg, wb, sizeof wb), cfg->beams, cli_algorithm_str(cfg, ab, sizeof ab),
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
    stap_error err;
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
    if (o->read.dataset) return cli_error(EXIT_USAGE, "--dataset needs --input FILE");
    return 0;
}

/* The layout's one message (warning or refusal) into msg ("" when there is none); 1 when
 * it refuses the cube (--strict on an unlabelled one, or one whose shape looks transposed) */
static int layout_message(const char *path, const stap_input *in, const cli_input_opts *o,
                          char *msg, size_t len)
{
    const stap_layout_report *r = &in->layout;
    char order[64], why[128];
    const char *ds = in->dataset[0] ? in->dataset : "/data/iq";
    stap_layout_string(&r->layout, r->rank, order, sizeof order);
    msg[0] = '\0';
    if (r->source == STAP_LAYOUT_OVERRIDE && r->labels_differ)
        snprintf(msg, len, "%s: --layout %s overrides the axis labels of %s (%s): read as "
                 "(%s)", path, o->layout_arg, ds, r->labels, order);
    if (r->source != STAP_LAYOUT_ASSUMED) return 0;
    if (o->strict) {
        snprintf(msg, len, "%s: %s has no axis labels; --strict refuses to read it as (%s) "
                 "— label it or pass --layout", path, ds, order);
        return 1;
    }
    if (stap_shape_looks_transposed(in->channels, in->pulses, in->range_gates, why, sizeof why)) {
        snprintf(msg, len, "%s: %s (rank %d) has no axis labels, and read as (%s) its %d x "
                 "%d x %d cube has %s: its axes look transposed — label them (HDF5 dimension "
                 "labels, or a 'dims' attribute such as \"pulse,channel,range\") or pass --layout "
                 "with the order they were written in", path, ds, r->rank, order, in->channels,
                 in->pulses, in->range_gates, why);
        return 1;
    }
    snprintf(msg, len, "%s: %s has no axis labels; read as (%s) — label it or pass --layout",
             path, ds, order);
    return 0;
}

int cli_check_layout(const char *path, const stap_input *in, const cli_input_opts *o)
{
    char msg[1024];
    if (layout_message(path, in, o, msg, sizeof msg)) return cli_error(EXIT_PROCESSING, "%s", msg);
    /* (rtstap-mpi: every rank reads the same file: said once, by rank 0) */
    if (msg[0] && par_rank() == 0) fprintf(stderr, "rtstap: warning: %s\n", msg);
    return EXIT_OK;
}

int cli_warn_layout(const char *path, const stap_input *in, const cli_input_opts *o, char *msg,
                    size_t len)
{
    const int refused = layout_message(path, in, o, msg, len);
    if (msg[0]) fprintf(stderr, "rtstap: warning: %s%s\n", msg, refused ? " (run refuses it)" : "");
    return refused;
}

int cli_fail_input(const char *path, const stap_error *err)
{
    char size[16], stem[4096], dir[4096];
    const stap_file_kind kind = stap_file_kind_of(path, size, sizeof size);
    /* the name without its extension (x.sigmf-meta: x), for the commands named */
    snprintf(stem, sizeof stem, "%s", path);
    char *dot = strrchr(stem, '.');
    if (dot && dot > stem && !strchr(dot, '/')) *dot = '\0';
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) slash[slash == dir] = '\0';
    else snprintf(dir, sizeof dir, ".");
    switch (kind) {
    case STAP_FILE_SIGMF: { /* its metadata: itself, or x.sigmf-meta beside x.sigmf-data */
        const size_t n = strlen(path);
        const int data = n > 11 && !strcmp(path + n - 11, ".sigmf-data");
        return cli_error(EXIT_PROCESSING, "'%s' is a SigMF recording, not an HDF5 file: convert it "
                         "with 'rtstap import-sigmf --meta %s%s --pulses P --range-gates R -o "
                         "%s.h5' (rtstap help import-sigmf)", path, data ? stem : path,
                         data ? ".sigmf-meta" : "", stem);
    }
    case STAP_FILE_PERFECT:
        return cli_error(EXIT_PROCESSING, "'%s' is an input of the PERFECT suite, not an HDF5 file: "
                         "convert it with 'rtstap import-perfect --size %s --input-dir %s -o %s.h5', "
                         "or run the suite's application with 'rtstap perfect'", path, size, dir, size);
    case STAP_FILE_RAW:
        return cli_error(EXIT_PROCESSING, "'%s' is not an HDF5 file: raw interleaved samples convert "
                         "with 'rtstap import-raw --input %s --shape C,P,R --type TYPE -o %s.h5', a "
                         "SigMF recording with 'rtstap import-sigmf'", path, path, stem);
    default: return cli_fail(err);
    }
}

int cli_check_unwritten(const char *path, const stap_recording *rec, int strict, int sending)
{
    const long long all = stap_recording_cpis(rec), written = stap_recording_written(rec);
    if (written == all) return EXIT_OK;
    if (written == 0)
        return cli_error(EXIT_PROCESSING, "%s: none of its %lld CPIs was ever written (HDF5 "
                         "allocated no storage for /data/iq: it would read its fill value)",
                         path, all);
    long long first[8];
    const int n = stap_recording_unwritten(rec, first, 8);
    char list[200] = "";
    size_t at = 0;
    for (int k = 0; k < n && at < sizeof list; k++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%lld", k ? ", " : "", first[k]);
    if (all - written > n && at < sizeof list) snprintf(list + at, sizeof list - at, ", ...");
    if (strict)
        return cli_error(EXIT_PROCESSING, "%s: %lld of its %lld CPIs were never written (CPI %s); "
                         "--strict refuses an incomplete recording", path, all - written, all, list);
    if (par_rank() == 0)
        fprintf(stderr, "rtstap: warning: %s: %lld of its %lld CPIs were never written (CPI %s): %s the "
                "%lld written%s\n", path, all - written, all, list, sending ? "sending" : "running", written,
                sending ? " as stream CPIs 0, 1, ... in order"
                        : "; /axes/input_cpi of the results names each one's CPI");
    return EXIT_OK;
}

int cli_open_recording(const char *path, const cli_input_opts *o, stap_recording **rec, stap_input *in,
                       int sending)
{
    stap_error err;
    int status;
    stap_read_options read = o->read;
    if (cli_env_reader(&read, &err)) return cli_fail(&err);
    if (stap_recording_open(path, rec, in, &read, &err)) return cli_fail_input(path, &err);
    if ((status = cli_check_layout(path, in, o)) || (status = cli_check_unwritten(path, *rec, o->strict, sending)))
        return status;
    return EXIT_OK;
}

static char blas_detected[32]; /* the core OpenBLAS took before rtstap's restart, or "" */

void cli_blas_set_restarted_from(const char *core)
{
    snprintf(blas_detected, sizeof blas_detected, "%s", core ? core : "");
}

const char *cli_blas_restarted_from(void) { return blas_detected[0] ? blas_detected : NULL; }
