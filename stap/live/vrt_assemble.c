/* vrt_assemble.c: the CPI assembler of live input (include/rtstap/vrt.h, docs/live.md).
 *
 * CPI k lives in slot k mod N while it is in the window [lo, lo + N): lo is the oldest CPI
 * not yet decided. A slot records which samples arrived (one bit each) and their values;
 * the CPI is complete, and reported at once, when every bit is set. A packet of CPI
 * lo + N or later moves the window: every CPI it leaves behind that is not complete is
 * reported lost (ranges of CPIs no packet reached in one event). A complete CPI's slot
 * stays the caller's until released; a packet that needs it before then is an overrun
 * (dropped, so that its CPI is lost, never completed from a partial copy): the slot's
 * index remembers that CPI (overrun_cpi), whose later packets are dropped too and whose
 * loss is reported as an overrun. Events queue in the order they happened; nothing is
 * allocated after create. */
#include <stdlib.h>
#include <string.h>

#include "vrt.h"
#include "vrt_internal.h"

enum { SLOT_FREE = 0, SLOT_FILLING, SLOT_HELD, SLOT_DONE }; /* HELD, DONE: complete */

typedef struct vrt_slot {
    long long cpi; /* -1: none                                                         */
    int state;
    long long have; /* samples received                                               */
    uint64_t *bits; /* one bit a sample: received                                     */
    int16_t *iq;    /* C x P x R (i, q)                                               */
} vrt_slot;

struct stap_vrt_assembler {
    stap_vrt_shape s;
    int nslots;
    long long cpi_samples;
    size_t bitwords;
    vrt_slot *slots;
    long long *overrun_cpi; /* by slot index: the CPI whose packets found it held (-1) */
    int started;
    long long start, lo, hi_cpi, hi_pulse;
    stap_vrt_event *q; /* a ring of qcap events, qlen from qhead */
    int qcap, qhead, qlen;
    stap_vrt_counts n;
};

int stap_vrt_assembler_create(stap_vrt_assembler **out, const stap_vrt_shape *s, int slots,
                              stap_error *err)
{
    *out = NULL;
    if (stap_vrt_shape_validate(s, err)) return err ? err->code : STAP_EINVAL;
    if (slots < 1 || slots > 1 << 20)
        return stap_fail(err, STAP_EINVAL, "stap_vrt_assembler_create: slots must be in 1..2^20 (got %d)", slots);
    stap_vrt_assembler *a = calloc(1, sizeof *a);
    if (!a) return stap_fail(err, STAP_ENOMEM, "stap_vrt_assembler_create: out of memory");
    a->s = *s;
    a->nslots = slots;
    a->cpi_samples = (long long)s->channels * s->pulses * s->range_gates;
    a->bitwords = (size_t)(a->cpi_samples + 63) / 64;
    a->qcap = 4 * slots + 8;
    a->slots = calloc((size_t)slots, sizeof *a->slots);
    a->q = calloc((size_t)a->qcap, sizeof *a->q);
    a->overrun_cpi = malloc((size_t)slots * sizeof *a->overrun_cpi);
    int ok = a->slots && a->q && a->overrun_cpi;
    for (int k = 0; ok && k < slots; k++) {
        a->slots[k].cpi = -1;
        a->overrun_cpi[k] = -1;
        a->slots[k].bits = malloc(a->bitwords * sizeof(uint64_t));
        a->slots[k].iq = malloc((size_t)a->cpi_samples * 2 * sizeof(int16_t));
        ok = a->slots[k].bits && a->slots[k].iq;
    }
    if (!ok) {
        stap_vrt_assembler_destroy(a);
        return stap_fail(err, STAP_ENOMEM, "stap_vrt_assembler_create: out of memory for %d CPIs of %lld samples",
                         slots, (long long)s->channels * s->pulses * s->range_gates);
    }
    a->n.first_cpi = -1;
    a->start = a->lo = 0;
    a->hi_cpi = -1;
    *out = a;
    return STAP_OK;
}

void stap_vrt_assembler_destroy(stap_vrt_assembler *a)
{
    if (!a) return;
    for (int k = 0; a->slots && k < a->nslots; k++) {
        free(a->slots[k].bits);
        free(a->slots[k].iq);
    }
    free(a->slots);
    free(a->overrun_cpi);
    free(a->q);
    free(a);
}

const stap_vrt_counts *stap_vrt_assembler_counts(const stap_vrt_assembler *a)
{
    return &a->n;
}

const char *stap_vrt_lost_reason_name(stap_vrt_lost_reason r)
{
    static const char *const names[] = {"none", "missing", "unseen", "overload"};
    return (unsigned)r < sizeof names / sizeof *names ? names[r] : "unknown";
}

