/* progress: the progress line of long commands (progress.h). */
#include "progress.h"

#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_opts.h"
#include "rtstap/common.h"

int progress_parse_opt(const cli_opt *o, const char *arg)
{
    static const char *const names[] = {"auto", "none", "line", "json"};
    for (int k = 0; k < 4; k++)
        if (!strcmp(arg, names[k])) {
            *(int *)o->value = k;
            return 0;
        }
    cli_error(EXIT_USAGE, "--%s: '%s' is not auto, line, json or none", o->name, arg);
    return -1;
}

void progress_begin(progress *p, int mode, int quiet, const char *what, const char *unit,
                    long long total)
{
    memset(p, 0, sizeof *p);
    if (mode == PROGRESS_AUTO) mode = isatty(STDERR_FILENO) ? PROGRESS_LINE : PROGRESS_NONE;
    if (quiet && mode == PROGRESS_LINE) mode = PROGRESS_NONE;
    p->mode = mode;
    p->what = what;
    p->unit = unit;
    p->total = total;
    p->t0 = stap_now_ms();
    p->last = p->t0 - 1e9; /* the first update draws */
}

static void draw(progress *p, double now, int last)
{
    const double s = (now - p->t0) * 1e-3;
    const double rate = s > 0 ? p->done / s : 0;
    const double eta = rate > 0 && p->total > p->done ? (p->total - p->done) / rate : 0;
    const double pct = p->total > 0 ? 100.0 * p->done / p->total : 0;
    const char *limit = p->limit ? p->limit(p->limit_user) : NULL;
    if (p->mode == PROGRESS_JSON) {
        fprintf(stderr, "{\"progress\": {\"what\": \"%s\", \"done\": %lld, \"total\": %lld, "
                "\"percent\": %.1f, \"rate\": %.1f, \"unit\": \"%s\", \"elapsed_s\": %.3f, "
                "\"eta_s\": %.1f%s%s%s, \"final\": %s}}\n", p->what, p->done, p->total, pct, rate,
                p->unit, s, eta, limit ? ", \"limit\": \"" : "", limit ? limit : "",
                limit ? "\"" : "", last ? "true" : "false");
    } else {
        const long long e = (long long)(eta + 0.5);
        fprintf(stderr, "\r\033[K%s: %lld/%lld %s (%.0f%%), %.0f %s/s, ETA %lld:%02lld%s%s%s", p->what,
                p->done, p->total, p->unit, pct, rate, p->unit, e / 60, e % 60,
                limit ? ", " : "", limit ? limit : "", limit ? " limits" : "");
        p->drawn = 1;
    }
    fflush(stderr);
}

void progress_update(progress *p, long long done)
{
    if (p->mode != PROGRESS_LINE && p->mode != PROGRESS_JSON) return;
    p->done = done;
    const double now = stap_now_ms();
    if (now - p->last < (p->mode == PROGRESS_JSON ? 1000.0 : 200.0)) return;
    p->last = now;
    draw(p, now, 0);
}

void progress_end(progress *p)
{
    if (p->mode == PROGRESS_JSON) draw(p, stap_now_ms(), 1);
    else if (p->mode == PROGRESS_LINE && p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->mode = PROGRESS_NONE;
}

void progress_fn(void *user, long long done, long long total)
{
    progress *p = user;
    p->total = total;
    progress_update(p, done);
}
