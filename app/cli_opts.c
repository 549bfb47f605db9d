/* cli_opts.c: parsing argv against a command's option table, and the help text generated
 * from it (cli_opts.h). */
#include "cli_opts.h"
#include "par.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cfar.h"
#include "cli_files.h"
#include "h5io_extra.h" /* stap_output_check_mode */

size_t cli_edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
    /* optimal string alignment (Levenshtein with the transposition of two adjacent letters
     * as one edit: rnu is one from run), three rows (option names are short) */
    size_t rows[3][64], *prev2 = rows[0], *prev = rows[1], *row = rows[2];
    if (na >= 64 || nb >= 64) return (size_t)-1 / 2;
    for (size_t j = 0; j <= nb; j++) prev[j] = j;
    for (size_t i = 1; i <= na; i++) {
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t m = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < m) m = prev[j] + 1;
            if (row[j - 1] + 1 < m) m = row[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < m)
                m = prev2[j - 2] + 1;
            row[j] = m;
        }
        size_t *t = prev2;
        prev2 = prev, prev = row, row = t;
    }
    return prev[nb];
}

/* name's last hyphen-separated words are word (len characters): cfar-pfa for pfa */
static int ends_with_words(const char *name, const char *word, size_t len)
{
    const size_t n = strlen(name);
    return len && n > len && name[n - len - 1] == '-' && !strncmp(name + n - len, word, len);
}

int cli_suggest(const char *word, size_t len, const char *const *names, int count,
                const char *prefix, char *buf, size_t buflen)
{
    int found = 0;
    buf[0] = '\0';
    for (int i = 0; i < count; i++) /* --pfa: --cfar-pfa */
        if (ends_with_words(names[i], word, len)) {
            size_t u = strlen(buf);
            snprintf(buf + u, buflen - u, "%s%s%s", found++ ? " or " : "", prefix, names[i]);
        }
    if (found) return found;
    /* the closest names within a third of the word (--trainig: --training; rnu: run) */
    const size_t limit = len / 3 > 1 ? len / 3 : 1;
    size_t best = limit + 1;
    for (int i = 0; i < count; i++) {
        const size_t d = cli_edit_distance(names[i], strlen(names[i]), word, len);
        if (d < best) {
            best = d;
            buf[0] = '\0';
            found = 0;
        }
        if (d == best && d <= limit) {
            size_t u = strlen(buf);
            snprintf(buf + u, buflen - u, "%s%s%s", found++ ? " or " : "", prefix, names[i]);
        }
    }
    return found;
}

enum { MAX_OPTS = 128 };

static int takes_value(const cli_opt *o)
{
    return o->kind == CLI_CALL ? o->metavar != NULL : o->kind != CLI_FLAG && o->kind != CLI_CLEAR;
}

/* Apply one occurrence of option o with value arg (NULL for a flag); -1 after an error. */
static int apply(const cli_opt *o, const char *arg)
{
    char flag[80];
    snprintf(flag, sizeof flag, "--%s", o->name);
    switch (o->kind) {
    case CLI_FLAG: *(int *)o->value = 1; break;
    case CLI_CLEAR: *(int *)o->value = 0; break;
    case CLI_INT:
        if (cli_int(flag, arg, (long)o->lo, (long)o->hi, (int *)o->value)) return -1;
        break;
    case CLI_DOUBLE:
        if (cli_double(flag, arg, o->lo, o->hi, (double *)o->value)) return -1;
        break;
    case CLI_U64: {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(arg, &end, 10);
        if (!*arg || *end || errno || arg[0] == '-' || arg[0] == '+') {
            cli_error(EXIT_USAGE, "%s expects a non-negative integer (got '%s')", flag, arg);
            return -1;
        }
        *(unsigned long long *)o->value = v;
        break;
    }
    case CLI_STRING: *(const char **)o->value = arg; break;
    case CLI_STRINGS: {
        cli_strings *l = o->value;
        int max = o->hi >= 1 && o->hi < CLI_MAX_STRINGS ? (int)o->hi : CLI_MAX_STRINGS;
        if (l->n >= max) {
            cli_error(EXIT_USAGE, "%s may be given at most %d times (got '%s' too)", flag, max,
                      arg);
            return -1;
        }
        l->v[l->n++] = arg;
        break;
    }
    case CLI_CALL:
        if (o->parse(o, arg)) return -1;
        break;
    }
    if (o->given) *o->given = 1;
    return 0;
}

