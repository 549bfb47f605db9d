/* cmd_info: `rtstap info FILE` — how rtstap will read a file, before anything runs (issue
 * 33): /data/iq's stored type and scale, its shape, the axis order and where it came from
 * (labels, --layout, an assumption) with the warning `run` gives about it, the CPIs written
 * and unwritten, how the CPIs will be read and reach the engine, the steering vectors and
 * radar metadata, and the configuration a `run` would use (the preset over the file's
 * shape, the options given) with whether it fits. A result of `run` (issue 42): what was
 * run on what, its CPIs and detections, whether it stopped. Text on stdout; --json for
 * scripts. */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "env.h"
#include "cli.h"
#include "cli_json.h"
#include "cli_opts.h"
#include "rtstap/stream.h"
#include "h5io.h"
#include "result_info.h"

static const cli_command info_cmd = {
    "info",
    "How rtstap will read a file, before anything runs: /data/iq's stored type and scale,\n"
    "its shape, the axis order and where it came from (labels, --layout, an assumption),\n"
    "the CPIs written and unwritten, how they will be read and reach the engine, the\n"
    "steering vectors and radar metadata, and the configuration a `run` with the same\n"
    "options would use (the preset over the file's shape), with whether it fits. An\n"
    "unlabelled cube gets the warning `run` gives (or the reason it refuses the file).\n"
    "A result of `run`: what was run on what, its CPIs, what it kept, its detections and\n"
    "whether it stopped early (the input's options do not apply to it).\n",
    NULL};

static const char *source_name(stap_layout_source s)
{
    return s == STAP_LAYOUT_LABELS ? "the file's labels"
           : s == STAP_LAYOUT_OVERRIDE ? "--layout"
                                       : "assumed: the file names no axes";
}

/* The options of info, and what it read of an input. */
typedef struct info_job {
    const char *input, *json;
    int force;
    stap_preset preset;
    cli_input_opts inopts;
    cli_processing proc;
    stap_recording *rec;
    stap_input in;
    char layout_msg[1024]; /* the layout's warning (or run's refusal), "" when none */
    int refused;           /* run would refuse the cube (its axes)                */
} info_job;

/* the input's report as JSON (c: what a run would use) */
static cJSON *input_json(const info_job *j, const stap_config *c, int fits, const char *fitted,
                         const char *why, const char *order, const char *samples)
{
    const int rank = stap_recording_rank(j->rec);
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "input", j->input);
    cJSON_AddStringToObject(doc, "kind", "input");
    cJSON_AddStringToObject(doc, "stored", j->in.samples);
    cJSON_AddStringToObject(doc, "dataset", j->in.dataset);
    cJSON_AddBoolToObject(doc, "column_major", j->in.layout.column_major);
    cJSON_AddNumberToObject(doc, "rank", rank);
    cJSON_AddNumberToObject(doc, "cpis", (double)stap_recording_cpis(j->rec));
    cJSON_AddNumberToObject(doc, "cpis_written", (double)stap_recording_written(j->rec));
    cJSON_AddNumberToObject(doc, "channels", j->in.channels);
    cJSON_AddNumberToObject(doc, "pulses", j->in.pulses);
    cJSON_AddNumberToObject(doc, "range_gates", j->in.range_gates);
    cJSON_AddStringToObject(doc, "axes", order);
    cJSON_AddStringToObject(doc, "axes_from", source_name(j->in.layout.source));
    if (j->layout_msg[0]) cJSON_AddStringToObject(doc, "axes_warning", j->layout_msg);
    cJSON_AddBoolToObject(doc, "run_refuses_axes", j->refused);
    cJSON_AddStringToObject(doc, "reader_path", stap_recording_read_path(j->rec));
    cJSON_AddStringToObject(doc, "samples", samples);
    cJSON_AddNumberToObject(doc, "steering_beams", j->in.steering_beams);
    cJSON_AddBoolToObject(doc, "array_positions", j->in.array_position != NULL);
    cJSON_AddBoolToObject(doc, "array_calibration", j->in.array_calibration != NULL);
    cJSON *r = cJSON_AddObjectToObject(doc, "run");
    cJSON_AddStringToObject(r, "preset", stap_preset_name(j->preset));
    cJSON_AddNumberToObject(r, "doppler_bins", c->doppler_bins);
    cJSON_AddNumberToObject(r, "doppler_order", c->doppler_order);
    cJSON_AddNumberToObject(r, "segments", c->segments);
    cJSON_AddNumberToObject(r, "training", c->training);
    cJSON_AddNumberToObject(r, "beams", j->in.steering ? j->in.steering_beams : c->beams);
    cJSON_AddStringToObject(r, "algorithm", stap_algorithm_name(c->algorithm));
    cJSON_AddBoolToObject(r, "fits", fits);
    if (fitted[0]) cJSON_AddStringToObject(r, "from_shape", fitted);
    if (!fits) cJSON_AddStringToObject(r, "why", why);
    return doc;
}

