/* cli_opts: rtstap's command-line layer. Each command describes its options once, in a
 * table of cli_opt (long name, short letter, kind of value, where the value goes, its
 * range, metavariable, help text, an old spelling still accepted); cli_parse reads argv
 * against the table and cli_usage prints the help generated from it. Every command gets
 * -h/--help; the options several commands share (-o/--output, -f/--force, --json,
 * --device, --backend, --threads, --layout, --strict) have one spelling and one help text
 * (the CLI_OPT_* entries below).
 *
 * Syntax: --name VALUE, --name=VALUE, -x VALUE, -xVALUE, bundled letters (-fq); a value
 * is the next argument even when it starts with '-' (--min-snr -3); a long name may be
 * abbreviated to any unambiguous prefix; "--" ends the options. The one option marked
 * CLI_POSITIONAL may be given as the command's one argument instead (info FILE); no other
 * argument is taken. Errors are usage errors (exit 2) printed as "rtstap: error: ...":
 * "unknown option '--x' (see rtstap CMD --help)", "--output needs a value", "--cpis
 * expects an integer between 1 and 100000000 (got 'x')", "CMD needs --output FILE". */
#ifndef CLI_OPTS_H
#define CLI_OPTS_H

#include "cli.h"
#include "cfar.h"

/* The tables give the first fields in order and the others by name, leaving the rest zero
 * on purpose: -Wextra's missing-field-initializers would flag every such entry. */
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif

typedef enum cli_kind {
    CLI_FLAG = 1, /* no value: *(int *)value = 1                                        */
    CLI_CLEAR,    /* no value: *(int *)value = 0 (--no-graphs, --no-clutter)             */
    CLI_INT,      /* *(int *)value: an integer in [lo, hi]                               */
    CLI_DOUBLE,   /* *(double *)value: a finite number in [lo, hi]                       */
    CLI_U64,      /* *(unsigned long long *)value: a non-negative integer                */
    CLI_STRING,   /* *(const char **)value: the argument itself (argv's storage)         */
    CLI_STRINGS,  /* *(cli_strings *)value: a repeatable option; each occurrence appends
                     its argument (at most hi of them, or CLI_MAX_STRINGS when hi is 0)  */
    CLI_CALL      /* parse(opt, arg): the option's own parser, value its state; takes a
                     value when metavar is set, else arg is NULL                         */
} cli_kind;

enum {
    CLI_REQUIRED = 1, /* the command needs it: "run needs --output FILE"                 */
    CLI_EARLY = 2,    /* applied before every other option, wherever it stands (a preset
                         that the other options override)                                */
    CLI_INPUT = 4,    /* a file the command reads (CLI_STRING, CLI_STRINGS): registered
                         with cli_files_input after parsing                               */
    CLI_OUTPUT = 8,   /* a file it writes: cli_files_output ("-" is stdout) — no output
                         may be an input or another output (cli_files.h)                  */
    CLI_POSITIONAL = 16 /* (one CLI_STRING of the table) also given as the command's one
                         argument: `info FILE` is `info --input FILE`; both, or two
                         arguments, are a usage error                                     */
};

/* The values of a CLI_STRINGS option, in command-line order (argv's storage). */
enum { CLI_MAX_STRINGS = 16 };
typedef struct cli_strings {
    const char *v[CLI_MAX_STRINGS];
    int n;
} cli_strings;

typedef struct cli_opt cli_opt;
/* An option's own parser: store what arg says in o->value; on a malformed arg print a
 * usage error naming --name (cli_error(EXIT_USAGE, ...)) and return -1; else 0. */
typedef int (*cli_parse_fn)(const cli_opt *o, const char *arg);

struct cli_opt {
    const char *name;     /* long name without "--"; NULL ends the table              */
    char short_name;      /* 'o' for -o, or 0                                          */
    cli_kind kind;
    void *value;          /* where the value goes (see cli_kind)                       */
    const char *metavar;  /* the value's name in the help, e.g. "FILE"                 */
    const char *help;     /* lines separated by '\n'                                   */
    double lo, hi;        /* range of CLI_INT and CLI_DOUBLE                           */
    cli_parse_fn parse;   /* CLI_CALL                                                  */
    int *given;           /* set to 1 when the option is on the command line (or NULL) */
    const char *alias;    /* an older long name, still accepted (or NULL)              */
    unsigned flags;       /* CLI_REQUIRED, CLI_EARLY                                   */
};

typedef struct cli_command {
    const char *name;     /* "run": in "usage: rtstap run ..." and in messages          */
    const char *about;    /* what the command does: before the options (lines end in \n) */
    const char *epilogue; /* after the options, or NULL                                 */
} cli_command;

