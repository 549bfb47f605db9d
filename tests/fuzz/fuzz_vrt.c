/* fuzz_vrt: live input's VITA-49 parser and CPI assembler (include/rtstap/vrt.h,
 * stap/live/). The input: 4 bytes choosing the stream (C 1..4, P 1..8, R 1..64 and 1..4
 * slots), then records: a byte b < 0x80 and the next byte give a datagram's length
 * ((b << 8) | next, cut at the input's end) and its bytes follow; b >= 0x80 is a command:
 * release every complete CPI held, flush every CPI seen, flush up to a CPI the next byte
 * chooses, or nothing. Every datagram is parsed alone and pushed; the events are drained
 * after each record.
 *
 * Checks beyond "no crash, no leak, no UB": a data packet's fields are in the stream's
 * bounds and its payload inside the datagram, and packing its fields again parses to the
 * same fields; a datagram of the wrong length is never data; the counters add up; no CPI
 * is reported twice, none before the stream's first; a complete CPI's samples are
 * readable to the last one. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "vrt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* what was reported: lost ranges come in order (each from the end of the one before), a
 * complete CPI is never in one of them and never complete twice (the last RECENT checked) */
enum { RECENT = 256 };
static long long lost_end, recent[RECENT];
static int nrecent;

static void check_packet(const uint8_t *d, size_t len, const stap_vrt_shape *s)
{
    stap_vrt_packet pk;
    const stap_vrt_kind k = stap_vrt_parse(d, len, s->channels, s->range_gates, &pk);
    if (k != pk.kind || (unsigned)k >= STAP_VRT_KINDS) fz_die("parse: kind %d, pkt says %d", k, pk.kind);
    if (!stap_vrt_malformed(k) && (size_t)pk.words * 4 != len) fz_die("accepted %zu bytes of %u words", len, pk.words);
    if (k == STAP_VRT_CONTEXT && !pk.has_rf && !pk.has_sample_rate) fz_die("context carrying nothing");
    if (k != STAP_VRT_DATA) return;
    if (pk.stream_id >= (uint32_t)s->channels || pk.gate >= (uint64_t)s->range_gates || pk.samples < 1 ||
        pk.gate + pk.samples > (uint64_t)s->range_gates)
        fz_die("data out of bounds: channel %u gate %llu + %zu", pk.stream_id, (unsigned long long)pk.gate,
               pk.samples);
    if (pk.payload < d || pk.payload + 4 * pk.samples > d + len) fz_die("payload outside the datagram");
    if (pk.tsi != 3 || pk.tsf != 1) fz_die("data with TSI %u TSF %u", pk.tsi, pk.tsf);
    /* its fields packed again: the same packet */
    int16_t iq[2 * 64];
    for (size_t i = 0; i < pk.samples; i++) {
        iq[2 * i] = (int16_t)(uint16_t)(pk.payload[4 * i] << 8 | pk.payload[4 * i + 1]);
        iq[2 * i + 1] = (int16_t)(uint16_t)(pk.payload[4 * i + 2] << 8 | pk.payload[4 * i + 3]);
    }
    uint8_t again[4 * (STAP_VRT_HEADER_WORDS + 64)];
    const size_t n = stap_vrt_pack_data(again, pk.stream_id, pk.pulse, pk.gate, iq, (int)pk.samples, pk.count);
    stap_vrt_packet p2;
    if (stap_vrt_parse(again, n, s->channels, s->range_gates, &p2) != STAP_VRT_DATA || p2.stream_id != pk.stream_id ||
        p2.pulse != pk.pulse || p2.gate != pk.gate || p2.samples != pk.samples || p2.count != pk.count ||
        memcmp(p2.payload, pk.payload, 4 * pk.samples))
        fz_die("a data packet packed again differs");
}

