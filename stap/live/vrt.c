/* vrt.c: the VITA-49.0 codec of live input (include/rtstap/vrt.h, docs/live.md): the
 * parser, which classifies every datagram, and the packer. */
#include <math.h>
#include <string.h>

#include "vrt.h"
#include "vrt_internal.h"

const char *stap_vrt_kind_name(stap_vrt_kind k)
{
    static const char *const names[STAP_VRT_KINDS] = {
        "data", "context", "context-other", "short", "size", "type", "timestamp", "channel", "gates"};
    return (unsigned)k < STAP_VRT_KINDS ? names[k] : "unknown";
}

int stap_vrt_malformed(stap_vrt_kind k)
{
    return k >= STAP_VRT_SHORT && k < STAP_VRT_KINDS;
}

/* VITA-49's 64-bit two's complement fixed point of 20 fraction bits (frequencies, rates) */
static double fixed20(const unsigned char *p)
{
    const uint64_t u = (uint64_t)vrt_get32(p) << 32 | vrt_get32(p + 4);
    return (double)(int64_t)u / 1048576.0;
}

static void put_fixed20(unsigned char *p, double hz)
{
    const double v = hz * 1048576.0;
    const int64_t i = !(v == v) ? 0 : v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : llround(v);
    vrt_put32(p, (uint32_t)((uint64_t)i >> 32));
    vrt_put32(p + 4, (uint32_t)(uint64_t)i);
}

/* the words of the context fields of CIF0 bits 30..21 (bit 27: RF reference frequency,
 * bit 21: sample rate); those after bit 21 are never read */
static const unsigned char cif_words[32] = {
    [30] = 1, [29] = 2, [28] = 2, [27] = 2, [26] = 2, [25] = 2, [24] = 1, [23] = 1, [22] = 1, [21] = 2};

/* a context packet after its header words (at word w of n): the indicators, the two
 * fields it may carry */
static stap_vrt_kind parse_context(const unsigned char *b, unsigned w, unsigned n, stap_vrt_packet *pkt)
{
    if (w + 1 > n) return pkt->kind = STAP_VRT_SHORT;
    const uint32_t cif = vrt_get32(b + 4 * w);
    w++;
    /* VITA-49.2's further indicator words (CIF1, CIF2, CIF3 by bits 1..3, CIF7 by bit 7)
     * follow CIF0 before any field */
    w += ((cif >> 1) & 1) + ((cif >> 2) & 1) + ((cif >> 3) & 1) + ((cif >> 7) & 1);
    const int want_rf = (cif >> 27) & 1, want_sr = (cif >> 21) & 1;
    for (int bit = 30; bit >= 21; bit--) { /* the fields it declares up to the sample rate */
        if (!((cif >> bit) & 1)) continue;
        if (w + cif_words[bit] > n) return pkt->kind = STAP_VRT_SHORT;
        if (bit == 27) pkt->rf_hz = fixed20(b + 4 * w);
        if (bit == 21) pkt->sample_rate_hz = fixed20(b + 4 * w);
        w += cif_words[bit];
    }
    if (w > n) return pkt->kind = STAP_VRT_SHORT; /* the indicator words alone */
    pkt->has_rf = want_rf;
    pkt->has_sample_rate = want_sr;
    return pkt->kind = want_rf || want_sr ? STAP_VRT_CONTEXT : STAP_VRT_CONTEXT_OTHER;
}

stap_vrt_kind stap_vrt_parse(const void *datagram, size_t len, int channels, int range_gates,
                             stap_vrt_packet *pkt)
{
    const unsigned char *b = datagram;
    memset(pkt, 0, sizeof *pkt);
    if (len < 4) return pkt->kind = STAP_VRT_SHORT;
    const uint32_t h = vrt_get32(b);
    pkt->type = h >> 28;
    pkt->has_class = (h >> 27) & 1;
    pkt->tsi = (h >> 22) & 3;
    pkt->tsf = (h >> 20) & 3;
    pkt->count = (h >> 16) & 15;
    pkt->words = h & 0xffff;
    if ((size_t)pkt->words * 4 != len) return pkt->kind = STAP_VRT_SIZE;
    if (pkt->type != STAP_VRT_TYPE_DATA && pkt->type != STAP_VRT_TYPE_CONTEXT)
        return pkt->kind = STAP_VRT_TYPE;
    const unsigned n = pkt->words;
    unsigned w = 2 + 2u * (unsigned)pkt->has_class; /* header, stream ID, class ID */
    if (w > n) return pkt->kind = STAP_VRT_SHORT;
    pkt->stream_id = vrt_get32(b + 4);
    const unsigned wint = w, wfrac = w + (pkt->tsi != 0);
    w = wfrac + 2u * (pkt->tsf != 0);
    if (w > n) return pkt->kind = STAP_VRT_SHORT;
    if (pkt->tsi) pkt->pulse = vrt_get32(b + 4 * wint);
    if (pkt->tsf) pkt->gate = (uint64_t)vrt_get32(b + 4 * wfrac) << 32 | vrt_get32(b + 4 * wfrac + 4);
    if (pkt->type == STAP_VRT_TYPE_CONTEXT) return parse_context(b, w, n, pkt);
    pkt->has_trailer = (h >> 26) & 1;
    const unsigned end = n - (unsigned)pkt->has_trailer;
    if (w >= end) return pkt->kind = STAP_VRT_SHORT; /* (n >= w + 0: a trailer word counts) */
    pkt->payload = b + 4 * w;
    pkt->samples = end - w;
    if (pkt->tsi != 3 || pkt->tsf != 1) return pkt->kind = STAP_VRT_TIMESTAMP;
    if (channels > 0 && pkt->stream_id >= (uint32_t)channels) return pkt->kind = STAP_VRT_CHANNEL;
    if (range_gates > 0 && (pkt->gate >= (uint64_t)range_gates ||
                            pkt->samples > (uint64_t)range_gates - pkt->gate))
        return pkt->kind = STAP_VRT_GATES;
    return pkt->kind = STAP_VRT_DATA;
}

