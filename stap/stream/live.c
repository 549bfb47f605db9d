/* live.c: a live receiver (stap_live_udp, include/rtstap/vrt.h) as a stream's source
 * (STAP_STREAM_LIVE): its complete CPIs in order to the engines, each numbered by its CPI in
 * the feed; the lost ones counted and listed (stap_live_tally), never run; the latency from
 * a CPI's last datagram to its submit and to its results. Made once per stream: nothing is
 * allocated per CPI. */
#include <stdlib.h>

#include "stream_internal.h"

enum { LIVE_RING = 1024 }; /* > the CPIs in flight: 16 devices x 8 slots, with room */
enum { LAT_MAX = 1000000 }; /* CPIs whose timings are kept (docs/live.md) */

struct stap_stream_live {
    stap_live_udp *rx;
    const atomic_int *stop;
    stap_live_tally tally;
    double until_ms;                  /* ends at this stap_now_ms() (0: no limit)        */
    double seconds;                   /* live_seconds, counted from stap_stream_live_begin */
    double t_first, t_last;           /* ms: the first and the last CPI decided          */
    long long ring_cpi[LIVE_RING];    /* by the stream's CPI n: the feed's CPI            */
    double ring_arrival[LIVE_RING];   /* and when its last datagram came                 */
    double ring_handoff[LIVE_RING];   /* and how long from then, or from when the stream
                                         asked for it if later, until it was given out   */
    double *lat, *wait, *handoff;     /* by completion: arrival to results, to submit;
                                         the hand-over                                   */
    atomic_llong nlat;
    long long lat_cap;
};

int stap_stream_live_make(stap_stream_live **out, stap_live_udp *rx, long long decide, double seconds,
                          const atomic_int *stop, stap_error *err)
{
    *out = NULL;
    stap_stream_live *L = calloc(1, sizeof *L);
    if (!L) return stap_fail(err, STAP_ENOMEM, "out of memory for a live source");
    int st = stap_live_tally_init(&L->tally, decide, err);
    if (st) {
        free(L);
        return st;
    }
    L->lat_cap = decide < LAT_MAX ? decide : LAT_MAX;
    L->lat = malloc(sizeof *L->lat * (size_t)L->lat_cap);
    L->wait = malloc(sizeof *L->wait * (size_t)L->lat_cap);
    L->handoff = malloc(sizeof *L->handoff * (size_t)L->lat_cap);
    if (!L->lat || !L->wait || !L->handoff) {
        stap_stream_live_free(L);
        return stap_fail(err, STAP_ENOMEM, "out of memory for a live source of %lld CPIs", decide);
    }
    L->rx = rx;
    L->stop = stop;
    L->seconds = seconds > 0 ? seconds : 0;
    atomic_init(&L->nlat, 0);
    *out = L;
    return STAP_OK;
}

void stap_stream_live_free(stap_stream_live *L)
{
    if (!L) return;
    stap_live_tally_free(&L->tally);
    free(L->lat);
    free(L->wait);
    free(L->handoff);
    free(L);
}

void stap_stream_live_begin(stap_stream_live *L, double now_ms)
{
    L->until_ms = L->seconds > 0 ? now_ms + 1e3 * L->seconds : 0;
}

int stap_stream_live_next(stap_stream_live *L, long long n, int wait_ms, const void **cube, stap_error *err)
{
    const double asked = stap_now_ms(); /* the stream ready for CPI n from here */
    for (;;) {
        if (stap_live_tally_done(&L->tally)) return STAP_STREAM_END;
        int wait = wait_ms;
        if (L->until_ms > 0) {
            const double left = L->until_ms - stap_now_ms();
            if (left <= 0) return STAP_STREAM_END;
            if (left < wait) wait = (int)left + 1;
        }
        stap_live_event ev;
        int st = stap_live_udp_next(L->rx, &ev, wait, err);
        if (st) return st;
        if (ev.kind == STAP_LIVE_END) return STAP_STREAM_END;
        if (ev.kind == STAP_LIVE_NONE)
            return atomic_load(L->stop) ? STAP_STREAM_END : STAP_STREAM_AGAIN;
        const double now = stap_now_ms();
        if (L->tally.first_cpi < 0) L->t_first = now;
        L->t_last = now;
        if (!stap_live_tally_add(&L->tally, &ev)) continue; /* lost: counted */
        L->ring_cpi[n % LIVE_RING] = ev.cpi;
        L->ring_arrival[n % LIVE_RING] = ev.arrival_ms;
        L->ring_handoff[n % LIVE_RING] = now - (ev.arrival_ms > asked ? ev.arrival_ms : asked);
        *cube = ev.data; /* the receiver's buffer, until release */
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

const stap_live_tally *stap_stream_live_tally_of(const stap_stream_live *L) { return &L->tally; }

double stap_stream_live_arrival(const stap_stream_live *L, long long n)
{
    return L->ring_arrival[n % LIVE_RING];
}

/* CPI n was submitted at submit_ms, its results came at done_ms (before it is overwritten:
 * LIVE_RING CPIs later) */
void stap_stream_live_done(stap_stream_live *L, long long n, double submit_ms, double done_ms)
{
    const long long k = atomic_fetch_add(&L->nlat, 1);
    const double t = L->ring_arrival[n % LIVE_RING];
    if (k < L->lat_cap) {
        L->lat[k] = done_ms - t;
        L->wait[k] = submit_ms - t;
        L->handoff[k] = L->ring_handoff[n % LIVE_RING];
    }
}

/* v sorted: its p50, p99, max */
static void quantiles(double *v, long long n, double *p50, double *p99, double *max)
{
    stap_stream_sort(v, n);
    *p50 = stap_stream_quantile(v, n, 0.50);
    *p99 = stap_stream_quantile(v, n, 0.99);
    *max = v[n - 1];
}

void stap_stream_live_report_counts(const stap_live_tally *t, stap_stream_live_report *out)
{
    *out = (stap_stream_live_report){.complete = t->complete, .lost = t->lost, .first_cpi = t->first_cpi,
                                     .lost_ranges = t->ranges, .nranges = t->nranges,
                                     .ranges_truncated = t->ranges_truncated};
}

void stap_stream_live_report_of(stap_stream_live *L, double deadline_ms, stap_stream_live_report *out)
{
    const stap_live_tally *t = &L->tally;
    stap_stream_live_report_counts(t, out);
    out->seconds = t->first_cpi >= 0 ? (L->t_last - L->t_first) * 1e-3 : 0;
    long long n = atomic_load(&L->nlat);
    if (n > L->lat_cap) n = L->lat_cap;
    if (n < 1) return;
    for (long long k = 0; deadline_ms > 0 && k < n; k++) out->deadline_misses += L->lat[k] > deadline_ms;
    quantiles(L->lat, n, &out->lat_p50, &out->lat_p99, &out->lat_max);
    quantiles(L->wait, n, &out->wait_p50, &out->wait_p99, &out->wait_max);
    quantiles(L->handoff, n, &out->handoff_p50, &out->handoff_p99, &out->handoff_max);
}