/* The option a long name (len characters, no "--") stands for: an exact name or alias, or
 * an unambiguous prefix of one. Returns its index; -2 for --help; -1 after an error. */
static int find_long(const cli_command *cmd, const cli_opt *opts, const char *name, size_t len)
{
    for (int i = 0; opts[i].name; i++)
        if ((strlen(opts[i].name) == len && !strncmp(opts[i].name, name, len)) ||
            (opts[i].alias && strlen(opts[i].alias) == len && !strncmp(opts[i].alias, name, len)))
            return i;
    if (len == 4 && !strncmp(name, "help", 4)) return -2;
    int found = -1, count = 0;
    char cands[400] = "";
    for (int i = -1; i < 0 || opts[i].name; i++) {
        const char *n = i < 0 ? "help" : opts[i].name, *a = i < 0 ? NULL : opts[i].alias;
        if (len && (!strncmp(n, name, len) || (a && !strncmp(a, name, len)))) {
            found = i < 0 ? -2 : i;
            size_t u = strlen(cands);
            snprintf(cands + u, sizeof cands - u, "%s--%s", count++ ? ", " : "", n);
        }
    }
    if (count == 1) return found;
    if (count > 1) {
        cli_error(EXIT_USAGE, "option '--%.*s' is ambiguous: %s (see rtstap %s --help)",
                  (int)len, name, cands, cmd->name);
        return -1;
    }
    /* did you mean: an option ending in the word, else the closest names */
    const char *names[MAX_OPTS];
    int n = 0;
    while (n < MAX_OPTS && opts[n].name) names[n] = opts[n].name, n++;
    cli_suggest(name, len, names, n, "--", cands, sizeof cands);
    if (cands[0])
        cli_error(EXIT_USAGE, "unknown option '--%.*s'; did you mean %s? (see rtstap %s --help)",
                  (int)len, name, cands, cmd->name);
    else
        cli_error(EXIT_USAGE, "unknown option '--%.*s' (see rtstap %s --help)", (int)len, name,
                  cmd->name);
    return -1;
}

/* the pass that applies o: 0 for CLI_EARLY, else 1 */
static int pass_of(const cli_opt *o) { return (o->flags & CLI_EARLY) ? 0 : 1; }

/* --help: the usage on stdout, or the documentation generator's hook (cli_doc.c) */
static cli_help_fn help_hook;
static void *help_ctx;

void cli_set_help_hook(cli_help_fn fn, void *ctx)
{
    help_hook = fn;
    help_ctx = ctx;
}

static void help(const cli_command *cmd, const cli_opt *opts)
{
    if (help_hook) help_hook(cmd, opts, help_ctx);
    else cli_usage(stdout, cmd, opts);
}

/* The positional argument a (CLI_POSITIONAL): its option's value, once. *given counts the
 * arguments of this pass. CLI_GO, or EXIT_USAGE (printed). */
static int positional(const cli_command *cmd, const cli_opt *opts, const char *a, int pass,
                      unsigned char *seen, int *given)
{
    int k = 0;
    while (opts[k].name && !(opts[k].flags & CLI_POSITIONAL)) k++;
    if (!opts[k].name) return cli_error(EXIT_USAGE, "unexpected argument '%s'", a);
    if (++*given > 1)
        return cli_error(EXIT_USAGE, "unexpected argument '%s': %s takes one %s (see rtstap %s "
                         "--help)", a, cmd->name, opts[k].metavar, cmd->name);
    seen[k] = 1;
    return pass_of(&opts[k]) == pass && apply(&opts[k], a) ? EXIT_USAGE : CLI_GO;
}

/* One pass over argv. pass 0 reports every syntax error, answers --help, applies the
 * CLI_EARLY options and marks in seen[] the options present; pass 1 applies the others.
 * CLI_GO, EXIT_OK (help) or EXIT_USAGE. */