/* an input cube: how it will be read and what a run would use; *doc its JSON with --json */
static int info_input(info_job *j, cJSON **doc)
{
    stap_error err;
    const stap_input *in = &j->in;
    if (cli_env_reader(&j->inopts.read, &err)) return cli_fail(&err);
    if (stap_recording_open(j->input, &j->rec, &j->in, &j->inopts.read, &err))
        return cli_fail_input(j->input, &err);
    j->refused = cli_warn_layout(j->input, in, &j->inopts, j->layout_msg, sizeof j->layout_msg);
    const int rank = stap_recording_rank(j->rec);
    const long long cpis = stap_recording_cpis(j->rec), written = stap_recording_written(j->rec);
    char order[96], samples[240], cfgline[200] = "";
    stap_layout_string(&in->layout.layout, rank, order, sizeof order);
    stap_sample_format fmt;
    stap_stream_input_format(j->rec, 0, &fmt, samples, sizeof samples);
    /* what a run would use: the preset, the file's shape, D = P, the options given */
    stap_config c;
    stap_config_defaults(&c);
    stap_preset_config(j->preset, &c);
    c.channels = in->channels;
    c.pulses = in->pulses;
    c.range_gates = in->range_gates;
    c.doppler_bins = 0;
    if (in->meta.has_element_spacing) c.element_spacing = in->meta.element_spacing_wavelengths;
    cli_processing_apply(&j->proc, &c);
    char fitted[400];
    cli_fit_to_shape(&c, &j->proc, fitted, sizeof fitted); /* as run fits the preset to the file */
    stap_error why;
    char whyflags[600] = "";
    const int fits = stap_config_validate(&c, in->steering != NULL, in->steering_beams,
                                          in->steering ? in->steering_len : 0, &why) == STAP_OK;
    snprintf(cfgline, sizeof cfgline, "D=%d Q=%d S=%d K=%d B=%d, %s", c.doppler_bins,
             c.doppler_order, c.segments, c.training,
             in->steering ? in->steering_beams : c.beams, stap_algorithm_name(c.algorithm));
    FILE *out = j->json && !strcmp(j->json, "-") ? stderr : stdout; /* stdout: the JSON only */
    fprintf(out, "%s\n", j->input);
    fprintf(out, "  %s: %s%s\n", in->dataset, in->samples,
            in->layout.column_major ? " (MATLAB/Octave, column-major: extents reversed)" : "");
    if (rank == 4)
        fprintf(out, "  shape: %lld CPIs x %d channels x %d pulses x %d range gates (a recording)\n", cpis,
               in->channels, in->pulses, in->range_gates);
    else
        fprintf(out, "  shape: %d channels x %d pulses x %d range gates (one CPI)\n", in->channels, in->pulses,
               in->range_gates);
    fprintf(out, "  axes: (%s), from %s%s%s%s\n", order, source_name(in->layout.source),
           in->layout.labels[0] ? "; labels " : "", in->layout.labels,
           j->refused ? "; they look transposed: run refuses the file (see the warning)" : "");
    if (rank == 4) fprintf(out, "  CPIs: %lld written, %lld never written\n", written, cpis - written);
    fprintf(out, "  reading: %s\n  samples: %s\n", stap_recording_read_path(j->rec), samples);
    if (in->steering) fprintf(out, "  steering: %d beams x %d\n", in->steering_beams, in->steering_len);
    else fprintf(out, "  steering: none (the default beams)\n");
    if (in->array_position || in->array_calibration) /* /array: run steers through it */
        fprintf(out, "  array: %d elements%s%s (run steers through them)\n", in->channels,
                in->array_position ? ", positions (/array/position)" : "",
                in->array_calibration ? ", calibration (/array/calibration)" : "");
    const stap_radar_meta *m = &in->meta;
    fprintf(out, "  radar:");
    if (m->has_prf) fprintf(out, " prf %g Hz", m->prf_hz);
    if (m->has_carrier) fprintf(out, " carrier %g Hz", m->carrier_frequency_hz);
    if (m->has_sample_rate) fprintf(out, " sample rate %g Hz", m->sample_rate_hz);
    if (m->has_element_spacing) fprintf(out, " element spacing %g wavelengths", m->element_spacing_wavelengths);
    if (!m->has_prf && !m->has_carrier && !m->has_sample_rate && !m->has_element_spacing) fprintf(out, " none");
    fprintf(out, "\n  a run (--preset %s and the options given): %s: %s\n", stap_preset_name(j->preset),
            cfgline, fits ? "fits" : cli_flag_names(why.msg, whyflags, sizeof whyflags)); /* flags named */
    if (fitted[0]) fprintf(out, "  from the file's shape: %s\n", fitted);
    if (j->json) *doc = input_json(j, &c, fits, fitted, whyflags, order, samples);
    return EXIT_OK;
}