/* queue an event; a lost CPI right after a queued lost range of the same reason extends it */
static void emit(stap_vrt_assembler *a, stap_vrt_event_kind kind, long long cpi, long long count,
                 stap_vrt_lost_reason reason, const int16_t *iq)
{
    if (kind == STAP_VRT_CPI_LOST) a->n.cpis_lost += count;
    else a->n.cpis_complete++;
    if (a->qlen) {
        stap_vrt_event *last = &a->q[(a->qhead + a->qlen - 1) % a->qcap];
        if (kind == STAP_VRT_CPI_LOST && last->kind == STAP_VRT_CPI_LOST && last->cpi + last->count == cpi &&
            last->reason == reason) {
            last->count += count;
            return;
        }
    }
    if (a->qlen == a->qcap) return; /* not reached: at most 2N + 1 events can be pending */
    a->q[(a->qhead + a->qlen++) % a->qcap] = (stap_vrt_event){kind, cpi, count, reason, iq};
}

int stap_vrt_assembler_next(stap_vrt_assembler *a, stap_vrt_event *ev)
{
    if (!a->qlen) return 0;
    *ev = a->q[a->qhead];
    a->qhead = (a->qhead + 1) % a->qcap;
    a->qlen--;
    return 1;
}

static vrt_slot *slot_of(stap_vrt_assembler *a, long long cpi)
{
    return &a->slots[cpi % a->nslots];
}

static int complete_at(stap_vrt_assembler *a, long long cpi)
{
    const vrt_slot *sl = slot_of(a, cpi);
    return sl->cpi == cpi && (sl->state == SLOT_HELD || sl->state == SLOT_DONE);
}

/* lo past the complete CPIs it stands on */
static void skip_complete(stap_vrt_assembler *a)
{
    while (a->lo <= a->hi_cpi && complete_at(a, a->lo)) a->lo++;
}

/* move the window's start to newlo (> lo): each CPI left behind not complete is lost */
static void advance(stap_vrt_assembler *a, long long newlo)
{
    const long long in_window = newlo < a->lo + a->nslots ? newlo : a->lo + a->nslots;
    for (long long j = a->lo; j < in_window; j++) {
        if (complete_at(a, j)) continue;
        vrt_slot *sl = slot_of(a, j);
        stap_vrt_lost_reason why = STAP_VRT_LOST_UNSEEN;
        if (sl->cpi == j) { /* filling: its buffer is free again */
            sl->state = SLOT_FREE;
            sl->cpi = -1;
            why = STAP_VRT_LOST_MISSING;
        }
        if (a->overrun_cpi[j % a->nslots] == j) why = STAP_VRT_LOST_OVERRUN;
        emit(a, STAP_VRT_CPI_LOST, j, 1, why, NULL);
    }
    if (newlo > in_window) emit(a, STAP_VRT_CPI_LOST, in_window, newlo - in_window, STAP_VRT_LOST_UNSEEN, NULL);
    a->lo = newlo;
    skip_complete(a);
}

void stap_vrt_assembler_release(stap_vrt_assembler *a, long long cpi)
{
    if (cpi < 0) return;
    vrt_slot *sl = slot_of(a, cpi);
    if (sl->cpi == cpi && sl->state == SLOT_HELD) sl->state = SLOT_DONE;
}

void stap_vrt_assembler_flush(stap_vrt_assembler *a, long long end)
{
    if (!a->started) return;
    if (end < 0) end = a->hi_cpi + 1;
    if (end > a->hi_cpi + 1) a->hi_cpi = end - 1;
    if (end > a->lo) advance(a, end);
}

/* the stream's pulse number of a packet's integer timestamp: the first packet's as it is,
 * later ones unwrapped mod 2^32 around the highest seen */
static long long unwrap_pulse(stap_vrt_assembler *a, uint32_t ts)
{
    if (!a->started) {
        const long long P = a->s.pulses;
        a->started = 1;
        a->hi_pulse = ts;
        a->start = a->lo = ((long long)ts + P - 1) / P;
        a->hi_cpi = a->start - 1;
        a->n.first_cpi = a->start;
        return ts;
    }
    const uint32_t d = ts - (uint32_t)a->hi_pulse;
    const long long p = a->hi_pulse + (d < 0x80000000u ? (long long)d : (long long)d - 4294967296LL);
    if (p > a->hi_pulse) a->hi_pulse = p;
    return p;
}

/* the mask of bits [lo, hi) of one word (0 <= lo < hi <= 64) */
static uint64_t word_mask(long long lo, long long hi)
{
    const uint64_t up = hi == 64 ? ~(uint64_t)0 : ((uint64_t)1 << hi) - 1;
    return up & ~(((uint64_t)1 << lo) - 1);
}