static int scan(const cli_command *cmd, cli_opt *opts, int argc, char **argv, int pass,
                unsigned char *seen)
{
    int npos = 0, named = -1; /* positional arguments; the CLI_POSITIONAL option by name */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) { /* the rest are arguments */
            for (int st; ++i < argc;)
                if ((st = positional(cmd, opts, argv[i], pass, seen, &npos)) != CLI_GO) return st;
            break;
        }
        if (a[0] != '-' || !a[1]) {
            const int st = positional(cmd, opts, a, pass, seen, &npos);
            if (st != CLI_GO) return st;
            continue;
        }
        if (a[1] == '-') { /* --name, --name=value */
            const char *eq = strchr(a + 2, '=');
            size_t len = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
            int k = find_long(cmd, opts, a + 2, len);
            if (k == -1) return EXIT_USAGE; /* (printed; only pass 0 gets here) */
            if (k == -2) {
                if (eq) return cli_error(EXIT_USAGE, "--help takes no value");
                help(cmd, opts);
                return EXIT_OK;
            }
            const cli_opt *o = &opts[k];
            const char *arg = NULL;
            seen[k] = 1;
            if (o->flags & CLI_POSITIONAL) named = k;
            if (takes_value(o)) {
                if (eq) arg = eq + 1;
                else if (i + 1 < argc) arg = argv[++i];
                else return cli_error(EXIT_USAGE, "--%s needs a value", o->name);
            } else if (eq) {
                return cli_error(EXIT_USAGE, "--%s takes no value (got '%s')", o->name, a);
            }
            if (pass_of(o) == pass && apply(o, arg)) return EXIT_USAGE;
            continue;
        }
        for (const char *c = a + 1; *c; c++) { /* -x, -xVALUE, -x VALUE, bundles -fq */
            if (*c == 'h') {
                help(cmd, opts);
                return EXIT_OK;
            }
            int k = 0;
            while (opts[k].name && opts[k].short_name != *c) k++;
            if (!opts[k].name)
                return cli_error(EXIT_USAGE, "unknown option '-%c' (see rtstap %s --help)", *c,
                                 cmd->name);
            const cli_opt *o = &opts[k];
            const char *arg = NULL;
            seen[k] = 1;
            if (takes_value(o)) {
                if (c[1]) arg = c + 1;
                else if (i + 1 < argc) arg = argv[++i];
                else return cli_error(EXIT_USAGE, "-%c needs a value", *c);
            }
            if (pass_of(o) == pass && apply(o, arg)) return EXIT_USAGE;
            if (arg) break; /* the rest of the argument was the value */
        }
    }
    if (npos && named >= 0)
        return cli_error(EXIT_USAGE, "%s given twice: as the argument and with --%s (see rtstap "
                         "%s --help)", opts[named].metavar, opts[named].name, cmd->name);
    return CLI_GO;
}

/* the option names the file registry quotes (it keeps the pointers) */
static char file_flags[MAX_OPTS][48];

int cli_parse(const cli_command *cmd, cli_opt *opts, int argc, char **argv)
{
    unsigned char seen[MAX_OPTS] = {0};
    int count = 0;
    while (opts[count].name) count++;
    if (count > MAX_OPTS) return cli_error(EXIT_USAGE, "%s: too many options", cmd->name);
    int st = scan(cmd, opts, argc, argv, 0, seen);
    if (st == CLI_GO) st = scan(cmd, opts, argc, argv, 1, seen);
    if (st != CLI_GO) return st;
    /* every missing required option in one message: "perfect needs --size SIZE, ..." */
    char missing[512] = "";
    int n = 0;
    for (int i = 0; i < count; i++) n += (opts[i].flags & CLI_REQUIRED) && !seen[i];
    for (int i = 0, k = 0; i < count; i++) {
        if (!(opts[i].flags & CLI_REQUIRED) || seen[i]) continue;
        size_t u = strlen(missing);
        k++;
        const int pos = (opts[i].flags & CLI_POSITIONAL) != 0; /* "FILE (or --input FILE)" */
        snprintf(missing + u, sizeof missing - u, "%s%s%s--%s%s%s%s",
                 k == 1 ? "" : k == n ? " and " : ", ", pos ? opts[i].metavar : "",
                 pos ? " (or " : "", opts[i].name, opts[i].metavar ? " " : "",
                 opts[i].metavar ? opts[i].metavar : "", pos ? ")" : "");
    }
    if (n) return cli_error(EXIT_USAGE, "%s needs %s (see rtstap %s --help)", cmd->name, missing,
                            cmd->name);
    /* the files: inputs first, then the outputs, each checked against those before it */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < count; i++) {
            const cli_opt *o = &opts[i];
            const unsigned want = pass ? CLI_OUTPUT : CLI_INPUT;
            if (!(o->flags & want) || !seen[i]) continue;
            char *flag = file_flags[i];
            snprintf(flag, sizeof file_flags[i], "--%s", o->name);
            const char *one = o->kind == CLI_STRING ? *(const char **)o->value : NULL;
            const cli_strings *many = o->kind == CLI_STRINGS ? o->value : NULL;
            for (int k = 0; k < (many ? many->n : 1); k++) {
                const char *path = many ? many->v[k] : one;
                int st = pass ? cli_files_output(flag, path) : cli_files_input(flag, path);
                if (st) return st;
            }
        }
    return CLI_GO;
}

