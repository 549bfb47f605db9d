/* live_tally.c: what a consumer of a live receiver's events decided (include/rtstap/vrt.h,
 * stap_live_tally): complete and lost CPIs up to the stream's end, every lost one listed as
 * runs by reason. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "vrt.h"

enum { FIRST_RANGES = 4096 };

int stap_live_tally_init(stap_live_tally *t, long long decide, stap_error *err)
{
    memset(t, 0, sizeof *t);
    if (decide < 1) return stap_fail(err, STAP_EINVAL, "live input: a stream of %lld CPIs (need at least 1)", decide);
    t->ranges = malloc(sizeof *t->ranges * FIRST_RANGES);
    if (!t->ranges) return stap_fail(err, STAP_ENOMEM, "out of memory for the lost CPIs' list");
    t->cap = FIRST_RANGES;
    t->decide = decide;
    t->first_cpi = -1;
    return STAP_OK;
}

void stap_live_tally_free(stap_live_tally *t)
{
    if (!t) return;
    free(t->ranges);
    t->ranges = NULL;
    t->cap = t->nranges = 0;
}

int stap_live_tally_done(const stap_live_tally *t)
{
    return t->complete + t->lost >= t->decide;
}

/* room for one more run: the list doubled (0), or it cannot grow (1) */
static int grow(stap_live_tally *t)
{
    if (t->nranges < t->cap) return 0;
    if (t->cap > INT_MAX / 2) return 1;
    stap_live_lost_range *p = realloc(t->ranges, sizeof *p * (size_t)t->cap * 2);
    if (!p) return 1;
    t->ranges = p;
    t->cap *= 2;
    return 0;
}

int stap_live_tally_add(stap_live_tally *t, const stap_live_event *ev)
{
    if ((ev->kind != STAP_LIVE_CPI && ev->kind != STAP_LIVE_LOST) || stap_live_tally_done(t)) return 0;
    if (t->first_cpi < 0) t->first_cpi = ev->cpi;
    if (ev->kind == STAP_LIVE_CPI) {
        t->complete++;
        return 1;
    }
    long long count = ev->count;
    if (t->complete + t->lost + count > t->decide) count = t->decide - t->complete - t->lost;
    if (count <= 0) return 0;
    t->lost += count;
    stap_live_lost_range *last = t->nranges ? &t->ranges[t->nranges - 1] : NULL;
    if (last && last->reason == ev->reason && last->cpi + last->count == ev->cpi)
        last->count += count;
    else if (t->ranges && !grow(t))
        t->ranges[t->nranges++] = (stap_live_lost_range){ev->cpi, count, ev->reason};
    else
        t->ranges_truncated = 1;
    return 0;
}