/* the header word: type, TSI, TSF, count, size */
static uint32_t header(unsigned type, unsigned tsi, unsigned tsf, unsigned count, unsigned words)
{
    return (uint32_t)type << 28 | tsi << 22 | tsf << 20 | (count & 15u) << 16 | (words & 0xffffu);
}

size_t stap_vrt_pack_data(void *out, uint32_t channel, uint32_t pulse, uint64_t gate,
                          const int16_t *iq, int n, unsigned count)
{
    if (n < 1 || n > STAP_VRT_MAX_GATES) return 0;
    unsigned char *b = out;
    const unsigned words = STAP_VRT_HEADER_WORDS + (unsigned)n;
    vrt_put32(b, header(STAP_VRT_TYPE_DATA, 3, 1, count, words));
    vrt_put32(b + 4, channel);
    vrt_put32(b + 8, pulse);
    vrt_put32(b + 12, (uint32_t)(gate >> 32));
    vrt_put32(b + 16, (uint32_t)gate);
    unsigned char *p = b + 4 * STAP_VRT_HEADER_WORDS;
    for (int k = 0; k < n; k++, p += 4)
        vrt_put32(p, (uint32_t)(uint16_t)iq[2 * k] << 16 | (uint16_t)iq[2 * k + 1]);
    return 4 * (size_t)words;
}

size_t stap_vrt_pack_context(void *out, uint32_t stream_id, const double *sample_rate_hz,
                             const double *rf_hz, unsigned count)
{
    unsigned char *b = out;
    uint32_t cif = 0;
    unsigned w = 3;
    if (rf_hz) {
        cif |= 1u << 27;
        put_fixed20(b + 4 * w, *rf_hz);
        w += 2;
    }
    if (sample_rate_hz) {
        cif |= 1u << 21;
        put_fixed20(b + 4 * w, *sample_rate_hz);
        w += 2;
    }
    vrt_put32(b, header(STAP_VRT_TYPE_CONTEXT, 0, 0, count, w));
    vrt_put32(b + 4, stream_id);
    vrt_put32(b + 8, cif);
    return 4 * (size_t)w;
}

int stap_vrt_shape_validate(const stap_vrt_shape *s, stap_error *err)
{
    if (!s) return stap_fail(err, STAP_EINVAL, "stap_vrt_shape: NULL");
    if (s->channels < 1 || s->pulses < 1 || s->range_gates < 1)
        return stap_fail(err, STAP_EINVAL,
                         "stap_vrt_shape: channels, pulses and range_gates must be >= 1 (got %d, %d, %d)",
                         s->channels, s->pulses, s->range_gates);
    const double n = (double)s->channels * s->pulses * s->range_gates;
    if (n >= 1099511627776.0)
        return stap_fail(err, STAP_EINVAL, "stap_vrt_shape: a CPI of %.0f samples (at most 2^40)", n);
    return STAP_OK;
}

long long stap_vrt_cpi_packets(const stap_vrt_shape *s, int gates)
{
    if (gates < 1) return 0;
    const long long runs = (s->range_gates + (long long)gates - 1) / gates;
    return (long long)s->pulses * s->channels * runs;
}

size_t stap_vrt_pack_cpi(void *out, const stap_vrt_shape *s, int gates, const int16_t *cube,
                         long long cpi, long long j, unsigned char *counts)
{
    const long long runs = (s->range_gates + (long long)gates - 1) / gates;
    const long long run = j % runs, pc = j / runs;
    const int c = (int)(pc % s->channels), p = (int)(pc / s->channels);
    const long long g0 = run * gates;
    const int n = (int)(s->range_gates - g0 < gates ? s->range_gates - g0 : gates);
    const uint32_t pulse = (uint32_t)((unsigned long long)cpi * (unsigned)s->pulses + (unsigned)p);
    const int16_t *iq = cube + 2 * (((size_t)c * s->pulses + p) * s->range_gates + (size_t)g0);
    const size_t bytes = stap_vrt_pack_data(out, (uint32_t)c, pulse, (uint64_t)g0, iq, n, counts[c]);
    counts[c] = (unsigned char)((counts[c] + 1) & 15);
    return bytes;
}