/* cli_parse's answer when the command should go on. */
enum { CLI_GO = -1 };

/* Read argv[1..argc-1] (argv[0] is the command's name) against opts: CLI_GO when the
 * command should go on; EXIT_OK after -h/--help printed the usage on stdout; EXIT_USAGE
 * after an error was printed. Options are applied in order (CLI_EARLY ones first); a
 * repeated option is applied again (the last value wins, or its parser accumulates). */
int cli_parse(const cli_command *cmd, cli_opt *opts, int argc, char **argv);
/* The help text generated from the table: synopsis, about, options, epilogue. */
void cli_usage(FILE *f, const cli_command *cmd, const cli_opt *opts);
/* What --help does instead of printing the usage, while set (NULL: print it): the
 * documentation generator (cli_doc.c) runs each command with --help to reach its table. */
typedef void (*cli_help_fn)(const cli_command *cmd, const cli_opt *opts, void *ctx);
void cli_set_help_hook(cli_help_fn fn, void *ctx);

/* ---- parsers of values several commands take (CLI_CALL) ----------------------------- */
int cli_parse_backend(const cli_opt *o, const char *arg);   /* value: stap_backend *       */
int cli_parse_qr(const cli_opt *o, const char *arg);        /* value: stap_qr_method *     */
int cli_parse_preset(const cli_opt *o, const char *arg);    /* value: stap_preset *        */
int cli_parse_cfar_kind(const cli_opt *o, const char *arg); /* value: stap_cfar_kind *   */
int cli_parse_detector(const cli_opt *o, const char *arg);  /* value: stap_cfar_kind *   */
/* --detector where it is not defined for cfg (stap_detector_check; a configuration that does
 * not validate is left to the engine to report): a usage error (exit 2,
 * printed); EXIT_OK otherwise and for the CFARs. */
int cli_detector_check(const stap_cfar_config *cfar, const stap_config *cfg);
int cli_parse_layout_opt(const cli_opt *o, const char *arg); /* value: cli_input_opts *  */
int cli_parse_scale_opt(const cli_opt *o, const char *arg);  /* value: cli_input_opts *  */
/* The edit distance of two short words (Levenshtein, with two adjacent letters swapped as
 * one edit): did-you-mean for options, commands. */
size_t cli_edit_distance(const char *a, size_t na, const char *b, size_t nb);
/* Did you mean: the names of names[0..count-1] that a mistyped word (len characters) stands
 * for — those whose last hyphen-separated words it is (pfa: cfar-pfa), else the closest
 * within a third of its length (at least one edit) — each after prefix, joined by " or ",
 * into buf ("" when none); returns how many. */
int cli_suggest(const char *word, size_t len, const char *const *names, int count,
                const char *prefix, char *buf, size_t buflen);
/* The processing options `run` and `stream` share (one table): laid over the
 * preset or the input's shape; 0 / not given leaves it. */
typedef struct cli_processing {
    int dbins, dorder, seg, train, beams;
    double loading;
    int loading_given;
    stap_window_kind window;
    double chebyshev_db;
    int window_given;
} cli_processing;
int cli_parse_window(const cli_opt *o, const char *arg); /* value: cli_processing * */
#define CLI_OPTS_PROCESSING(p)                                                               \
    {"doppler-bins", 0, CLI_INT, &(p)->dbins, "D", "Doppler bins, D >= pulses (zero-padded FFT)", \
     .lo = 1, .hi = 1 << 20},                                                                 \
    {"doppler-order", 0, CLI_CALL, &(p)->dorder, "Q",                                         \
     "odd: 1 = post-Doppler, 3 = third-order Doppler-factored",                              \
     .parse = cli_parse_doppler_order},                                                       \
    {"segments", 0, CLI_INT, &(p)->seg, "S", "range segments (S divides the range gates)",    \
     .lo = 1, .hi = 1 << 24},                                                                 \
    {"training", 0, CLI_INT, &(p)->train, "K", "training cells per segment (or sliding block)", \
     .lo = 1, .hi = 1 << 24},                                                                 \
    {"beams", 0, CLI_INT, &(p)->beams, "B", "beams (ignored when the input has /steering)",   \
     .lo = 1, .hi = 4096},                                                                    \
    {"loading", 0, CLI_DOUBLE, &(p)->loading, "DELTA",                                        \
     "diagonal loading, R^H R = K (Rhat + DELTA I) (default 0)", .lo = 0, .hi = 1e30,         \
     .given = &(p)->loading_given},                                                           \
    {"window", 0, CLI_CALL, (p), "W", "none | hann | chebyshev:DB (default none)",            \
     .parse = cli_parse_window}