/* ---- the help text -------------------------------------------------------------------- */

enum { WIDTH = 90, HELP_COL_MAX = 28 };

/* "-o, --output FILE" or "    --input FILE" */
static void left_part(const cli_opt *o, char *buf, size_t len)
{
    int w = o->short_name ? snprintf(buf, len, "-%c, --%s", o->short_name, o->name)
                          : snprintf(buf, len, "    --%s", o->name);
    if (o->metavar && w >= 0 && (size_t)w < len) snprintf(buf + w, len - (size_t)w, " %s", o->metavar);
}

/* help lines from column col (the first continues the current line) */
static void help_lines(FILE *f, const char *help, int col)
{
    const char *p = help ? help : "";
    for (int first = 1;; first = 0) {
        const char *nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        if (!first) fprintf(f, "%*s", col, "");
        fprintf(f, "%.*s\n", n, p);
        if (!nl) break;
        p = nl + 1;
    }
}

void cli_usage(FILE *f, const cli_command *cmd, const cli_opt *opts)
{
    /* synopsis: the required options first, then the others in table order */
    char head[64];
    int indent = snprintf(head, sizeof head, "usage: rtstap %s", cmd->name);
    fputs(head, f);
    int col = indent;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; opts[i].name; i++) {
            const cli_opt *o = &opts[i];
            int req = (o->flags & CLI_REQUIRED) != 0;
            if (req != (pass == 0)) continue;
            char item[128];
            const int pos = (o->flags & CLI_POSITIONAL) != 0; /* "FILE|--input FILE" */
            int n = snprintf(item, sizeof item, "%s%s%s--%s%s%s%s%s", req ? "" : "[",
                             pos ? o->metavar : "", pos ? "|" : "", o->name, o->metavar ? " " : "",
                             o->metavar ? o->metavar : "", req ? "" : "]",
                             o->kind == CLI_STRINGS ? "..." : "");
            if (col + 1 + n > WIDTH) {
                fprintf(f, "\n%*s", indent, "");
                col = indent;
            }
            fprintf(f, " %s", item);
            col += 1 + n;
        }
    fprintf(f, "\n       rtstap %s --help\n\n", cmd->name);
    if (cmd->about) fprintf(f, "%s\n", cmd->about);

    int hcol = 0;
    char left[128];
    for (int i = 0; opts[i].name; i++) {
        left_part(&opts[i], left, sizeof left);
        int w = 2 + (int)strlen(left) + 2;
        if (w <= HELP_COL_MAX && w > hcol) hcol = w;
    }
    if (hcol < 16) hcol = 16;
    for (int i = 0; opts[i].name; i++) {
        const cli_opt *o = &opts[i];
        left_part(o, left, sizeof left);
        int w = fprintf(f, "  %s", left);
        if (w + 2 > hcol) fprintf(f, "\n%*s", hcol, "");
        else fprintf(f, "%*s", hcol - w, "");
        help_lines(f, o->help, hcol);
        if (o->alias) fprintf(f, "%*s(--%s: the old spelling, still accepted)\n", hcol, "", o->alias);
        if (o->flags & CLI_POSITIONAL)
            fprintf(f, "%*s(or %s alone: rtstap %s %s)\n", hcol, "", o->metavar, cmd->name, o->metavar);
    }
    fprintf(f, "  -h, --help%*sthis text\n", hcol - 12, "");
    if (cmd->epilogue) fprintf(f, "\n%s", cmd->epilogue);
}

