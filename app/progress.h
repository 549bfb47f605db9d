/* progress: one line for long work (a recording's run, gen --cpis, the imports, bench) —
 * done/total, %, rate, ETA and what limits the run — redrawn in place on a terminal (stderr)
 * and cleared at the end; absent when stderr is not a terminal or with --quiet; or, with
 * --progress json, a JSON object a line on stderr for scripts (at most one a second, and
 * the last). Only app/ draws: the library reports through stap_progress_fn. */
#ifndef RTSTAP_APP_PROGRESS_H
#define RTSTAP_APP_PROGRESS_H

#include <stdio.h>

enum { PROGRESS_AUTO = 0, PROGRESS_NONE, PROGRESS_LINE, PROGRESS_JSON };

typedef struct progress {
    int mode;           /* PROGRESS_NONE, _LINE or _JSON once begun                 */
    const char *what;   /* "run", "gen", ...                                        */
    const char *unit;   /* "CPIs", "cases"                                          */
    long long total, done;
    double t0, last;    /* ms                                                       */
    int drawn;          /* a line is on the terminal                                */
    /* what limits the work now (e.g. "reading"), or NULL: asked at each drawing */
    const char *(*limit)(void *user);
    void *limit_user;
} progress;

/* --progress MODE: value is an int (PROGRESS_*) */
struct cli_opt;
int progress_parse_opt(const struct cli_opt *o, const char *arg);
#define CLI_OPT_PROGRESS(var)                                                                \
    {"progress", 0, CLI_CALL, (var), "MODE",                                                  \
     "auto (a line on a terminal, none otherwise or with --quiet),\n"                         \
     "line, json (a JSON object a line on stderr) or none", .parse = progress_parse_opt}

/* mode: the option's value; quiet: --quiet (silences auto and line, not json) */
void progress_begin(progress *p, int mode, int quiet, const char *what, const char *unit,
                    long long total);
void progress_update(progress *p, long long done);
/* the final line (json) or the line cleared (terminal) */
void progress_end(progress *p);
/* stap_progress_fn for library calls (user: the progress) */
void progress_fn(void *user, long long done, long long total);

#endif
