/* run_common.c: what `rtstap run`'s paths share — the one-CPI path (cmd_run.c), the
 * recording path (run_recording.c), the ranks (run_ranks.c) and their agreement
 * (run_agree.c) all call down here, and nothing here calls back up (run_job.h). */
#include <stdio.h>

#include "cli_json.h"
#include "par.h"
#include "report.h"
#include "run_job.h"

/* The default detector steps aside (with a note) on range lines too short for its window;
 * a detector the user asked for is an error there (exit 1). An adaptive detector where it is
 * not defined (stap_detector_check) is a usage error (exit 2). Returns the exit status. */
int run_cfar_fit(stap_cfar_config *cfar, const stap_config *cfg, int given, int quiet,
                 const char *input)
{
    stap_error err;
    const int D = cfg->doppler_bins > 0 ? cfg->doppler_bins : cfg->pulses; /* 0 = P */
    int st = cli_detector_check(cfar, cfg);
    if (st) return st;
    if (cfar->kind == STAP_CFAR_NONE || !stap_cfar_validate(cfar, D, cfg->range_gates, &err))
        return EXIT_OK;
    if (given) {
        stap_error_prefix(&err, "%s", input);
        return cli_fail(&err);
    }
    if (!quiet) fprintf(stderr, "rtstap: note: no CFAR detection (%s)\n", cli_flags_in(&err));
    cfar->kind = STAP_CFAR_NONE;
    return EXIT_OK;
}

/* --json: what every run report holds — the files, the engine, its configuration, the
 * detector and the platform; the caller adds what was measured. */
cJSON *run_json(const char *input, const char *output, const stap_engine *eng,
                       int beams, const stap_cfar_config *cfar, const char *cfar_desc,
                       int threads)
{
    const stap_config *pc = stap_engine_config(eng);
    cJSON *doc = stream_json_report("run");
    cJSON_AddStringToObject(doc, "input", input);
    cJSON_AddStringToObject(doc, "output", output);
    cJSON_AddStringToObject(doc, "backend", stap_backend_name(pc->backend));
    cJSON_AddStringToObject(doc, "engine", stap_engine_describe(eng));
    stream_json_config(doc, pc, beams);
    if (cfar->kind != STAP_CFAR_NONE) cJSON_AddStringToObject(doc, "cfar", cfar_desc);
    else cJSON_AddNullToObject(doc, "cfar");
    stream_json_platform(doc, threads);
    return doc;
}

/* "conditioning": the smallest min|R_ii|/max|R_ii| of the run's factors and its limit */
void run_json_conditioning(cJSON *doc, double ratio, const stap_engine *eng)
{
    cJSON *c = cJSON_AddObjectToObject(doc, "conditioning");
    cJSON_AddNumberToObject(c, "min_ratio", ratio);
    cJSON_AddNumberToObject(c, "limit", stap_engine_conditioning_limit(eng));
}

int run_apply_options(run_job *j)
{
    stap_config *c = &j->cfg;
    c->channels = j->in.channels;
    c->pulses = j->in.pulses;
    c->range_gates = j->in.range_gates;
    if (j->input) c->doppler_bins = 0; /* default D = P of the file unless given */
    cli_processing_apply(&j->proc, c);
    c->threads = j->threads;
    if (j->in.meta.has_element_spacing) c->element_spacing = j->in.meta.element_spacing_wavelengths;
    if (j->input && !j->fitted) { /* the preset's values the file cannot hold, lowered (once) */
        char note[400];
        cli_fit_to_shape(c, &j->proc, note, sizeof note);
        if (note[0] && !j->quiet)
            if (par_rank() == 0) fprintf(stderr, "rtstap: note: %s: from its shape: %s\n", j->input, note);
        j->fitted = 1;
    }
    return cli_look_apply(&j->look, &j->in, c, j->input_name[0] ? j->input_name : j->input);
}

void run_result_header(stap_result *h, const stap_engine *e, const char *input, const stap_cfar_config *cfar,
                       char *desc, size_t n)
{
    stap_cfar_describe(cfar, desc, n);
    h->cfg = stap_engine_config(e);
    h->input_name = input;
    h->backend_name = stap_backend_name(h->cfg->backend);
    h->beams = stap_engine_beams(e);
    h->steering = stap_engine_steering(e);
    h->have_detections = cfar->kind != STAP_CFAR_NONE;
    h->cfar_description = desc;
    h->engine = e;
}