/* ---- shared value parsers -------------------------------------------------------------- */

int cli_parse_preset(const cli_opt *o, const char *arg)
{
    stap_error err;
    if (stap_preset_parse(arg, (stap_preset *)o->value, &err)) {
        cli_error(EXIT_USAGE, "--%s: %s", o->name, err.msg);
        return -1;
    }
    return 0;
}

int cli_parse_qr(const cli_opt *o, const char *arg)
{
    stap_error err;
    if (stap_qr_method_parse(arg, (stap_qr_method *)o->value, &err)) {
        cli_error(EXIT_USAGE, "--%s: %s", o->name, err.msg);
        return -1;
    }
    return 0;
}

int cli_parse_backend(const cli_opt *o, const char *arg)
{
    stap_error err;
    if (stap_backend_parse(arg, (stap_backend *)o->value, &err)) {
        cli_error(EXIT_USAGE, "--%s: %s", o->name, err.msg);
        return -1;
    }
    return 0;
}

int cli_parse_cfar_kind(const cli_opt *o, const char *arg)
{
    stap_error err;
    if (stap_cfar_parse_kind(arg, (stap_cfar_kind *)o->value, &err)) {
        cli_error(EXIT_USAGE, "--%s: %s", o->name, err.msg);
        return -1;
    }
    return 0;
}

int cli_parse_detector(const cli_opt *o, const char *arg)
{
    stap_error err;
    if (stap_detector_parse(arg, (stap_cfar_kind *)o->value, &err)) {
        cli_error(EXIT_USAGE, "--%s: %s", o->name, err.msg);
        return -1;
    }
    return 0;
}

int cli_detector_check(const stap_cfar_config *cfar, const stap_config *cfg)
{
    stap_error err;
    stap_config c = *cfg;
    if (!stap_cfar_is_adaptive(cfar->kind)) return EXIT_OK;
    if (!stap_config_validate(&c, 0, 0, 0, &err) && stap_detector_check(cfar, &c, &err))
        return cli_error(EXIT_USAGE, "--detector: %s", cli_flags_in(&err));
    return EXIT_OK;
}

int cli_parse_training_window(const cli_opt *o, const char *arg)
{
    stap_error err;
    if (stap_training_window_parse(arg, &((cli_training *)o->value)->window, &err)) {
        cli_error(EXIT_USAGE, "--%s: %s", o->name, err.msg);
        return -1;
    }
    return 0;
}

int cli_parse_algorithm(const cli_opt *o, const char *arg)
{
    stap_error err;
    if (stap_algorithm_parse(arg, &((cli_training *)o->value)->algorithm, &err)) {
        cli_error(EXIT_USAGE, "--%s: %s", o->name, err.msg);
        return -1;
    }
    return 0;
}

int cli_parse_doppler_order(const cli_opt *o, const char *s)
{
    int *q = o->value;
    if (cli_int("--doppler-order", s, 1, 1 << 20, q)) return -1;
    if (*q % 2 == 0) {
        cli_error(EXIT_USAGE, "--doppler-order must be odd (got %d)", *q);
        return -1;
    }
    return 0;
}

/* --cfar-train-total, --cfar-guard-total: MATLAB's count over both sides (phased.CFARDetector's
 * NumTrainingCells, NumGuardCells), stored per side; an odd total has no even split. */
int cli_parse_cfar_total(const cli_opt *o, const char *s)
{
    char flag[48];
    snprintf(flag, sizeof flag, "--%s", o->name);
    const int train = !strcmp(o->name, "cfar-train-total");
    int total;
    if (cli_int(flag, s, train ? 2 : 0, train ? 2 * STAP_CFAR_MAX_TRAIN : 1 << 21, &total)) return -1;
    if (total % 2) {
        cli_error(EXIT_USAGE, "%s %d: the cells of both sides together must be even (rtstap takes "
                  "the same number each side: --%s %d or %d)", flag, total,
                  train ? "cfar-train" : "cfar-guard", total / 2, total / 2 + 1);
        return -1;
    }
    *(int *)o->value = total / 2;
    return 0;
}

