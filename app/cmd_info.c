/* cmd_info: `rtstap info FILE` — how rtstap will read a file, before anything runs (issue
 * 33): /data/iq's stored type and scale, its shape, the axis order and where it came from
 * (labels, --layout, an assumption), the CPIs written and unwritten, how the CPIs will be
 * read and reach the engine, the steering vectors and radar metadata, and the configuration
 * a `run` would use (the preset over the file's shape, the options given) with whether it
 * fits. Text on stdout; --json for scripts. */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cli_json.h"
#include "cli_opts.h"
#include "cpi_io.h"
#include "h5io.h"

static const cli_command info_cmd = {
    "info",
    "How rtstap will read a file, before anything runs: /data/iq's stored type and scale,\n"
    "its shape, the axis order and where it came from (labels, --layout, an assumption),\n"
    "the CPIs written and unwritten, how they will be read and reach the engine, the\n"
    "steering vectors and radar metadata, and the configuration a `run` with the same\n"
    "options would use (the preset over the file's shape), with whether it fits.\n",
    NULL};

static const char *source_name(stap_layout_source s)
{
    return s == STAP_LAYOUT_LABELS ? "the file's labels"
           : s == STAP_LAYOUT_OVERRIDE ? "--layout"
                                       : "assumed: the file names no axes";
}

