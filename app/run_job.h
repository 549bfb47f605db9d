/* run_job: one `rtstap run` — its options, its input and what the two paths share: the one-
 * CPI path (cmd_run.c) and the recording path (run_recording.c). */
#ifndef RUN_JOB_H
#define RUN_JOB_H

#include <cjson/cJSON.h>

#include "cli.h"
#include "cli_look.h"
#include "cli_opts.h"
#include "engine.h"
#include "h5io.h"

typedef struct run_job {
    const char *input, *output, *json;
    stap_preset preset;
    int quiet, repeat, keep_output, check, force, device, readers, host_decode, progress;
    unsigned keep; /* --keep: STAP_KEEP_* (0: not given) */
    const char *devices_s;   /* --devices LIST|all (recordings)                      */
    int devices[16], ndevices; /* resolved: > 0, one engine per device               */
    cli_processing proc; /* --doppler-bins ... --window, laid over the preset */
    cli_look look;       /* --look, --sector, --doppler-hz, --doppler-mps        */
    int fitted;          /* the preset fitted to the file's shape (cli_fit_to_shape) */
    int threads;
    stap_config cfg;
    stap_cfar_config cfar;
    int cfar_given;
    cli_input_opts inopts; /* --layout, --strict */
    cli_training tw;
    stap_write_mode mode;
    double t_start;
    stap_input in;
    stap_recording *rec; /* the input file (one CPI or a recording), or NULL: synthesized */
    char input_name[1024];
} run_job;

/* the options over the preset's configuration, the input's shape and metadata; the steering
 * of --look or --sector into j->in. The exit status (0: go on; an error printed). */
int run_apply_options(run_job *j);
/* The default detector steps aside (with a note) on range lines too short for its window;
 * a detector the user asked for is an error there (exit 1), an adaptive detector where it is
 * not defined a usage error (exit 2). Returns the exit status (0: go on). */
int run_cfar_fit(stap_cfar_config *cfar, const stap_config *cfg, int given, int quiet,
                 const char *input);
/* --json: the files, the engine, its configuration, the detector and the platform */
cJSON *run_json(const char *input, const char *output, const stap_engine *eng, int beams,
                const stap_cfar_config *cfar, const char *cfar_desc, int threads);
/* "conditioning": the smallest min|R_ii|/max|R_ii| of the run's factors and its limit */
void run_json_conditioning(cJSON *doc, double ratio, const stap_engine *eng);
/* The result file's header of engine e's run over `input` with detector cfar (h's other
 * fields as they were): desc (n bytes) receives the detector's description. */
void run_result_header(stap_result *h, const stap_engine *e, const char *input, const stap_cfar_config *cfar,
                       char *desc, size_t n);
/* rtstap-mpi: the ranks meet with this rank's status after opening the input, then agree
 * that each opened the same file with the same configuration (run_agree.c); collective.
 * The worst status, or 1 naming the first rank and field that differ from rank 0's. */
int run_agree(run_job *j, int status);
/* Every CPI of a rank-4 recording (run_recording.c) */
int run_recording(run_job *j);

#endif