void cli_training_defaults(cli_training *t)
{
    memset(t, 0, sizeof *t);
    stap_config c;
    stap_config_defaults(&c);
    t->window = c.training_window;
    t->block = c.block;
    t->guard = c.guard;
}

/* "a, b and c": the algorithms with (want = 1) or without (want = 0) a trait */
static const char *algorithms_with(unsigned trait, int want, char *buf, size_t len)
{
    const char *names[16];
    int n = 0;
    for (int a = 0; n < 16 && stap_algorithm_info_of((stap_algorithm)a); a++) {
        const stap_algorithm_info *i = stap_algorithm_info_of((stap_algorithm)a);
        if (((i->traits & trait) != 0) == want) names[n++] = i->name;
    }
    size_t k = 0;
    buf[0] = '\0';
    for (int j = 0; j < n && k < len; j++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s", j == 0 ? "" : j == n - 1 ? " and " : ", ",
                              names[j]);
    return buf;
}

/* the algorithm whose own parameter (stap_algorithm_info.param) is `param` */
static const char *param_owner(const char *param)
{
    for (int a = 0; stap_algorithm_info_of((stap_algorithm)a); a++) {
        const stap_algorithm_info *i = stap_algorithm_info_of((stap_algorithm)a);
        if (i->param && !strcmp(i->param, param)) return i->name;
    }
    return "(none)";
}

/* an algorithm option given to an algorithm it is not a parameter of */
static int param_misplaced(const cli_training *t, const char *param, int given)
{
    const stap_algorithm_info *i = stap_algorithm_info_of(t->algorithm);
    return given && !(i && i->param && !strcmp(i->param, param));
}

int cli_training_apply(const cli_training *t, int segments_given, stap_config *cfg)
{
    if (t->window != STAP_TRAINING_SLIDING && (t->block_given || t->guard_given))
        return cli_error(EXIT_USAGE, "--%s applies to --training-window sliding",
                         t->block_given ? "block" : "guard");
    if (t->window == STAP_TRAINING_SLIDING && segments_given)
        return cli_error(EXIT_USAGE, "--segments applies to --training-window segment; a "
                         "sliding window's blocks are --block cells long");
    if (param_misplaced(t, "angle_bins", t->angle_bins_given))
        return cli_error(EXIT_USAGE, "--angle-bins applies to --algorithm %s", param_owner("angle_bins"));
    if (param_misplaced(t, "dpca_shift", t->dpca_shift_given))
        return cli_error(EXIT_USAGE, "--dpca-shift applies to --algorithm %s", param_owner("dpca_shift"));
    cfg->training_window = t->window;
    cfg->block = t->block;
    cfg->guard = t->guard;
    cfg->algorithm = t->algorithm;
    cfg->angle_bins = t->angle_bins_given ? t->angle_bins : 0;
    cfg->dpca_shift = t->dpca_shift_given ? t->dpca_shift : 0;
    return 0;
}

int cli_training_order(const cli_training *t, int *dorder)
{
    const stap_algorithm_info *ai = stap_algorithm_info_of(t->algorithm);
    char list[96];
    if (!ai || !(ai->traits & STAP_TRAIT_SUBCPI)) {
        if (t->sub_cpi_given)
            return cli_error(EXIT_USAGE, "--sub-cpi applies to --algorithm %s",
                             algorithms_with(STAP_TRAIT_SUBCPI, 1, list, sizeof list));
        return 0;
    }
    if (*dorder > 0)
        return cli_error(EXIT_USAGE, "--doppler-order applies to %s; %s takes --sub-cpi M "
                         "(pulses of a sub-CPI)", algorithms_with(STAP_TRAIT_SUBCPI, 0, list,
                         sizeof list), ai->name);
    if (ai->taps_max && t->sub_cpi_given &&
        (t->sub_cpi < ai->taps_min || t->sub_cpi > ai->taps_max))
        return cli_error(EXIT_USAGE, "--sub-cpi %d: %s cancels over %d or %d pulses", t->sub_cpi,
                         ai->name, ai->taps_min, ai->taps_max);
    *dorder = t->sub_cpi_given ? t->sub_cpi : ai->taps_default;
    return 0;
}