/* The options given, over c (the preset's or the input's). */
void cli_processing_apply(const cli_processing *p, stap_config *c);
/* A file's shape over the preset (issue 33): each value the options did not give and the
 * file cannot hold is lowered to what it can — Q the largest odd order not above the pulses,
 * S the largest divisor of the range gates not above the preset's, K at most a segment's
 * cells — and named in note ("" when none was). */
void cli_fit_to_shape(stap_config *c, const cli_processing *given, char *note, size_t len);
/* --devices LIST|all: the CUDA devices of spec into devices[0..*n-1] (at most max), checked
 * against those CUDA sees; `all` on a host without a usable GPU with backend auto: *n = 0
 * (one engine as without the option) and a warning, once. EXIT_OK, or the exit status of
 * the error printed. */
int cli_devices(const char *spec, stap_backend backend, int *devices, int max, int *n);
/* --keep LIST: detections, weights, output (comma-separated) as STAP_KEEP_* bits */
int cli_parse_keep(const cli_opt *o, const char *arg);       /* value: unsigned *         */

/* ---- the options several commands share ---------------------------------------------- */
#define CLI_OPT_FORCE(var)                                                                  \
    {"force", 'f', CLI_FLAG, (var), NULL,                                                   \
     "replace existing output files, each only once its new contents\n"                    \
     "are complete (a failed run leaves it as it was)"}
#define CLI_OPT_JSON(var)                                                                   \
    {"json", 0, CLI_STRING, (var), "FILE|-",                                                \
     "also write the report as JSON to FILE (atomically), or to\n"                         \
     "stdout for - (the text report then goes to stderr)", .flags = CLI_OUTPUT}
#define CLI_OPT_DEVICE(var)                                                                 \
    {"device", 0, CLI_INT, (var), "N",                                                      \
     "CUDA device to run on (default 0; numbered as CUDA sees\n"                           \
     "them: CUDA_VISIBLE_DEVICES applies)", .lo = 0, .hi = 1023}
#define CLI_OPT_BACKEND(var)                                                                \
    {"backend", 0, CLI_CALL, (var), "B", "auto | cpu | lapack | gpu | cublas (default auto)", \
     .parse = cli_parse_backend}
#define CLI_OPT_QR(var)                                                                     \
    {"qr", 0, CLI_CALL, (var), "F",                                                         \
     "the weights' factor: householder | cholqr2 | cholqr | auto\n"                         \
     "(default householder; cholqr2, cholqr (one pass, FP64\n"                              \
     "Gram): the cpu and gpu backends, guarded by Householder;\n"                           \
     "auto: where measured the faster, cpu: cholqr2 for n <= 16,\n"                        \
     "m >= 64 n; gpu: cholqr for 64 <= n <= 96)", .parse = cli_parse_qr}
#define CLI_OPT_THREADS(var)                                                                \
    {"threads", 0, CLI_INT, (var), "T", "CPU threads, >= 1 (default: all)", .lo = 1, .hi = 4096}
/* --readers: reader threads of a recording (stap_stream_source.readers, rtstap/stream.h; 0 when not given: the default) */
#define CLI_OPT_READERS(var)                                                                 \
    {"readers", 0, CLI_INT, (var), "N",                                                      \
     "reader threads for a recording (default: the CPUs less 2, at\n"                        \
     "most 16; one when the file is read through HDF5)", .lo = 1, .hi = 64}
/* --host-decode: a recording's integer samples decoded on the host (stap_stream, rtstap/stream.h) */
#define CLI_OPT_HOST_DECODE(var)                                                             \
    {"host-decode", 0, CLI_FLAG, (var), NULL,                                                \
     "decode a recording's integer samples to complex64 on the host\n"                      \
     "(default: they cross the link as stored and the engine's first\n"                     \
     "kernel converts them)"}
#define CLI_OPT_LAYOUT(inopts)                                                              \
    {"layout", 0, CLI_CALL, (inopts), "ORDER",                                              \
     "the input's stored axis order, e.g. P,C,R or\n"                                      \
     "pulse,channel,range (after a recording's cpi axis);\n"                               \
     "overrides the file's axis labels",                                                    \
     .parse = cli_parse_layout_opt}
#define CLI_OPT_SCALE(inopts)                                                               \
    {"scale", 0, CLI_CALL, (inopts), "S",                                                   \
     "multiply the stored samples by S (> 0) instead of the\n"                             \
     "`scale` attribute of /data/iq (default 1)",                                           \
     .parse = cli_parse_scale_opt}