int cmd_info(int argc, char **argv)
{
    const char *input = NULL, *json = NULL;
    int force = 0;
    stap_preset preset = STAP_PRESET_HARD;
    cli_input_opts inopts;
    memset(&inopts, 0, sizeof inopts);
    cli_processing proc;
    memset(&proc, 0, sizeof proc);
    cli_opt opts[] = {
        {"input", 0, CLI_STRING, &input, "FILE", "the file to describe", .flags = CLI_REQUIRED | CLI_INPUT},
        CLI_OPT_LAYOUT(&inopts),
        CLI_OPT_DATASET(&inopts),
        CLI_OPT_SCALE(&inopts),
        {"preset", 0, CLI_CALL, &preset, "NAME",
         "the preset a run would start from (default hard)", .parse = cli_parse_preset},
        CLI_OPTS_PROCESSING(&proc),
        CLI_OPT_JSON(&json),
        CLI_OPT_FORCE(&force),
        {0}};
    int pst = cli_parse(&info_cmd, opts, argc, argv);
    if (pst != CLI_GO) return pst;
    if ((pst = cli_output_ok(json, force))) return pst;
    stap_error err;
    stap_recording *rec = NULL;
    stap_input in;
    if (stap_recording_open(input, &rec, &in, &inopts.read, &err)) return cli_fail(&err);
    const int rank = stap_recording_rank(rec);
    const long long cpis = stap_recording_cpis(rec), written = stap_recording_written(rec);
    char order[96], samples[240], cfgline[200] = "";
    stap_layout_string(&in.layout.layout, rank, order, sizeof order);
    stap_sample_format fmt;
    cpi_input_format(rec, 0, &fmt, samples, sizeof samples);
    /* what a run would use: the preset, the file's shape, D = P, the options given */
    stap_config c;
    stap_config_defaults(&c);
    stap_preset_config(preset, &c);
    c.channels = in.channels;
    c.pulses = in.pulses;
    c.range_gates = in.range_gates;
    c.doppler_bins = 0;
    if (in.meta.has_element_spacing) c.element_spacing = in.meta.element_spacing_wavelengths;
    cli_processing_apply(&proc, &c);
    char fitted[400];
    cli_fit_to_shape(&c, &proc, fitted, sizeof fitted); /* as run fits the preset to the file */
    stap_error why;
    char whyflags[600] = "";
    const int fits = stap_config_validate(&c, in.steering != NULL, in.steering_beams,
                                          in.steering ? in.steering_len : 0, &why) == STAP_OK;
    snprintf(cfgline, sizeof cfgline, "D=%d Q=%d S=%d K=%d B=%d, %s", c.doppler_bins,
             c.doppler_order, c.segments, c.training,
             in.steering ? in.steering_beams : c.beams, stap_algorithm_name(c.algorithm));
    FILE *out = json && !strcmp(json, "-") ? stderr : stdout; /* stdout: the JSON only */
    fprintf(out, "%s\n", input);
    fprintf(out, "  %s: %s%s\n", in.dataset, in.samples,
            in.layout.column_major ? " (MATLAB/Octave, column-major: extents reversed)" : "");
    if (rank == 4)
        fprintf(out, "  shape: %lld CPIs x %d channels x %d pulses x %d range gates (a recording)\n", cpis,
               in.channels, in.pulses, in.range_gates);
    else
        fprintf(out, "  shape: %d channels x %d pulses x %d range gates (one CPI)\n", in.channels, in.pulses,
               in.range_gates);
    fprintf(out, "  axes: (%s), from %s%s%s\n", order, source_name(in.layout.source),
           in.layout.labels[0] ? "; labels " : "", in.layout.labels);
    if (rank == 4) fprintf(out, "  CPIs: %lld written, %lld never written\n", written, cpis - written);
    fprintf(out, "  reading: %s\n  samples: %s\n", stap_recording_read_path(rec), samples);
    if (in.steering) fprintf(out, "  steering: %d beams x %d\n", in.steering_beams, in.steering_len);
    else fprintf(out, "  steering: none (the default beams)\n");
    const stap_radar_meta *m = &in.meta;
    fprintf(out, "  radar:");
    if (m->has_prf) fprintf(out, " prf %g Hz", m->prf_hz);
    if (m->has_carrier) fprintf(out, " carrier %g Hz", m->carrier_frequency_hz);
    if (m->has_sample_rate) fprintf(out, " sample rate %g Hz", m->sample_rate_hz);
    if (m->has_element_spacing) fprintf(out, " element spacing %g wavelengths", m->element_spacing_wavelengths);
    if (!m->has_prf && !m->has_carrier && !m->has_sample_rate && !m->has_element_spacing) fprintf(out, " none");
    fprintf(out, "\n  a run (--preset %s and the options given): %s: %s\n", stap_preset_name(preset), cfgline,
           fits ? "fits" : cli_flag_names(why.msg, whyflags, sizeof whyflags)); /* flags named */
    if (fitted[0]) fprintf(out, "  from the file's shape: %s\n", fitted);
    int status = EXIT_OK;
    if (json) {
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "input", input);
        cJSON_AddStringToObject(doc, "stored", in.samples);
        cJSON_AddStringToObject(doc, "dataset", in.dataset);
        cJSON_AddBoolToObject(doc, "column_major", in.layout.column_major);
        cJSON_AddNumberToObject(doc, "rank", rank);
        cJSON_AddNumberToObject(doc, "cpis", (double)cpis);
        cJSON_AddNumberToObject(doc, "cpis_written", (double)written);
        cJSON_AddNumberToObject(doc, "channels", in.channels);
        cJSON_AddNumberToObject(doc, "pulses", in.pulses);
        cJSON_AddNumberToObject(doc, "range_gates", in.range_gates);
        cJSON_AddStringToObject(doc, "axes", order);
        cJSON_AddStringToObject(doc, "axes_from", source_name(in.layout.source));
        cJSON_AddStringToObject(doc, "reader_path", stap_recording_read_path(rec));
        cJSON_AddStringToObject(doc, "samples", samples);
        cJSON_AddNumberToObject(doc, "steering_beams", in.steering_beams);
        cJSON *r = cJSON_AddObjectToObject(doc, "run");
        cJSON_AddStringToObject(r, "preset", stap_preset_name(preset));
        cJSON_AddNumberToObject(r, "doppler_bins", c.doppler_bins);
        cJSON_AddNumberToObject(r, "doppler_order", c.doppler_order);
        cJSON_AddNumberToObject(r, "segments", c.segments);
        cJSON_AddNumberToObject(r, "training", c.training);
        cJSON_AddNumberToObject(r, "beams", in.steering ? in.steering_beams : c.beams);
        cJSON_AddStringToObject(r, "algorithm", stap_algorithm_name(c.algorithm));
        cJSON_AddBoolToObject(r, "fits", fits);
        if (fitted[0]) cJSON_AddStringToObject(r, "from_shape", fitted);
        if (!fits) cJSON_AddStringToObject(r, "why", whyflags);
        if (cli_json_write(json, doc, cli_write_mode(force), &err)) status = cli_fail(&err);
        cJSON_Delete(doc);
    }
    stap_recording_close(rec);
    stap_input_free(&in);
    return status;
}
