/* cli: shared pieces of rtstap's command line — strict number parsing, error output
 * and exit statuses (0 ok, 1 input or processing error, 2 usage). */
#ifndef CLI_H
#define CLI_H

#include <stdio.h>

#include "h5io.h"
#include "rtstap/common.h"
#include "stap.h"

enum { EXIT_OK = 0, EXIT_PROCESSING = 1, EXIT_USAGE = 2 };

/* Print "rtstap: error: <msg>" on stderr, with the library's parameter names turned into
 * flags (cli_flag_names); return the given exit status. */
int cli_error(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Library messages name parameters as the C API spells them — stap_config.training,
 * stap_cfar_config.pfa, scene_config.jammers[2] — and the command line shows its flags
 * instead: --training, --cfar-pfa, --jammer 3 (the third --jammer given). Copies msg to
 * buf (at most len bytes) with each known parameter replaced; returns buf. */
const char *cli_flag_names(const char *msg, char *buf, size_t len);
/* The same in place, on err->msg; returns err->msg. */
const char *cli_flags_in(stap_error *err);
/* The library's error as a processing (1) or, for STAP_EINVAL raised by option checks,
 * processing as well: everything the library reports is about inputs or data. */
int cli_fail(const stap_error *err);

/* The usage error for the argument getopt_long refused (returned '?') in `command`. */
int cli_unknown_option(const char *command, int argc, char **argv);

/* Strict parsers: the whole string must be a number in range; on failure print a usage
 * error naming the flag and return -1. */
int cli_int(const char *flag, const char *s, long lo, long hi, int *out);
int cli_double(const char *flag, const char *s, double lo, double hi, double *out);

/* Options of every command that reads an input cube (run, stream --input, plot). */
typedef struct cli_input_opts {
    stap_read_options read;  /* --layout ORDER: the stored order of the cube's axes       */
    const char *layout_arg;  /* ORDER as given, for messages (NULL without --layout)       */
    const char *scale_arg;   /* --scale S as given (NULL without)                          */
    int strict;              /* --strict: refuse an input without axis labels (and, later,
                                other doubtful inputs)                                    */
} cli_input_opts;

/* --layout's and --scale's parsers (a usage error printed, -1, when malformed); the option
 * table's entries are CLI_OPT_LAYOUT, CLI_OPT_STRICT and CLI_OPT_SCALE (cli_opts.h); --scale S
 * is the factor of the stored samples, instead of /data/iq's `scale` attribute. */
int cli_parse_layout(const char *value, cli_input_opts *o);
int cli_parse_scale(const char *value, cli_input_opts *o);
/* A usage error (EXIT_USAGE, printed) when --layout or --scale came without --input, else 0. */
int cli_input_opts_need_input(const cli_input_opts *o, const char *input);

/* After an input cube is opened: one warning line on stderr when its axis order was
 * assumed (no labels) or --layout overrides labels that say otherwise; EXIT_PROCESSING with
 * an error when --strict refuses an unlabelled cube, or an unlabelled cube's shape looks
 * transposed (more channels than pulses, fewer range gates than pulses); else EXIT_OK. */
int cli_check_layout(const char *path, const stap_input *in, const cli_input_opts *o);
/* The same message as a warning whatever it says (`info` describes what `run` would refuse,
 * adding "(run refuses it)"): the message into msg ("" when none) and 1 when run refuses. */
int cli_warn_layout(const char *path, const stap_input *in, const cli_input_opts *o, char *msg,
                    size_t len);

/* An input that could not be opened (err): when it is no HDF5 file but a SigMF recording, a
 * PERFECT suite input or another file, an error naming the import command that reads it;
 * else err. EXIT_PROCESSING (printed). */
int cli_fail_input(const char *path, const stap_error *err);

/* A recording with CPIs that were never written (stap_recording_written): one warning
 * naming how many and the first of them, or (--strict) an error; none written at all is an
 * error either way. EXIT_OK or EXIT_PROCESSING (printed). */
int cli_check_unwritten(const char *path, const stap_recording *rec, int strict, int sending);
/* A recording opened (*rec, *in; closed and freed by the caller either way) and checked:
 * cli_fail_input, cli_check_layout, cli_check_unwritten (stream --input, send). */
int cli_open_recording(const char *path, const cli_input_opts *o, stap_recording **rec, stap_input *in,
                       int sending);

/* The stage-timing table on stderr (shared by run and perfect). */
/* "" for segment training, else " sliding LB=1 G=2" (after S=.. K=.. in reports) */
const char *cli_window_str(const stap_config *cfg, char *buf, size_t len);
/* "" for post-Doppler, else " jdl NA=3" (after B=.. in reports) */
const char *cli_algorithm_str(const stap_config *cfg, char *buf, size_t len);
void cli_print_timing(const stap_config *cfg, const char *input, const double *t,
                      double read_ms, double write_ms, double total_ms);

/* The core OpenBLAS took for this CPU when rtstap restarted itself with a fitting
 * OPENBLAS_CORETYPE (bench, bench-qr, --backend lapack: app/main.c), else NULL. */
const char *cli_blas_restarted_from(void);
void cli_blas_set_restarted_from(const char *core);

/* Subcommands: each takes argv[0] = its name and returns the exit status. */
int cmd_run(int argc, char **argv);
int cmd_bench_qr(int argc, char **argv);
int cmd_roc(int argc, char **argv);
int cmd_perfect(int argc, char **argv);
int cmd_import_perfect(int argc, char **argv);
int cmd_import_raw(int argc, char **argv);
int cmd_import_sigmf(int argc, char **argv);
int cmd_stream(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_bench_pipeline(int argc, char **argv);
int cmd_send(int argc, char **argv);
int cmd_listen(int argc, char **argv);

#endif