/* a result of run: what was run on what, its CPIs and detections, whether it stopped; *doc
 * its JSON with --json */
static int info_result(const info_job *j, const stap_result_info *ri, cJSON **doc)
{
    if (j->inopts.layout_arg || j->inopts.scale_arg)
        return cli_error(EXIT_USAGE, "--%s applies to an input cube; %s is a result of 'rtstap run'",
                         j->inopts.layout_arg ? "layout" : "scale", j->input);
    FILE *out = j->json && !strcmp(j->json, "-") ? stderr : stdout;
    char kept[64];
    snprintf(kept, sizeof kept, "%s%s%s%s%s", ri->has_weights ? "weights" : "",
             ri->has_weights && ri->has_output ? ", " : "", ri->has_output ? "output" : "",
             (ri->has_weights || ri->has_output) && ri->has_detections ? ", " : "",
             ri->has_detections ? "detections" : "");
    const int live = ri->recording && ri->cpis_lost >= 0; /* listen -o, Python's Stream over a feed */
    fprintf(out, "%s: a result of %s%s%s%s\n", j->input, live ? "a live stream (rtstap listen -o)" : "'rtstap run'",
            ri->version[0] ? " (rtstap " : "", ri->version, ri->version[0] ? ")" : "");
    fprintf(out, "  input: %s%s%s%s\n", ri->input[0] ? ri->input : "(not recorded)",
            ri->input_samples[0] ? " (" : "", ri->input_samples, ri->input_samples[0] ? ")" : "");
    fprintf(out, "  run: C=%d P=%d R=%d  D=%d Q=%d S=%d K=%d B=%d  %s, %s training, window %s, "
            "loading %g\n", ri->channels, ri->pulses, ri->range_gates, ri->doppler_bins,
            ri->doppler_order, ri->segments, ri->training, ri->beams, ri->algorithm,
            ri->training_window, ri->window[0] ? ri->window : "none", ri->loading);
    if (ri->backend[0]) fprintf(out, "  backend: %s%s%s%s%s\n", ri->backend, ri->device[0] ? " on " : "",
                                ri->device, ri->engine[0] ? "; " : "", ri->engine);
    if (ri->engine_note[0]) fprintf(out, "  note: %s\n", ri->engine_note);
    if (live)
        fprintf(out, "  CPIs: %lld processed, %lld lost and never processed (/lost_cpis); /axes/input_cpi "
                "numbers each row's CPI of the stream\n", ri->rows, ri->cpis_lost);
    else if (ri->recording)
        fprintf(out, "  CPIs: %lld run (a recording)%s\n", ri->rows,
                ri->cpis_unwritten ? "; the input's unwritten CPIs were not run" : "");
    else fprintf(out, "  CPIs: one\n");
    fprintf(out, "  kept: %s\n", kept[0] ? kept : "nothing");
    if (ri->has_detections)
        fprintf(out, "  detections: %lld%s%s\n", ri->detections, ri->cfar[0] ? " by " : "", ri->cfar);
    else fprintf(out, "  detections: none kept\n");
    fprintf(out, "  stopped: %s%s\n", ri->stopped[0] ? "yes, early: " : "no, it ran to the end",
            ri->stopped);
    if (!j->json) return EXIT_OK;
    cJSON *d = *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "input", j->input); /* the file described, as for an input */
    cJSON_AddStringToObject(d, "kind", "result");
    cJSON_AddBoolToObject(d, "live", live);
    cJSON_AddStringToObject(d, "run_input", ri->input);
    cJSON_AddStringToObject(d, "run_input_samples", ri->input_samples);
    cJSON_AddStringToObject(d, "rtstap_version", ri->version);
    cJSON *c = cJSON_AddObjectToObject(d, "config");
    const struct {
        const char *name;
        int v;
    } ints[] = {{"channels", ri->channels}, {"pulses", ri->pulses}, {"range_gates", ri->range_gates},
                {"doppler_bins", ri->doppler_bins}, {"doppler_order", ri->doppler_order},
                {"segments", ri->segments}, {"training", ri->training}, {"beams", ri->beams}};
    for (size_t k = 0; k < sizeof ints / sizeof *ints; k++) cJSON_AddNumberToObject(c, ints[k].name, ints[k].v);
    cJSON_AddNumberToObject(c, "loading", ri->loading);
    cJSON_AddStringToObject(c, "algorithm", ri->algorithm);
    cJSON_AddStringToObject(c, "training_window", ri->training_window);
    cJSON_AddStringToObject(c, "window", ri->window);
    cJSON_AddStringToObject(c, "backend", ri->backend);
    cJSON_AddStringToObject(c, "device", ri->device);
    cJSON_AddStringToObject(c, "engine", ri->engine);
    cJSON_AddBoolToObject(d, "recording", ri->recording);
    cJSON_AddNumberToObject(d, "cpis", (double)ri->rows);
    cJSON_AddNumberToObject(d, "cpis_unwritten", (double)ri->cpis_unwritten);
    if (ri->cpis_lost >= 0) cJSON_AddNumberToObject(d, "cpis_lost", (double)ri->cpis_lost);
    cJSON_AddStringToObject(d, "kept", kept);
    if (ri->has_detections) cJSON_AddNumberToObject(d, "detections", (double)ri->detections);
    else cJSON_AddNullToObject(d, "detections");
    cJSON_AddStringToObject(d, "cfar", ri->cfar);
    cJSON_AddBoolToObject(d, "stopped", ri->stopped[0] != 0);
    if (ri->stopped[0]) cJSON_AddStringToObject(d, "stopped_why", ri->stopped);
    return EXIT_OK;
}