#define CLI_OPT_DATASET(inopts)                                                             \
    {"dataset", 0, CLI_STRING, &(inopts)->read.dataset, "PATH",                             \
     "the cube's dataset in the input (default /data/iq, else\n"                          \
     "the file's one MATLAB v7.3 or Octave -hdf5 array; an\n"                             \
     "Octave variable by its name: docs/matlab.md)"}
/* --strict's help differs: run also makes ill-conditioned training an error */
/* The training window (stap_config.training_window, block, guard) of run and stream. */
/* The adaptive processing's options (run, stream): training window and algorithm. */
typedef struct cli_training {
    stap_training_window window;
    int block, guard;
    int window_given, block_given, guard_given;
    stap_algorithm algorithm;
    int angle_bins, angle_bins_given;
    int sub_cpi, sub_cpi_given;
    int dpca_shift, dpca_shift_given;
} cli_training;
int cli_parse_training_window(const cli_opt *o, const char *arg); /* value: cli_training * */
int cli_parse_algorithm(const cli_opt *o, const char *arg);       /* value: cli_training * */
int cli_parse_doppler_order(const cli_opt *o, const char *arg);   /* value: int, odd     */
int cli_parse_cfar_total(const cli_opt *o, const char *arg);      /* value: int, per side */
/* The detector's options (run, stream): cf a stap_cfar_config *, set an int * made 1 when
 * any of them is given (may be NULL). */
#define CLI_OPTS_CFAR(cf, set)                                                             \
    {"cfar", 0, CLI_CALL, &(cf)->kind, "KIND",                                               \
     "none | ca | os | go | so: CFAR along range; ca2d: over\n"                             \
     "range x Doppler (default ca)",                                                        \
     .parse = cli_parse_cfar_kind, .given = (set)},                                       \
    {"detector", 0, CLI_CALL, &(cf)->kind, "KIND",                                          \
     "amf | kelly | ace: adaptive detector instead of the CFAR,\n"                         \
     "threshold from --cfar-pfa by its closed form (needs\n"                                \
     "--training-window sliding and no loading; post-Doppler\n"                            \
     "or JDL; any backend; the later of --cfar and --detector\n"                             \
     "counts)",                                                                               \
     .parse = cli_parse_detector, .given = (set)},                                        \
    {"cfar-pfa", 0, CLI_DOUBLE, &(cf)->pfa, "P", "false-alarm probability per cell (default 1e-6)", \
     .lo = 1e-300, .hi = 0.5, .given = (set)},                                            \
    {"cfar-guard", 0, CLI_INT, &(cf)->guard, "G", "guard cells each side (default 2)", .lo = 0, \
     .hi = 1 << 20, .given = (set)},                                                      \
    {"cfar-train", 0, CLI_INT, &(cf)->train, "N", "training cells each side (default 16)",  \
     .lo = 1, .hi = STAP_CFAR_MAX_TRAIN, .given = (set)},                                 \
    {"cfar-guard-total", 0, CLI_CALL, &(cf)->guard, "G2",                                    \
     "guard cells of both sides together, as MATLAB counts\n"                              \
     "them (even: --cfar-guard G2/2)", .parse = cli_parse_cfar_total, .given = (set)},       \
    {"cfar-train-total", 0, CLI_CALL, &(cf)->train, "N2",                                    \
     "training cells of both sides together, as MATLAB counts\n"                           \
     "them (even: --cfar-train N2/2)", .parse = cli_parse_cfar_total, .given = (set)},       \
    {"cfar-rank", 0, CLI_INT, &(cf)->os_rank, "K",                                           \
     "OS-CFAR order statistic, 1..2N (default 0.75 x 2N)",                                  \
     .lo = 1, .hi = 2 * STAP_CFAR_MAX_TRAIN, .given = (set)},                             \
    {"cfar-guard-doppler", 0, CLI_INT, &(cf)->guard_doppler, "G",                            \
     "ca2d: guard Doppler bins each side (default 1)", .lo = 0,                             \
     .hi = STAP_CFAR_MAX_DOPPLER, .given = (set)},                                        \
    {"cfar-train-doppler", 0, CLI_INT, &(cf)->train_doppler, "N",                            \
     "ca2d: training Doppler bins each side (default 2)", .lo = 0,                          \
     .hi = STAP_CFAR_MAX_DOPPLER, .given = (set)}
