/* live.c: a live receiver (stap_live_udp, include/rtstap/vrt.h) as a stream's source
 * (STAP_STREAM_LIVE): its complete CPIs in order to the engines, each numbered by its CPI in
 * the feed; the lost ones counted and listed, never run; the latency from a CPI's last
 * datagram to its results. Made once per stream: nothing is allocated per CPI. */
#include <stdlib.h>
#include <string.h>

#include "stream_internal.h"

enum { LIVE_RING = 1024 }; /* > the CPIs in flight: 16 devices x 8 slots, with room */

struct stap_stream_live {
    stap_live_udp *rx;
    const atomic_int *stop;
    long long decide;                 /* complete + lost at which the stream ends        */
    long long complete, lost, first_cpi;
    double t_first, t_last;           /* ms: the first and the last CPI decided          */
    long long ring_cpi[LIVE_RING];    /* by the stream's CPI n: the feed's CPI            */
    double ring_arrival[LIVE_RING];   /* and when its last datagram came                 */
    stap_live_lost_range *ranges;
    int nranges, truncated;
    double *lat;                      /* arrival to results, by completion               */
    atomic_llong nlat;
    long long lat_cap;
};

int stap_stream_live_make(stap_stream_live **out, stap_live_udp *rx, long long decide,
                          const atomic_int *stop, stap_error *err)
{
    *out = NULL;
    stap_stream_live *L = calloc(1, sizeof *L);
    if (L) L->ranges = malloc(sizeof *L->ranges * STAP_STREAM_LIVE_RANGES);
    if (L) L->lat = malloc(sizeof *L->lat * (size_t)decide);
    if (!L || !L->ranges || !L->lat) {
        stap_stream_live_free(L);
        return stap_fail(err, STAP_ENOMEM, "out of memory for a live source of %lld CPIs", decide);
    }
    L->rx = rx;
    L->stop = stop;
    L->decide = decide;
    L->first_cpi = -1;
    L->lat_cap = decide;
    atomic_init(&L->nlat, 0);
    *out = L;
    return STAP_OK;
}

void stap_stream_live_free(stap_stream_live *L)
{
    if (!L) return;
    free(L->ranges);
    free(L->lat);
    free(L);
}

/* lost CPIs: counted (never more than the stream decides), listed while there is room */
static void note_lost(stap_stream_live *L, const stap_live_event *ev)
{
    long long count = ev->count;
    if (L->complete + L->lost + count > L->decide) count = L->decide - L->complete - L->lost;
    if (count <= 0) return;
    L->lost += count;
    stap_live_lost_range *last = L->nranges ? &L->ranges[L->nranges - 1] : NULL;
    if (last && last->reason == ev->reason && last->cpi + last->count == ev->cpi)
        last->count += count;
    else if (L->nranges < STAP_STREAM_LIVE_RANGES)
        L->ranges[L->nranges++] = (stap_live_lost_range){ev->cpi, count, ev->reason};
    else
        L->truncated = 1;
}

/* the next complete CPI (the stream's CPI n), the lost ones noted on the way; the end once
 * the stream has decided its CPIs, the receiver stopped, or the stream was asked to stop */
int stap_stream_live_get(void *user, long long n, const void **cube, stap_error *err)
{
    stap_stream_live *L = user;
    for (;;) {
        if (L->complete + L->lost >= L->decide) return STAP_STREAM_END;
        stap_live_event ev;
        int st = stap_live_udp_next(L->rx, &ev, 2, err);
        if (st) return st;
        if (ev.kind == STAP_LIVE_END) return STAP_STREAM_END;
        if (ev.kind == STAP_LIVE_NONE) /* meanwhile the stream collects what is done */
            return atomic_load(L->stop) ? STAP_STREAM_END : STAP_STREAM_AGAIN;
        const double now = stap_now_ms();
        if (L->first_cpi < 0) {
            L->first_cpi = ev.cpi;
            L->t_first = now;
        }
        L->t_last = now;
        if (ev.kind == STAP_LIVE_LOST) {
            note_lost(L, &ev);
            continue;
        }
        L->complete++;
        L->ring_cpi[n % LIVE_RING] = ev.cpi;
        L->ring_arrival[n % LIVE_RING] = ev.arrival_ms;
        *cube = ev.iq; /* the receiver's buffer, until release */
        return STAP_OK;
    }
}

void stap_stream_live_release(void *user, long long n)
{
    stap_stream_live *L = user;
    stap_live_udp_release(L->rx, L->ring_cpi[n % LIVE_RING]);
}

long long stap_stream_live_input_cpi(void *user, long long n)
{
    return ((stap_stream_live *)user)->ring_cpi[n % LIVE_RING];
}

/* CPI n's results came at done_ms (called before its release) */
void stap_stream_live_done(stap_stream_live *L, long long n, double done_ms)
{
    const long long k = atomic_fetch_add(&L->nlat, 1);
    if (k < L->lat_cap) L->lat[k] = done_ms - L->ring_arrival[n % LIVE_RING];
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void stap_stream_live_report_of(stap_stream_live *L, double deadline_ms, stap_stream_live_report *out)
{
    memset(out, 0, sizeof *out);
    out->complete = L->complete;
    out->lost = L->lost;
    out->first_cpi = L->first_cpi;
    out->lost_ranges = L->ranges;
    out->nranges = L->nranges;
    out->ranges_truncated = L->truncated;
    out->seconds = L->first_cpi >= 0 ? (L->t_last - L->t_first) * 1e-3 : 0;
    long long n = atomic_load(&L->nlat);
    if (n > L->lat_cap) n = L->lat_cap;
    if (n < 1) return;
    qsort(L->lat, (size_t)n, sizeof *L->lat, cmp_double);
    out->lat_p50 = stap_stream_quantile(L->lat, n, 0.50);
    out->lat_p99 = stap_stream_quantile(L->lat, n, 0.99);
    out->lat_max = L->lat[n - 1];
    for (long long k = 0; deadline_ms > 0 && k < n; k++) out->deadline_misses += L->lat[k] > deadline_ms;
}