int cmd_info(int argc, char **argv)
{
    info_job j;
    memset(&j, 0, sizeof j);
    j.preset = STAP_PRESET_HARD;
    cli_opt opts[] = {
        {"input", 0, CLI_STRING, &j.input, "FILE", "the file to describe: an input, or a result of run",
         .flags = CLI_REQUIRED | CLI_INPUT | CLI_POSITIONAL},
        CLI_OPT_LAYOUT(&j.inopts),
        CLI_OPT_DATASET(&j.inopts),
        CLI_OPT_SCALE(&j.inopts),
        {"preset", 0, CLI_CALL, &j.preset, "NAME",
         "the preset a run would start from (default hard)", .parse = cli_parse_preset},
        CLI_OPTS_PROCESSING(&j.proc),
        CLI_OPT_JSON(&j.json),
        CLI_OPT_FORCE(&j.force),
        {0}};
    int pst = cli_parse(&info_cmd, opts, argc, argv);
    if (pst != CLI_GO) return pst;
    if ((pst = cli_output_ok(j.json, j.force))) return pst;
    stap_error err;
    stap_result_info ri;
    cJSON *doc = NULL;
    int status;
    if (stap_result_info_read(j.input, &ri, &err)) status = cli_fail_input(j.input, &err);
    else if (!ri.has_iq && ri.is_result) status = info_result(&j, &ri, &doc);
    else status = info_input(&j, &doc); /* (no /data/iq and no /config: its error) */
    if (doc && !status && cli_json_write(j.json, doc, cli_write_mode(j.force), &err))
        status = cli_fail(&err);
    cJSON_Delete(doc);
    stap_recording_close(j.rec);
    stap_input_free(&j.in);
    return status;
}
