/* cmd_import.c: `rtstap import-raw` (a raw file of interleaved complex samples, of a given
 * shape, type and axis order) and `rtstap import-sigmf` (a SigMF recording: .sigmf-meta and
 * .sigmf-data) into a schema-v1.1 file of complex64 samples (stap/io/rawio.h). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_files.h"
#include "cli_json.h"
#include "cli_opts.h"
#include "progress.h"
#include "report.h" /* cli_json_written */
#include "h5io.h"
#include "h5io_extra.h"
#include "rawio.h"

/* The options both commands share: output, scale and the radar metadata. */
typedef struct import_opts {
    const char *output, *json;
    int force, progress;
    double scale;
    stap_radar_meta meta;
} import_opts;

#define IMPORT_OPTIONS(io)                                                                   \
    {"output", 'o', CLI_STRING, &(io)->output, "FILE",                                      \
     "the schema-v1.1 file (written atomically; an existing file is\n"                     \
     "refused without -f)", .alias = "out", .flags = CLI_REQUIRED | CLI_OUTPUT},                         \
    CLI_OPT_FORCE(&(io)->force),                                                            \
    CLI_OPT_PROGRESS(&(io)->progress),                                                      \
    CLI_OPT_JSON(&(io)->json),                                                              \
    {"scale", 0, CLI_DOUBLE, &(io)->scale, "S",                                             \
     "multiply the samples by S (> 0; default 1): the file holds\n"                        \
     "complex64 of the scaled values", .lo = 1e-300, .hi = 1e300},                          \
    {"prf", 0, CLI_DOUBLE, &(io)->meta.prf_hz, "HZ", "/radar prf_hz (> 0)", .lo = 1e-300,  \
     .hi = 1e300, .given = &(io)->meta.has_prf},                                                 \
    {"carrier", 0, CLI_DOUBLE, &(io)->meta.carrier_frequency_hz, "HZ",                     \
     "/radar carrier_frequency_hz (> 0)", .lo = 1e-300, .hi = 1e300,                        \
     .given = &(io)->meta.has_carrier},                                                          \
    {"sample-rate", 0, CLI_DOUBLE, &(io)->meta.sample_rate_hz, "HZ",                       \
     "/radar sample_rate_hz (> 0)", .lo = 1e-300, .hi = 1e300, .given = &(io)->meta.has_sample_rate},   \
    {"spacing", 0, CLI_DOUBLE, &(io)->meta.element_spacing_wavelengths, "D",               \
     "/array element_spacing_wavelengths (> 0)", .lo = 1e-300, .hi = 1e300,                 \
     .given = &(io)->meta.has_element_spacing}


/* Run the import and say what was written. */
static int import_run(const stap_raw_import *imp_in, const import_opts *io)
{
    stap_error err;
    stap_error_clear(&err);
    stap_raw_import imp_p = *imp_in;
    const stap_raw_import *imp = &imp_p;
    progress pg;
    progress_begin(&pg, io->progress, 0, "import", "CPIs", imp->cpis);
    imp_p.progress = progress_fn;
    imp_p.progress_user = &pg;
    const int st = stap_raw_import_file(io->output, imp, &err);
    progress_end(&pg);
    if (st) return cli_fail(&err);
    char cpis[48] = "";
    if (imp->cpis > 0) snprintf(cpis, sizeof cpis, " x %lld CPIs", imp->cpis);
    /* --json -: the JSON alone on stdout, the line on stderr */
    FILE *out = io->json && !strcmp(io->json, "-") ? stderr : stdout;
    const int kept = imp->keep_integers && imp->type <= STAP_RAW_CI32_BE;
    char stored[96];
    snprintf(stored, sizeof stored, kept ? "%s as stored (scale %g)" : "complex64",
             stap_raw_type_name(imp->type), imp->scale);
    fprintf(out, "wrote %s: %s %d channels x %d pulses x %d range gates%s, from %s; process it "
            "with:\n  rtstap run --input %s --output RESULT.h5\n", io->output, stored, imp->channels,
            imp->pulses, imp->range_gates, cpis, stap_raw_type_name(imp->type), io->output);
    if (!io->json) return EXIT_OK;
    cJSON *doc = cli_json_written(imp->source && strstr(imp->source, "import-sigmf") ? "import-sigmf" : "import-raw",
                                  io->output, imp->channels, imp->pulses, imp->range_gates, imp->cpis);
    if (!doc) return cli_error(EXIT_PROCESSING, "out of memory");
    cJSON_AddStringToObject(doc, "input", imp->input);
    cJSON_AddStringToObject(doc, "type", stap_raw_type_name(imp->type));
    cJSON_AddNumberToObject(doc, "scale", imp->scale);
    cJSON_AddStringToObject(doc, "stored", kept ? stap_raw_type_name(imp->type) : "complex64");
    cJSON_AddNumberToObject(doc, "offset", (double)imp->offset);
    char order[64];
    cJSON_AddStringToObject(doc, "stored_order", stap_layout_string(&imp->layout, 3, order, sizeof order));
    const int st2 = cli_json_write(io->json, doc, imp->mode, &err) ? cli_fail(&err) : EXIT_OK;
    cJSON_Delete(doc);
    return st2;
}