#define CLI_OPT_TRAINING(t)                                                                 \
    {"training-window", 0, CLI_CALL, (t), "W",                                              \
     "segment: K cells spread over each of S segments (default);\n"                       \
     "sliding: blocks of LB cells, each trained on the K cells\n"                          \
     "nearest to it beyond G guard cells on each side (one-sided\n"                        \
     "at the edges); S = R / LB",                                                           \
     .parse = cli_parse_training_window, .given = &(t)->window_given},                      \
    {"block", 0, CLI_INT, &(t)->block, "LB",                                                \
     "sliding: range cells per block, each with its own weights\n"                         \
     "(divides the range gates; default 1)", .lo = 1, .hi = 1 << 24,                        \
     .given = &(t)->block_given},                                                           \
    {"guard", 0, CLI_INT, &(t)->guard, "G",                                                 \
     "sliding: cells left out of the training on each side of a\n"                         \
     "block (default 2)", .lo = 0, .hi = 1 << 24, .given = &(t)->guard_given},              \
    {"algorithm", 0, CLI_CALL, (t), "A",                                                    \
     "post-doppler: every channel x Q Doppler bins (default);\n"                            \
     "jdl: joint-domain localized, NA beams around each beam's\n"                           \
     "look direction x Q Doppler bins;\n"                                                   \
     "pre-doppler: element-space pre-Doppler, every channel x M\n"                         \
     "pulses of a sliding sub-CPI, Doppler filtering after;\n"                             \
     "adpca: adaptive DPCA, a 2- or 3-pulse canceller;\n"                                   \
     "dpca: the non-adaptive displaced-phase-centre canceller",                              \
     .parse = cli_parse_algorithm},                                                         \
    {"angle-bins", 0, CLI_INT, &(t)->angle_bins, "NA",                                      \
     "jdl: beams of the local region, odd, at most C (default 3)",                           \
     .lo = 1, .hi = 1 << 20, .given = &(t)->angle_bins_given},                              \
    {"sub-cpi", 0, CLI_INT, &(t)->sub_cpi, "M",                                             \
     "pre-doppler: pulses of a sub-CPI, 1..P (default 3);\n"                               \
     "adpca, dpca: 2 or 3 (default 2)",                                                     \
     .lo = 1, .hi = 1 << 20, .given = &(t)->sub_cpi_given},                                 \
    {"dpca-shift", 0, CLI_INT, &(t)->dpca_shift, "S",                                       \
     "dpca: channels the phase centre moves in one PRI, beta =\n"                          \
     "2vT/d, signed (default 1)", .lo = -(1 << 20), .hi = 1 << 20,                          \
     .given = &(t)->dpca_shift_given}
void cli_training_defaults(cli_training *t);
/* Put the training window and algorithm into cfg; a usage error (printed, EXIT_USAGE) for
 * --block or --guard without --training-window sliding, --segments with it,
 * --angle-bins without --algorithm jdl, or --dpca-shift without --algorithm dpca. */
int cli_training_apply(const cli_training *t, int segments_given, stap_config *cfg);
/* The taps of the algorithm into *dorder (the Doppler-order override, 0 = the preset's):
 * for pre-doppler, adpca and dpca the sub-CPI's pulses (--sub-cpi or its default); a usage
 * error for --doppler-order with them, --sub-cpi without them, or an adpca/dpca --sub-cpi
 * other than 2 or 3. */
int cli_training_order(const cli_training *t, int *dorder);

#define CLI_OPT_STRICT(inopts, help) {"strict", 0, CLI_FLAG, &(inopts)->strict, NULL, (help)}

/* ---- after parsing ------------------------------------------------------------------- */
/* The write mode of -f/--force. */
static inline stap_write_mode cli_write_mode(int force)
{
    return force ? STAP_WRITE_REPLACE : STAP_WRITE_NEW;
}
/* Before any work: can an output be published at path (NULL and "-" pass)? EXIT_OK, or
 * EXIT_PROCESSING with the error printed ("'x' already exists; refusing to overwrite"). */
int cli_output_ok(const char *path, int force);
/* --device N (N < 0: not given, nothing done): make it the current CUDA device. EXIT_OK;
 * EXIT_USAGE when there is no such device; EXIT_PROCESSING when CUDA is unusable or the
 * build has no CUDA. */
int cli_select_device(int device);
/* rtstap-mpi with several ranks: this rank's GPU — --devices LIST|all (a list: the GPUs
 * this host's ranks take in turn; local rank L takes entry L mod its length), or by default
 * every GPU of the host the same way; -1 (no GPU) with the CPU backends or no GPU under
 * auto. --device N pins every rank to N. *device is set; EXIT_OK or the error printed. */
int cli_rank_device(const char *devices_s, stap_backend backend, int *device);

#endif