int cli_parse_layout_opt(const cli_opt *o, const char *arg)
{
    return cli_parse_layout(arg, (cli_input_opts *)o->value);
}

int cli_parse_scale_opt(const cli_opt *o, const char *arg)
{
    return cli_parse_scale(arg, (cli_input_opts *)o->value);
}

/* ---- after parsing ---------------------------------------------------------------------- */

int cli_output_ok(const char *path, int force)
{
    stap_error err;
    if (!path || !strcmp(path, "-")) return EXIT_OK;
    if (stap_output_check_mode(path, cli_write_mode(force), &err)) return cli_fail(&err);
    return EXIT_OK;
}

int cli_rank_device(const char *devices_s, stap_backend backend, int *device)
{
    if (*device >= 0) {
        if (devices_s) return cli_error(EXIT_USAGE, "--devices: not with --device");
        return EXIT_OK;
    }
    if (backend == STAP_BACKEND_CPU || backend == STAP_BACKEND_LAPACK) return EXIT_OK;
    int list[64], n = 0;
    stap_error err;
    int count = 0;
    if (!devices_s && stap_la_gpu_count(&count, &err) != STAP_OK) {
        if (backend != STAP_BACKEND_AUTO) return cli_error(EXIT_PROCESSING, "no GPU: %s", err.msg);
        return EXIT_OK; /* auto on a host without GPUs: the CPU engine */
    }
    const int st = cli_devices(devices_s ? devices_s : "all", backend, list, 64, &n);
    if (st) return st;
    if (n > 0 && list[0] >= 0) *device = list[par_local_rank() % n];
    return EXIT_OK;
}

int cli_select_device(int device)
{
    stap_error err;
    if (device < 0) return EXIT_OK;
    int st = stap_la_gpu_select(device, &err);
    if (st == STAP_EINVAL) return cli_error(EXIT_USAGE, "--device: %s", err.msg);
    if (st) return cli_error(EXIT_PROCESSING, "--device %d: %s", device, err.msg);
    return EXIT_OK;
}

int cli_parse_keep(const cli_opt *o, const char *arg)
{
    static const struct {
        const char *name;
        unsigned bit;
    } items[] = {{"detections", STAP_KEEP_DETECTIONS}, {"weights", STAP_KEEP_WEIGHTS},
                 {"output", STAP_KEEP_OUTPUT}};
    unsigned keep = 0;
    const char *p = arg;
    while (*p) {
        const size_t n = strcspn(p, ",");
        unsigned bit = 0;
        for (size_t k = 0; k < sizeof items / sizeof *items; k++)
            if (n == strlen(items[k].name) && !strncmp(p, items[k].name, n)) bit = items[k].bit;
        if (!bit) {
            cli_error(EXIT_USAGE, "--%s: '%.*s' is not detections, weights or output", o->name,
                      (int)n, p);
            return -1;
        }
        keep |= bit;
        p += n + (p[n] == ',');
    }
    if (!keep) {
        cli_error(EXIT_USAGE, "--%s: name at least one of detections, weights and output", o->name);
        return -1;
    }
    *(unsigned *)o->value = keep;
    return 0;
}