/* "C,P,R" or "C,P,R,CPIS": positive integers. */
static int parse_shape(const char *s, int *c, int *p, int *r, long long *cpis)
{
    long long v[4];
    int n = 0;
    const char *at = s;
    while (n < 4) {
        char *end;
        errno = 0;
        v[n] = strtoll(at, &end, 10);
        if (end == at || errno || v[n] < 1 || v[n] > INT_MAX) break;
        n++;
        if (*end == '\0') {
            if (n < 3) break;
            *c = (int)v[0];
            *p = (int)v[1];
            *r = (int)v[2];
            *cpis = n == 4 ? v[3] : 0;
            return 0;
        }
        if (*end != ',') break;
        at = end + 1;
    }
    return cli_error(EXIT_USAGE, "--shape expects C,P,R or C,P,R,CPIS, positive integers "
                     "(channels, pulses, range gates, CPIs; got '%s')", s);
}

/* --offset BYTES: value is the unsigned long long */
static int parse_offset(const cli_opt *o, const char *arg)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (!*arg || *end || errno || arg[0] == '-')
        return cli_error(EXIT_USAGE, "--offset expects a number of bytes (got '%s')", arg);
    *(unsigned long long *)o->value = v;
    return 0;
}

int cmd_import_raw(int argc, char **argv)
{
    static const cli_command cmd = {
        "import-raw",
        "Convert a raw binary file of interleaved complex samples (real, imaginary, real, ...)\n"
        "into a schema-v1.1 file of complex64 samples, labelled (channel, pulse, range). The\n"
        "file must hold exactly CPIS x C x P x R samples of TYPE (after --offset bytes).\n",
        NULL};
    stap_raw_import imp;
    memset(&imp, 0, sizeof imp);
    imp.layout = (stap_layout){{STAP_AXIS_CHANNEL, STAP_AXIS_PULSE, STAP_AXIS_RANGE}};
    import_opts io;
    memset(&io, 0, sizeof io);
    io.scale = 1;
    const char *shape = NULL, *type = NULL, *layout = NULL;
    char type_help[512];
    snprintf(type_help, sizeof type_help, "%s\n(the SigMF names: ci = signed integer, cf = float)",
             stap_raw_type_list());
    stap_error err;
    stap_error_clear(&err);
    cli_opt opts[] = {
        {"input", 0, CLI_STRING, &imp.input, "FILE", "the raw file", .flags = CLI_REQUIRED | CLI_INPUT},
        {"shape", 0, CLI_STRING, &shape, "C,P,R[,CPIS]",
         "channels, pulses, range gates (always in this order), and\n"
         "with CPIS a recording of that many CPIs, one after the other\n"
         "(written CPIs x C x P x R); without, one CPI", .flags = CLI_REQUIRED},
        {"type", 0, CLI_STRING, &type, "TYPE", type_help, .flags = CLI_REQUIRED},
        {"layout", 0, CLI_STRING, &layout, "ORDER",
         "the order the file stores each CPI's axes in, the last the\n"
         "fastest, e.g. P,R,C (default C,P,R)"},
        {"offset", 0, CLI_CALL, &imp.offset, "BYTES",
         "bytes before the first sample (a header; default 0)", .parse = parse_offset},
        IMPORT_OPTIONS(&io),
        {0}};
    int pst = cli_parse(&cmd, opts, argc, argv);
    if (pst != CLI_GO) return pst;
    if (parse_shape(shape, &imp.channels, &imp.pulses, &imp.range_gates, &imp.cpis))
        return EXIT_USAGE;
    if (stap_raw_type_parse(type, &imp.type, &err)) return cli_error(EXIT_USAGE, "--type: %s", err.msg);
    if (layout && stap_layout_parse(layout, &imp.layout, &err))
        return cli_error(EXIT_USAGE, "--layout: %s", err.msg);
    if ((pst = cli_output_ok(io.output, io.force)) || (pst = cli_output_ok(io.json, io.force))) return pst;
    imp.scale = io.scale;
    imp.meta = io.meta;
    imp.mode = cli_write_mode(io.force);
    char order[64], source[1400];
    stap_layout_string(&imp.layout, 3, order, sizeof order);
    snprintf(source, sizeof source, "rtstap import-raw: '%s', %s stored (%s%s), scale %g",
             imp.input, stap_raw_type_name(imp.type), imp.cpis ? "cpi, " : "", order, imp.scale);
    imp.source = source;
    return import_run(&imp, &io);
}