static void reported(const stap_vrt_event *ev, long long first)
{
    if (ev->count < 1 || ev->cpi < first || ev->cpi < lost_end)
        fz_die("CPIs %lld+%lld reported; the stream starts at %lld, CPIs before %lld were lost", ev->cpi,
               ev->count, first, lost_end);
    const int m = nrecent < RECENT ? nrecent : RECENT;
    for (int i = 0; i < m; i++)
        if (recent[i] >= ev->cpi && recent[i] < ev->cpi + ev->count) fz_die("CPI %lld reported twice", recent[i]);
    if (ev->kind == STAP_VRT_CPI_LOST) lost_end = ev->cpi + ev->count;
    else recent[nrecent++ % RECENT] = ev->cpi;
}

static long long drain(stap_vrt_assembler *a, const stap_vrt_shape *s, long long *held, int *nheld)
{
    stap_vrt_event ev;
    long long events = 0;
    const size_t samples = (size_t)s->channels * s->pulses * s->range_gates;
    while (stap_vrt_assembler_next(a, &ev)) {
        reported(&ev, stap_vrt_assembler_counts(a)->first_cpi);
        events += ev.count;
        if (ev.kind == STAP_VRT_CPI_COMPLETE) {
            if (ev.count != 1 || !ev.iq) fz_die("a complete event of %lld CPIs", ev.count);
            volatile long sum = 0; /* every sample readable */
            for (size_t i = 0; i < 2 * samples; i++) sum += ev.iq[i];
            (void)sum;
            if (*nheld < 8) held[(*nheld)++] = ev.cpi;
            else stap_vrt_assembler_release(a, ev.cpi);
        } else if (ev.kind != STAP_VRT_CPI_LOST || ev.iq)
            fz_die("event kind %d", ev.kind);
    }
    return events;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) return 0;
    const stap_vrt_shape s = {1 + data[0] % 4, 1 + data[1] % 8, 1 + data[2] % 64};
    const int slots = 1 + data[3] % 4;
    stap_vrt_assembler *a;
    stap_error err;
    if (stap_vrt_assembler_create(&a, &s, slots, &err)) fz_die("create: %s", err.msg);
    lost_end = -1;
    nrecent = 0;
    long long held[8], events = 0;
    int nheld = 0;
    size_t at = 4;
    while (at < size) {
        const unsigned b = data[at++];
        if (b >= 0x80) {
            const unsigned op = b & 3;
            if (op == 0)
                while (nheld) stap_vrt_assembler_release(a, held[--nheld]);
            else if (op == 1) stap_vrt_assembler_flush(a, -1);
            else if (op == 2 && at < size) {
                const long long first = stap_vrt_assembler_counts(a)->first_cpi;
                stap_vrt_assembler_flush(a, (first < 0 ? 0 : first) + data[at++] % 16);
            }
        } else {
            size_t len = at < size ? (size_t)b << 8 | data[at++] : 0;
            if (len > size - at) len = size - at;
            check_packet(data + at, len, &s);
            stap_vrt_assembler_push(a, data + at, len);
            at += len;
        }
        events += drain(a, &s, held, &nheld);
    }
    stap_vrt_assembler_flush(a, -1);
    events += drain(a, &s, held, &nheld);
    const stap_vrt_counts *n = stap_vrt_assembler_counts(a);
    unsigned long long kinds = 0, bad = 0;
    for (int k = 0; k < STAP_VRT_KINDS; k++) {
        kinds += n->kinds[k];
        if (stap_vrt_malformed((stap_vrt_kind)k)) bad += n->kinds[k];
    }
    if (kinds != n->datagrams || bad != n->malformed) fz_die("the counts by kind do not add up");
    if (n->placed + n->duplicates + n->late + n->skipped + n->overrun < n->kinds[STAP_VRT_DATA])
        fz_die("data packets neither placed nor counted");
    if (n->cpis_complete + n->cpis_lost != events) fz_die("%lld events, counted %lld + %lld", events,
                                                          n->cpis_complete, n->cpis_lost);
    stap_vrt_assembler_destroy(a);
    return 0;
}