int cli_devices(const char *spec, stap_backend backend, int *devices, int max, int *n)
{
    stap_error err;
    int count = 0;
    *n = 0;
    const int have = stap_la_gpu_count(&count, &err) == STAP_OK;
    if (!strcmp(spec, "all")) {
        if (!have) {
            if (backend != STAP_BACKEND_AUTO)
                return cli_error(EXIT_PROCESSING, "--devices all: no GPU: %s", err.msg);
            fprintf(stderr, "rtstap: warning: --devices all: no GPU (%s): one CPU engine\n", err.msg);
            return EXIT_OK;
        }
        *n = count < max ? count : max;
        for (int d = 0; d < *n; d++) devices[d] = d;
        return EXIT_OK;
    }
    const char *p = spec;
    do { /* one number at least, and one after each comma ('', '0,' and '0,,1' are no list) */
        char *end;
        const long d = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || (*end == ',' && !end[1]) || d < 0 || d > INT_MAX ||
            *n == max)
            return cli_error(EXIT_USAGE, "--devices: '%s' is not a list of device numbers or all", spec);
        for (int k = 0; k < *n; k++)
            if (devices[k] == d) return cli_error(EXIT_USAGE, "--devices: device %ld twice", d);
        devices[(*n)++] = (int)d;
        p = *end ? end + 1 : end;
    } while (*p);
    /* test hook: RTSTAP_TEST_DEVICES_CPU=1 takes the list as that many engines of the run's own
     * backend with no device selected (numbered -1, -2, ...): the dealing, the ordered writer
     * and the stops tested where there is no GPU */
    const char *hook = getenv("RTSTAP_TEST_DEVICES_CPU");
    if (hook && !strcmp(hook, "1")) {
        for (int k = 0; k < *n; k++) devices[k] = -1 - k;
        return EXIT_OK;
    }
    if (!have) return cli_error(EXIT_PROCESSING, "--devices %s: no GPU: %s", spec, err.msg);
    for (int k = 0; k < *n; k++)
        if (devices[k] >= count)
            return cli_error(EXIT_USAGE, "--devices: device %d does not exist: CUDA sees %d", devices[k], count);
    return EXIT_OK;
}

int cli_parse_window(const cli_opt *o, const char *s)
{
    cli_processing *p = o->value;
    if (!strcasecmp(s, "none")) p->window = STAP_WINDOW_NONE;
    else if (!strcasecmp(s, "hann")) p->window = STAP_WINDOW_HANN;
    else if (!strncasecmp(s, "chebyshev:", 10)) {
        p->window = STAP_WINDOW_CHEBYSHEV;
        if (cli_double("--window chebyshev:DB", s + 10, 1e-3, 399, &p->chebyshev_db)) return -1;
    } else {
        cli_error(EXIT_USAGE, "--window expects none, hann or chebyshev:DB (got '%s')", s);
        return -1;
    }
    p->window_given = 1;
    return 0;
}

void cli_processing_apply(const cli_processing *p, stap_config *c)
{
    if (p->dbins > 0) c->doppler_bins = p->dbins;
    if (p->dorder > 0) c->doppler_order = p->dorder;
    if (p->seg > 0) c->segments = p->seg;
    if (p->train > 0) c->training = p->train;
    if (p->beams > 0) c->beams = p->beams;
    if (p->loading_given) c->loading = p->loading;
    if (p->window_given) {
        c->window = p->window;
        if (p->window == STAP_WINDOW_CHEBYSHEV) c->chebyshev_db = p->chebyshev_db;
    }
}

void cli_fit_to_shape(stap_config *c, const cli_processing *p, char *note, size_t len)
{
    size_t at = 0;
    note[0] = '\0';
#define NOTE(...)                                                                            \
    do {                                                                                     \
        if (at < len) at += (size_t)snprintf(note + at, len - at, __VA_ARGS__);              \
    } while (0)
    if (!p->dorder && c->doppler_order > c->pulses) {
        const int q = c->pulses % 2 ? c->pulses : c->pulses - 1;
        NOTE("%s--doppler-order %d (the preset's %d is more than the %d pulses)", at ? ", " : "", q,
             c->doppler_order, c->pulses);
        c->doppler_order = q;
    }
    if (c->training_window == STAP_TRAINING_SEGMENT) {
        if (!p->seg && c->segments > 0 && c->range_gates % c->segments) {
            int s = c->segments;
            while (s > 1 && c->range_gates % s) s--;
            NOTE("%s--segments %d (the preset's %d does not divide the %d range gates)", at ? ", " : "",
                 s, c->segments, c->range_gates);
            c->segments = s;
        }
        const int cells = c->segments > 0 ? c->range_gates / c->segments : c->range_gates;
        if (!p->train && c->training > cells) {
            NOTE("%s--training %d (the preset's %d is more than a segment's %d cells)", at ? ", " : "",
                 cells, c->training, cells);
            c->training = cells;
        }
    }
#undef NOTE
}