/* ---- SigMF ---------------------------------------------------------------------------- */

/* R and P: the options, else the captures where they are pulses (capture k at k x R
 * samples, together the whole file: one CPI, or --cpis N of them); *pulses_total the
 * samples of a channel the data file holds, divided by R. */
static int sigmf_shape(const char *meta_path, const stap_sigmf_meta *m, unsigned long long samples,
                       int *pulses, int *range, int cpis)
{
    const long long w = m->pulse_samples;
    if (w > 0 && *range && w != *range && !(*pulses && w == (long long)*pulses * *range))
        return cli_error(EXIT_PROCESSING, "%s: the captures start a pulse every %lld samples, "
                         "but --range-gates is %d", meta_path, w, *range);
    if (!*range) {
        if (w <= 0 || w > INT_MAX)
            return cli_error(EXIT_USAGE, "%s: the captures do not mark the pulses (capture k at "
                             "core:sample_start k x R): import-sigmf needs --range-gates R",
                             meta_path);
        *range = (int)w;
    }
    if (*pulses) return EXIT_OK;
    if (w != *range || samples != (unsigned long long)m->captures * (unsigned long long)w)
        return cli_error(EXIT_USAGE, "%s: the captures do not give the pulses of a CPI (%s): "
                         "import-sigmf needs --pulses P", meta_path,
                         w != *range ? "they do not mark the pulses"
                                     : "they do not cover the data file, one capture a pulse");
    const int n = cpis ? cpis : 1;
    if (m->captures % n || m->captures / n > INT_MAX)
        return cli_error(EXIT_PROCESSING, "%s: %lld pulse captures are not %d CPIs of whole pulses",
                         meta_path, m->captures, n);
    *pulses = (int)(m->captures / n);
    return EXIT_OK;
}

/* The import of an opened SigMF recording (m) with the options given. */
static int sigmf_import(const char *meta_path, const stap_sigmf_meta *m, const import_opts *io,
                        int pulses, int range, int channels, int cpis, int integers)
{
    int pst;
    stap_error err;
    stap_error_clear(&err);
    if ((pst = cli_files_input("the data file of --meta", m->dataset))) return pst;
    stap_raw_import imp;
    memset(&imp, 0, sizeof imp);
    if (stap_raw_type_parse(m->datatype, &imp.type, &err))
        return cli_error(EXIT_PROCESSING, "%s: core:datatype: %s", meta_path, err.msg);
    if (channels && channels != m->channels)
        return cli_error(EXIT_PROCESSING, "%s: --channels %d, but core:num_channels is %lld",
                         meta_path, channels, m->channels);
    /* whole CPIs of pulses x range gates x channels samples */
    struct stat sb;
    if (stat(m->dataset, &sb) != 0)
        return cli_error(EXIT_PROCESSING, "%s: its data file '%s': %s", meta_path, m->dataset,
                         strerror(errno));
    if (m->header_bytes > (unsigned long long)sb.st_size)
        return cli_error(EXIT_PROCESSING, "%s: \"captures\"[0].\"core:header_bytes\" %llu is "
                         "beyond the end of '%s' (%llu bytes)", meta_path, m->header_bytes,
                         m->dataset, (unsigned long long)sb.st_size);
    const unsigned long long data = (unsigned long long)sb.st_size - m->header_bytes;
    if ((pst = sigmf_shape(meta_path, m, data / (m->channels * stap_raw_sample_bytes(imp.type)),
                           &pulses, &range, cpis)))
        return pst;
    const unsigned long long cpi_bytes =
        (unsigned long long)pulses * range * m->channels * stap_raw_sample_bytes(imp.type);
    if (!cpis && (data == 0 || data % cpi_bytes))
        return cli_error(EXIT_PROCESSING, "%s: '%s' holds %llu bytes of samples, not a whole "
                         "number of CPIs of %d pulses x %d range gates x %lld channels of %s "
                         "(%llu bytes each)", meta_path, m->dataset, data, pulses, range,
                         m->channels, m->datatype, cpi_bytes);
    const long long n = cpis ? cpis : (long long)(data / cpi_bytes);
    imp.input = m->dataset;
    imp.channels = (int)m->channels;
    imp.pulses = pulses;
    imp.range_gates = range;
    imp.cpis = cpis || n > 1 ? n : 0;
    imp.layout = (stap_layout){{STAP_AXIS_PULSE, STAP_AXIS_RANGE, STAP_AXIS_CHANNEL}};
    imp.scale = io->scale;
    imp.mode = cli_write_mode(io->force);
    imp.offset = m->header_bytes;
    imp.meta = io->meta;
    imp.keep_integers = integers;
    imp.sigmf = m;
    if (!imp.meta.has_prf && m->has_prf) {
        imp.meta.has_prf = 1;
        imp.meta.prf_hz = m->prf;
    }
    if (!imp.meta.has_sample_rate && m->has_rate) {
        imp.meta.has_sample_rate = 1;
        imp.meta.sample_rate_hz = m->sample_rate;
    }
    if (!io->meta.has_carrier && m->has_freq && !m->freq_conflict && m->frequency > 0) {
        imp.meta.has_carrier = 1;
        imp.meta.carrier_frequency_hz = m->frequency;
    }
    if (!io->meta.has_carrier && m->freq_conflict)
        fprintf(stderr, "rtstap: warning: %s: the captures name several core:frequency values; "
                "/radar carrier_frequency_hz is not written (--carrier sets it)\n", meta_path);
    char source[1400];
    snprintf(source, sizeof source, "rtstap import-sigmf: '%s' (%s, %lld channel%s), scale %g",
             meta_path, m->datatype, m->channels, m->channels == 1 ? "" : "s", imp.scale);
    imp.source = source;
    return import_run(&imp, io);
}