/* no bit of [at, at + n) set (n >= 1) */
static int bits_clear(const uint64_t *bits, long long at, long long n)
{
    const long long end = at + n;
    for (long long wd = at >> 6; wd <= (end - 1) >> 6; wd++) {
        const long long lo = wd == at >> 6 ? at & 63 : 0, hi = wd == (end - 1) >> 6 ? ((end - 1) & 63) + 1 : 64;
        if (bits[wd] & word_mask(lo, hi)) return 0;
    }
    return 1;
}

static void bits_set(uint64_t *bits, long long at, long long n)
{
    const long long end = at + n;
    for (long long wd = at >> 6; wd <= (end - 1) >> 6; wd++) {
        const long long lo = wd == at >> 6 ? at & 63 : 0, hi = wd == (end - 1) >> 6 ? ((end - 1) & 63) + 1 : 64;
        bits[wd] |= word_mask(lo, hi);
    }
}

/* n payload words into n (i, q) pairs: big-endian 16-bit halves (a loop the compiler
 * vectorizes) */
static void decode_run(const unsigned char *w, int16_t *iq, size_t n)
{
    for (size_t i = 0; i < 2 * n; i++) iq[i] = (int16_t)(uint16_t)((unsigned)w[2 * i] << 8 | w[2 * i + 1]);
}

/* a data packet's samples into its CPI's slot */
static void place(stap_vrt_assembler *a, const stap_vrt_packet *pk)
{
    const long long p = unwrap_pulse(a, pk->pulse);
    const long long k = p < 0 ? -1 : p / a->s.pulses;
    if (k < a->start) {
        a->n.skipped++;
        return;
    }
    if (k < a->lo) {
        a->n.late++;
        return;
    }
    if (k >= a->lo + a->nslots) advance(a, k - a->nslots + 1);
    if (k > a->hi_cpi) a->hi_cpi = k;
    vrt_slot *sl = slot_of(a, k);
    if (sl->cpi == k && sl->state != SLOT_FILLING) { /* complete already */
        a->n.duplicates++;
        return;
    }
    if (sl->state == SLOT_HELD || a->overrun_cpi[k % a->nslots] == k) {
        /* the caller still holds an older CPI here: this CPI is dropped whole */
        a->overrun_cpi[k % a->nslots] = k;
        a->n.overrun++;
        return;
    }
    if (sl->cpi != k) {
        sl->cpi = k;
        sl->state = SLOT_FILLING;
        sl->have = 0;
        memset(sl->bits, 0, a->bitwords * sizeof(uint64_t));
    }
    const long long first =
        ((long long)pk->stream_id * a->s.pulses + p % a->s.pulses) * a->s.range_gates + (long long)pk->gate;
    long long fresh = 0;
    const unsigned char *w = pk->payload;
    if (bits_clear(sl->bits, first, (long long)pk->samples)) { /* the usual case: all new */
        bits_set(sl->bits, first, (long long)pk->samples);
        decode_run(w, sl->iq + 2 * first, pk->samples);
        fresh = (long long)pk->samples;
    } else
        for (size_t i = 0; i < pk->samples; i++, w += 4) {
            const long long at = first + (long long)i;
            const uint64_t bit = (uint64_t)1 << (at & 63);
            if (sl->bits[at >> 6] & bit) continue;
            sl->bits[at >> 6] |= bit;
            vrt_get_iq(w, sl->iq + 2 * at);
            fresh++;
        }
    if (fresh < (long long)pk->samples) a->n.duplicates++;
    if (fresh) a->n.placed++;
    sl->have += fresh;
    if (sl->have == a->cpi_samples) {
        sl->state = SLOT_HELD;
        emit(a, STAP_VRT_CPI_COMPLETE, k, 1, STAP_VRT_LOST_NONE, sl->iq);
        if (k == a->lo) skip_complete(a);
    }
}

stap_vrt_kind stap_vrt_assembler_push(stap_vrt_assembler *a, const void *datagram, size_t len)
{
    stap_vrt_packet pk;
    const stap_vrt_kind kind = stap_vrt_parse(datagram, len, a->s.channels, a->s.range_gates, &pk);
    a->n.datagrams++;
    a->n.kinds[kind]++;
    if (stap_vrt_malformed(kind)) a->n.malformed++;
    else if (kind == STAP_VRT_CONTEXT) {
        if (pk.has_sample_rate) {
            a->n.has_sample_rate = 1;
            a->n.sample_rate_hz = pk.sample_rate_hz;
        }
        if (pk.has_rf) {
            a->n.has_rf = 1;
            a->n.rf_hz = pk.rf_hz;
        }
    } else if (kind == STAP_VRT_DATA)
        place(a, &pk);
    return kind;
}