int cmd_import_sigmf(int argc, char **argv)
{
    char about[1600];
    snprintf(about, sizeof about,
        "Convert a SigMF recording (FILE.sigmf-meta and its FILE.sigmf-data) into a\n"
        "schema-v1.1 file. The samples are read as a sequence of pulses of R range samples\n"
        "each, P pulses a CPI, CPI after CPI; with core:num_channels C the channels are\n"
        "interleaved sample by sample (SigMF's layout), so each CPI is stored (pulse, range,\n"
        "channel). Captures that mark the pulses (capture k at core:sample_start k x R,\n"
        "together the whole file) give R, and P (one CPI, or --cpis N). Integer samples\n"
        "(ci8, ci16, ci32) are kept as integers with a `scale` attribute; float samples\n"
        "become complex64. core:datatype: %s;\n"
        "core:sample_rate becomes /radar sample_rate_hz, the captures' core:frequency (when\n"
        "they agree) carrier_frequency_hz, global rtstap:prf prf_hz; a first capture's\n"
        "core:header_bytes is skipped; the captures and annotations are kept in /sigmf.\n",
        stap_raw_type_list());
    const cli_command cmd = {"import-sigmf", about,
                             "--sample-rate, --carrier and --prf override what the metadata says.\n"};
    import_opts io;
    memset(&io, 0, sizeof io);
    io.scale = 1;
    const char *meta_path = NULL;
    int pulses = 0, range = 0, channels = 0, cpis = 0, complex64 = 0;
    stap_error err;
    stap_error_clear(&err);
    cli_opt opts[] = {
        {"meta", 0, CLI_STRING, &meta_path, "FILE",
         "the .sigmf-meta file (JSON); the data file beside it is\n"
         "FILE.sigmf-data, or global core:dataset", .flags = CLI_REQUIRED | CLI_INPUT},
        {"pulses", 0, CLI_INT, &pulses, "P",
         "pulses of a CPI (default: from the captures)", .lo = 1, .hi = INT_MAX},
        {"range-gates", 0, CLI_INT, &range, "R",
         "range samples of a pulse (default: from the captures)", .lo = 1, .hi = INT_MAX},
        {"channels", 0, CLI_INT, &channels, "C",
         "must equal core:num_channels (default: it, or 1)", .lo = 1, .hi = 1 << 20},
        {"cpis", 0, CLI_INT, &cpis, "N",
         "CPIs the file holds (default: its samples / (P x R), which\n"
         "must be whole); one CPI is written as a rank-3 cube", .lo = 1, .hi = INT_MAX},
        {"complex64", 0, CLI_FLAG, &complex64, NULL,
         "store integer samples as complex64 of the scaled values\n"
         "(default: as they are, with the scale as an attribute)"},
        IMPORT_OPTIONS(&io),
        {0}};
    int pst = cli_parse(&cmd, opts, argc, argv);
    if (pst != CLI_GO) return pst;
    if ((pst = cli_output_ok(io.output, io.force)) || (pst = cli_output_ok(io.json, io.force))) return pst;
    stap_sigmf_meta m;
    if (stap_sigmf_read_meta(meta_path, &m, &err)) return cli_fail(&err);
    pst = sigmf_import(meta_path, &m, &io, pulses, range, channels, cpis, !complex64);
    stap_sigmf_meta_free(&m);
    return pst;
}
