/* test_vrt: live input's VITA-49 codec and CPI assembler (include/rtstap/vrt.h,
 * docs/live.md). Pack -> parse -> assemble on random cubes with random packet sizes,
 * reordering, duplicates and dropped packets (a CPI with a packet missing is reported lost,
 * never zero-filled); every malformed class; context packets; a stream starting mid-CPI;
 * pulse numbers wrapping at 2^32; a gap of many CPIs; a buffer the caller still holds.
 * RTSTAP_SEED=N explores other random cases. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "vrt.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int rnd_int(int lo, int hi) /* lo..hi */
{
    return lo + (int)(rnd() % (uint64_t)(hi - lo + 1));
}

/* one datagram of a test stream */
typedef struct pkt {
    unsigned char b[4 * (STAP_VRT_HEADER_WORDS + 64)];
    size_t len;
    long long cpi;
    double key; /* arrival order */
    int copy;   /* a duplicate */
} pkt;

typedef struct stream {
    stap_vrt_shape s;
    int ncpi;
    int16_t *cubes; /* ncpi cubes of C x P x R (i, q) */
    pkt *p;
    int n, cap;
} stream;

static int16_t *cube_of(stream *st, long long k)
{
    return st->cubes + (size_t)k * 2 * st->s.channels * st->s.pulses * st->s.range_gates;
}

static pkt *add(stream *st)
{
    if (st->n == st->cap) {
        st->cap = st->cap ? 2 * st->cap : 256;
        st->p = realloc(st->p, (size_t)st->cap * sizeof *st->p);
        if (!st->p) exit(1);
    }
    memset(&st->p[st->n], 0, sizeof *st->p);
    return &st->p[st->n++];
}

/* random cubes, every (CPI, pulse, channel) in runs of 1..maxrun gates, in send order */
static void make_stream(stream *st, int ncpi, int maxrun, long long cpi0)
{
    const stap_vrt_shape *s = &st->s;
    const size_t samples = (size_t)s->channels * s->pulses * s->range_gates;
    st->ncpi = ncpi;
    st->cubes = tc_xmalloc((size_t)ncpi * samples * 2 * sizeof(int16_t));
    for (size_t i = 0; i < (size_t)ncpi * samples * 2; i++) st->cubes[i] = (int16_t)(rnd() & 0xffff);
    unsigned count[8] = {0};
    for (int k = 0; k < ncpi; k++)
        for (int p = 0; p < s->pulses; p++)
            for (int c = 0; c < s->channels; c++)
                for (int g = 0; g < s->range_gates;) {
                    int n = rnd_int(1, maxrun);
                    if (n > s->range_gates - g) n = s->range_gates - g;
                    pkt *q = add(st);
                    const int16_t *iq = cube_of(st, k) + 2 * (((size_t)c * s->pulses + p) * s->range_gates + g);
                    const uint32_t pulse = (uint32_t)((cpi0 + k) * s->pulses + p);
                    q->len = stap_vrt_pack_data(q->b, (uint32_t)c, pulse, (uint64_t)g, iq, n, count[c]++);
                    q->cpi = k;
                    q->key = st->n;
                    g += n;
                }
}

static int by_key(const void *a, const void *b)
{
    const double x = ((const pkt *)a)->key, y = ((const pkt *)b)->key;
    return (x > y) - (x < y);
}

/* What the assembler reported for each CPI: 0 nothing, 1 complete (equal to the cube), 2
 * complete but different, 3 lost; more than one report is 4. */
static void drain(stap_vrt_assembler *a, stream *st, long long cpi0, int *seen)
{
    stap_vrt_event ev;
    const size_t bytes = (size_t)st->s.channels * st->s.pulses * st->s.range_gates * 2 * sizeof(int16_t);
    while (stap_vrt_assembler_next(a, &ev))
        for (long long j = ev.cpi; j < ev.cpi + ev.count; j++) {
            const long long k = j - cpi0;
            if (k < 0 || k >= st->ncpi) {
                CHECK(0, "an event for CPI %lld, outside the stream", j);
                continue;
            }
            if (seen[k]) seen[k] = 4;
            else if (ev.kind == STAP_VRT_CPI_LOST) seen[k] = 3;
            else seen[k] = memcmp(ev.iq, cube_of(st, k), bytes) ? 2 : 1;
            if (ev.kind == STAP_VRT_CPI_COMPLETE) stap_vrt_assembler_release(a, j);
        }
}

/* random shapes; packets reordered by less than a CPI, some duplicated, some dropped */
static void test_roundtrip(int trial)
{
    stream st = {{rnd_int(1, 4), rnd_int(1, 6), rnd_int(1, 40)}, 0, NULL, NULL, 0, 0};
    const int ncpi = rnd_int(3, 7);
    make_stream(&st, ncpi, rnd_int(1, 64), 0);
    const int base = st.n;
    int per_cpi = base; /* the fewest packets of a CPI: a packet moves by less, so that it
                           never comes after the CPI two later (3 slots: none is late) */
    for (int k = 0, i = 0; k < ncpi; k++) {
        int m = 0;
        for (; i < base && st.p[i].cpi == k; i++) m++;
        if (m < per_cpi) per_cpi = m;
    }
    const int mode = trial % 4; /* 0 in order, 1 reordered, 2 + duplicates, 3 + drops */
    int *lost = calloc((size_t)ncpi, sizeof *lost), *seen = calloc((size_t)ncpi, sizeof *seen);
    int ndup = 0;
    for (int i = 1; i < base; i++) { /* the first packet stays first: the stream starts at CPI 0 */
        pkt *q = &st.p[i];
        if (mode >= 1) q->key = i + (double)(rnd() % (uint64_t)per_cpi) * 0.9;
        if (mode == 3 && rnd() % 10 == 0) {
            lost[q->cpi] = 1;
            q->len = 0; /* dropped */
        } else if (mode >= 2 && rnd() % 8 == 0) {
            pkt *d = add(&st);
            q = &st.p[i]; /* (add may move the array) */
            *d = *q;
            d->copy = 1;
            d->key = q->key + (double)(rnd() % (uint64_t)per_cpi) * 0.9;
            ndup++;
        }
    }
    qsort(st.p, (size_t)st.n, sizeof *st.p, by_key);
    stap_vrt_assembler *a;
    stap_error err;
    CHECK(stap_vrt_assembler_create(&a, &st.s, 3, &err) == STAP_OK, "create: %s", err.msg);
    for (int i = 0; i < st.n; i++) {
        if (!st.p[i].len) continue;
        CHECK(stap_vrt_assembler_push(a, st.p[i].b, st.p[i].len) == STAP_VRT_DATA, "a packet not data");
        drain(a, &st, 0, seen);
    }
    stap_vrt_assembler_flush(a, ncpi);
    drain(a, &st, 0, seen);
    const stap_vrt_counts *n = stap_vrt_assembler_counts(a);
    int nlost = 0;
    for (int k = 0; k < ncpi; k++) {
        nlost += lost[k];
        CHECK(seen[k] == (lost[k] ? 3 : 1), "trial %d (mode %d, C=%d P=%d R=%d): CPI %d reported %d, expected %s",
              trial, mode, st.s.channels, st.s.pulses, st.s.range_gates, k, seen[k],
              lost[k] ? "lost" : "complete");
    }
    CHECK(n->cpis_lost == nlost && n->cpis_complete == ncpi - nlost, "trial %d: counted %lld lost, %lld complete",
          trial, n->cpis_lost, n->cpis_complete);
    CHECK(n->duplicates + n->late == (unsigned long long)ndup, "trial %d: %llu duplicates + %llu late, %d sent",
          trial, n->duplicates, n->late, ndup);
    CHECK(n->malformed == 0 && n->skipped == 0 && n->overrun == 0 && n->first_cpi == 0,
          "trial %d: malformed %llu skipped %llu overrun %llu first %lld", trial, n->malformed, n->skipped,
          n->overrun, n->first_cpi);
    stap_vrt_assembler_destroy(a);
    free(st.cubes);
    free(st.p);
    free(lost);
    free(seen);
}

/* a hand-made data packet: header fields as given, a class ID and trailer when asked */
static size_t raw_data(unsigned char *b, unsigned type, int cls, int trailer, unsigned tsi, unsigned tsf,
                       uint32_t sid, uint32_t pulse, uint64_t gate, int n)
{
    unsigned w = 2 + 2 * cls + (tsi != 0) + 2 * (tsf != 0) + (unsigned)n + (unsigned)trailer;
    const uint32_t h = type << 28 | (unsigned)cls << 27 | (unsigned)trailer << 26 | tsi << 22 | tsf << 20 | w;
    uint32_t words[64] = {h, sid};
    unsigned k = 2;
    if (cls) {
        words[k++] = 0x00123456;
        words[k++] = 0x00010002;
    }
    if (tsi) words[k++] = pulse;
    if (tsf) {
        words[k++] = (uint32_t)(gate >> 32);
        words[k++] = (uint32_t)gate;
    }
    for (int i = 0; i < n; i++) words[k++] = (uint32_t)(i + 1) << 16 | (uint16_t)(-(i + 1));
    if (trailer) words[k++] = 0xdeadbeef;
    for (unsigned i = 0; i < w; i++) {
        b[4 * i] = (unsigned char)(words[i] >> 24);
        b[4 * i + 1] = (unsigned char)(words[i] >> 16);
        b[4 * i + 2] = (unsigned char)(words[i] >> 8);
        b[4 * i + 3] = (unsigned char)words[i];
    }
    return 4 * w;
}

static void test_malformed(void)
{
    const stap_vrt_shape s = {2, 2, 8};
    unsigned char b[512];
    stap_vrt_packet pk;
    size_t len = raw_data(b, 1, 0, 0, 3, 1, 1, 3, 2, 4);
    CHECK(stap_vrt_parse(b, len, 2, 8, &pk) == STAP_VRT_DATA && pk.stream_id == 1 && pk.pulse == 3 &&
              pk.gate == 2 && pk.samples == 4 && pk.words == 9 && pk.payload == b + 20,
          "a plain data packet: %s", stap_vrt_kind_name(pk.kind));
    len = raw_data(b, 1, 1, 1, 3, 1, 0, 7, 0, 3); /* class ID and trailer: skipped */
    CHECK(stap_vrt_parse(b, len, 2, 8, &pk) == STAP_VRT_DATA && pk.has_class && pk.has_trailer &&
              pk.samples == 3 && pk.payload == b + 28 && pk.pulse == 7,
          "class ID and trailer: %s, %zu samples", stap_vrt_kind_name(pk.kind), pk.samples);
    stap_vrt_assembler *a;
    stap_error err;
    CHECK(stap_vrt_assembler_create(&a, &s, 2, &err) == STAP_OK, "create: %s", err.msg);
    /* each case's bytes are built in turn into b and pushed; then a valid CPI still completes */
    static const struct {
        unsigned type;
        int cls, trailer;
        unsigned tsi, tsf;
        uint32_t sid;
        uint64_t gate;
        int n, lendelta;
        stap_vrt_kind want;
    } bad[] = {
        {1, 0, 0, 3, 1, 0, 0, 2, 4, STAP_VRT_SIZE},        /* 4 bytes more than the size word  */
        {1, 0, 0, 3, 1, 0, 0, 2, -4, STAP_VRT_SIZE},       /* 4 fewer                          */
        {1, 0, 0, 3, 1, 0, 0, 2, 1, STAP_VRT_SIZE},        /* not whole words                  */
        {0, 0, 0, 3, 1, 0, 0, 2, 0, STAP_VRT_TYPE},        /* IF data without stream ID        */
        {5, 0, 0, 3, 1, 0, 0, 2, 0, STAP_VRT_TYPE},        /* extension context                */
        {1, 0, 0, 3, 1, 0, 0, 0, 0, STAP_VRT_SHORT},       /* no samples                       */
        {1, 0, 1, 3, 1, 0, 0, 0, 0, STAP_VRT_SHORT},       /* a trailer and no samples         */
        {1, 0, 0, 1, 1, 0, 0, 2, 0, STAP_VRT_TIMESTAMP},   /* TSI UTC                          */
        {1, 0, 0, 3, 2, 0, 0, 2, 0, STAP_VRT_TIMESTAMP},   /* TSF real time                    */
        {1, 0, 0, 0, 0, 0, 0, 2, 0, STAP_VRT_TIMESTAMP},   /* no timestamps                    */
        {1, 0, 0, 3, 1, 2, 0, 2, 0, STAP_VRT_CHANNEL},     /* channel C                        */
        {1, 0, 0, 3, 1, 0x80000000u, 0, 2, 0, STAP_VRT_CHANNEL},
        {1, 0, 0, 3, 1, 0, 7, 2, 0, STAP_VRT_GATES},       /* gates 7, 8 of 8                  */
        {1, 0, 0, 3, 1, 0, 8, 1, 0, STAP_VRT_GATES},       /* gate 8                           */
        {1, 0, 0, 3, 1, 0, 1ull << 63, 1, 0, STAP_VRT_GATES},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        len = raw_data(b, bad[i].type, bad[i].cls, bad[i].trailer, bad[i].tsi, bad[i].tsf, bad[i].sid, 0,
                       bad[i].gate, bad[i].n);
        len = (size_t)((long long)len + bad[i].lendelta);
        const stap_vrt_kind k = stap_vrt_assembler_push(a, b, len);
        CHECK(k == bad[i].want && stap_vrt_malformed(k), "malformed case %zu: %s, expected %s", i,
              stap_vrt_kind_name(k), stap_vrt_kind_name(bad[i].want));
    }
    /* shorter than a word; a header that says more words than sent; a size word of 2 on a
     * data packet; a header of a class ID cut off */
    CHECK(stap_vrt_assembler_push(a, b, 3) == STAP_VRT_SHORT, "3 bytes");
    CHECK(stap_vrt_assembler_push(a, b, 0) == STAP_VRT_SHORT, "0 bytes");
    const unsigned char two[8] = {0x18, 0xd0, 0, 2, 0, 0, 0, 0}; /* data, C, TSI 3, TSF 1, 2 words */
    CHECK(stap_vrt_assembler_push(a, two, 8) == STAP_VRT_SHORT, "2 words with a class ID");
    const unsigned char one[4] = {0x40, 0, 0, 1}; /* context of one word: no stream ID */
    CHECK(stap_vrt_assembler_push(a, one, 4) == STAP_VRT_SHORT, "a context packet of one word");
    const stap_vrt_counts *n = stap_vrt_assembler_counts(a);
    const unsigned long long nbad = sizeof bad / sizeof *bad + 4;
    CHECK(n->malformed == nbad && n->datagrams == nbad && n->first_cpi == -1,
          "malformed counted %llu of %llu; first CPI %lld", n->malformed, nbad, n->first_cpi);
    CHECK(n->kinds[STAP_VRT_SIZE] == 3 && n->kinds[STAP_VRT_TYPE] == 2 && n->kinds[STAP_VRT_SHORT] == 6 &&
              n->kinds[STAP_VRT_TIMESTAMP] == 3 && n->kinds[STAP_VRT_CHANNEL] == 2 && n->kinds[STAP_VRT_GATES] == 3,
          "malformed kinds counted wrong");
    stap_vrt_event ev;
    CHECK(!stap_vrt_assembler_next(a, &ev), "an event from malformed packets");
    /* a CPI of valid packets after them: complete, with the values sent */
    int16_t cube[2 * 2 * 2 * 8];
    for (int i = 0; i < 64; i++) cube[i] = (int16_t)(i * 1001 - 30000);
    unsigned char counts[2] = {0, 0};
    const long long np = stap_vrt_cpi_packets(&s, 5);
    CHECK(np == 2 * 2 * 2, "packets of a CPI: %lld", np);
    for (long long j = 0; j < np; j++) {
        len = stap_vrt_pack_cpi(b, &s, 5, cube, 0, j, counts);
        CHECK(stap_vrt_assembler_push(a, b, len) == STAP_VRT_DATA, "packet %lld of the CPI", j);
    }
    CHECK(stap_vrt_assembler_next(a, &ev) && ev.kind == STAP_VRT_CPI_COMPLETE && ev.cpi == 0 &&
              !memcmp(ev.iq, cube, sizeof cube),
          "the CPI after the malformed packets");
    CHECK(counts[0] == 4 && counts[1] == 4, "packet counts %u %u", counts[0], counts[1]);
    stap_vrt_assembler_destroy(a);
}

static void test_context(void)
{
    unsigned char b[64];
    stap_vrt_packet pk;
    const double sr = 1e6, rf = 450e6 + 0.5;
    size_t len = stap_vrt_pack_context(b, 3, &sr, &rf, 5);
    CHECK(len == 28 && stap_vrt_parse(b, len, 2, 8, &pk) == STAP_VRT_CONTEXT && pk.has_sample_rate &&
              pk.has_rf && pk.sample_rate_hz == sr && pk.rf_hz == rf && pk.count == 5 && pk.stream_id == 3,
          "context: %s %g %g", stap_vrt_kind_name(pk.kind), pk.sample_rate_hz, pk.rf_hz);
    CHECK(stap_vrt_parse(b, len - 4, 2, 8, &pk) == STAP_VRT_SIZE, "context shorter than its size word");
    b[3] = (unsigned char)(len / 4 - 1); /* the size word agrees, the sample rate is cut */
    CHECK(stap_vrt_parse(b, len - 4, 2, 8, &pk) == STAP_VRT_SHORT, "context with its sample rate cut: %s",
          stap_vrt_kind_name(pk.kind));
    len = stap_vrt_pack_context(b, 0, NULL, &rf, 0);
    CHECK(len == 20 && stap_vrt_parse(b, len, 2, 8, &pk) == STAP_VRT_CONTEXT && !pk.has_sample_rate &&
              pk.rf_hz == rf, "context with RF only");
    len = stap_vrt_pack_context(b, 0, NULL, NULL, 0);
    CHECK(len == 12 && stap_vrt_parse(b, len, 2, 8, &pk) == STAP_VRT_CONTEXT_OTHER, "empty context: %s",
          stap_vrt_kind_name(pk.kind));
    /* other fields before and after the two: bandwidth (29), gain (23), temperature (18) */
    const uint32_t words[] = {0x40000000u | 12, 9, (1u << 29) | (1u << 27) | (1u << 23) | (1u << 21) | (1u << 18),
                              0, 1, 0, 0x1c2u << 20, 7, 0, 5u << 20, 0x1234, 0xffffffff, 0};
    for (int i = 0; i < 12; i++)
        for (int k = 0; k < 4; k++) b[4 * i + k] = (unsigned char)(words[i] >> (24 - 8 * k));
    CHECK(stap_vrt_parse(b, 48, 2, 8, &pk) == STAP_VRT_CONTEXT && pk.rf_hz == 450.0 &&
              pk.sample_rate_hz == 5.0,
          "context among other fields: %s rf %g sr %g", stap_vrt_kind_name(pk.kind), pk.rf_hz, pk.sample_rate_hz);
    const unsigned char gain_only[16] = {0x40, 0, 0, 4, 0, 0, 0, 1, 0x00, 0x80, 0, 0, 0, 0, 0, 9}; /* bit 23 */
    CHECK(stap_vrt_parse(gain_only, 16, 2, 8, &pk) == STAP_VRT_CONTEXT_OTHER, "gain only: %s",
          stap_vrt_kind_name(pk.kind));
    unsigned char gain_cut[12];
    memcpy(gain_cut, gain_only, 12);
    gain_cut[3] = 3; /* the gain field declared, not sent */
    CHECK(stap_vrt_parse(gain_cut, 12, 2, 8, &pk) == STAP_VRT_SHORT, "gain cut: %s", stap_vrt_kind_name(pk.kind));
    stap_vrt_assembler *a;
    stap_error err;
    const stap_vrt_shape s = {1, 1, 1};
    CHECK(stap_vrt_assembler_create(&a, &s, 1, &err) == STAP_OK, "create");
    len = stap_vrt_pack_context(b, 0, &sr, NULL, 0);
    stap_vrt_assembler_push(a, b, len);
    stap_vrt_assembler_push(a, gain_only, 16);
    const stap_vrt_counts *n = stap_vrt_assembler_counts(a);
    CHECK(n->kinds[STAP_VRT_CONTEXT] == 1 && n->kinds[STAP_VRT_CONTEXT_OTHER] == 1 && n->malformed == 0 &&
              n->has_sample_rate && n->sample_rate_hz == sr && !n->has_rf && n->first_cpi == -1,
          "context counts");
    stap_vrt_assembler_destroy(a);
}

/* push a stream's packets in order from packet `from`; drain into seen */
static void push_all(stap_vrt_assembler *a, stream *st, int from, long long cpi0, int *seen)
{
    for (int i = from; i < st->n; i++) {
        stap_vrt_assembler_push(a, st->p[i].b, st->p[i].len);
        drain(a, st, cpi0, seen);
    }
}

/* a listener started mid-CPI begins at the next CPI; at a CPI's first pulse, at that CPI */
static void test_midstream(void)
{
    stream st = {{3, 4, 10}, 0, NULL, NULL, 0, 0};
    make_stream(&st, 4, 4, 0);
    int first = 0; /* the first packet of pulse 2 of CPI 0 */
    while (first < st.n && !(st.p[first].b[11] == 2)) first++;
    stap_vrt_assembler *a;
    stap_error err;
    int seen[4] = {0};
    CHECK(stap_vrt_assembler_create(&a, &st.s, 2, &err) == STAP_OK, "create");
    push_all(a, &st, first, 0, seen);
    stap_vrt_assembler_flush(a, -1);
    drain(a, &st, 0, seen);
    const stap_vrt_counts *n = stap_vrt_assembler_counts(a);
    CHECK(seen[0] == 0 && seen[1] == 1 && seen[2] == 1 && seen[3] == 1, "mid-CPI start: %d %d %d %d", seen[0],
          seen[1], seen[2], seen[3]);
    int cpi0_left = 0;
    for (int i = first; i < st.n; i++) cpi0_left += st.p[i].cpi == 0;
    CHECK(n->first_cpi == 1 && n->skipped == (unsigned long long)cpi0_left && n->cpis_lost == 0,
          "mid-CPI start: first %lld, skipped %llu", n->first_cpi, n->skipped);
    stap_vrt_assembler_destroy(a);
    /* starting at CPI 2's first packet */
    int at = 0;
    while (at < st.n && st.p[at].cpi != 2) at++;
    memset(seen, 0, sizeof seen);
    CHECK(stap_vrt_assembler_create(&a, &st.s, 2, &err) == STAP_OK, "create");
    push_all(a, &st, at, 0, seen);
    n = stap_vrt_assembler_counts(a);
    CHECK(n->first_cpi == 2 && seen[1] == 0 && seen[2] == 1 && seen[3] == 1 && n->skipped == 0,
          "start at a CPI boundary: first %lld", n->first_cpi);
    stap_vrt_assembler_destroy(a);
    free(st.cubes);
    free(st.p);
}

/* pulse numbers wrap at 2^32; a jump of 100 CPIs; a buffer still held (overrun) */
static void test_wrap_gap_overrun(void)
{
    stream st = {{2, 4, 6}, 0, NULL, NULL, 0, 0};
    const long long cpi0 = (1ll << 30) - 2; /* pulses 2^32 - 8 .. 2^32 + 7 */
    make_stream(&st, 4, 6, cpi0);
    stap_vrt_assembler *a;
    stap_error err;
    int seen[4] = {0};
    CHECK(stap_vrt_assembler_create(&a, &st.s, 2, &err) == STAP_OK, "create");
    push_all(a, &st, 0, cpi0, seen);
    const stap_vrt_counts *n = stap_vrt_assembler_counts(a);
    CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1 && seen[3] == 1 && n->first_cpi == cpi0,
          "across the wrap: %d %d %d %d, first %lld", seen[0], seen[1], seen[2], seen[3], n->first_cpi);
    stap_vrt_assembler_destroy(a);
    free(st.cubes);
    free(st.p);

    /* CPI 0 in part, then all of CPI 100: 0..99 lost (99 of them never seen), 100 complete */
    stream g = {{1, 2, 3}, 0, NULL, NULL, 0, 0};
    make_stream(&g, 1, 3, 0);
    const int half = g.n / 2;
    stream h = {{1, 2, 3}, 0, NULL, NULL, 0, 0};
    make_stream(&h, 1, 3, 100);
    CHECK(stap_vrt_assembler_create(&a, &g.s, 3, &err) == STAP_OK, "create");
    for (int i = 0; i < half; i++) stap_vrt_assembler_push(a, g.p[i].b, g.p[i].len);
    for (int i = 0; i < h.n; i++) stap_vrt_assembler_push(a, h.p[i].b, h.p[i].len);
    stap_vrt_assembler_flush(a, -1); /* 98 and 99, never seen, before 100 */
    stap_vrt_event ev;
    long long lost = 0, complete = -1, next = 0;
    while (stap_vrt_assembler_next(a, &ev)) {
        if (ev.kind == STAP_VRT_CPI_LOST) {
            CHECK(ev.cpi == next, "lost events out of order: %lld after %lld", ev.cpi, next);
            CHECK(ev.reason == (ev.cpi == 0 ? STAP_VRT_LOST_MISSING : STAP_VRT_LOST_UNSEEN),
                  "lost CPI %lld: reason %s", ev.cpi, stap_vrt_lost_reason_name(ev.reason));
            next = ev.cpi + ev.count;
            lost += ev.count;
        } else complete = ev.cpi;
    }
    CHECK(lost == 100 && complete == 100 && stap_vrt_assembler_counts(a)->cpis_lost == 100,
          "a gap of 100 CPIs: %lld lost, complete %lld", lost, complete);
    for (int i = 0; i < half; i++) stap_vrt_assembler_push(a, g.p[i].b, g.p[i].len);
    CHECK(stap_vrt_assembler_counts(a)->late == (unsigned long long)half, "late packets of a lost CPI");
    stap_vrt_assembler_destroy(a);

    /* two slots held by the caller: a third CPI's packets overrun; that CPI is lost even
     * when its last packets come after the release */
    stream o = {{1, 1, 2}, 0, NULL, NULL, 0, 0};
    make_stream(&o, 3, 1, 0); /* packets of one gate: 2 a CPI */
    CHECK(stap_vrt_assembler_create(&a, &o.s, 2, &err) == STAP_OK, "create");
    for (int i = 0; i < 5; i++) stap_vrt_assembler_push(a, o.p[i].b, o.p[i].len); /* CPI 2's first */
    CHECK(stap_vrt_assembler_counts(a)->overrun == 1, "overrun: %llu", stap_vrt_assembler_counts(a)->overrun);
    stap_vrt_assembler_release(a, 0);
    stap_vrt_assembler_release(a, 1);
    stap_vrt_assembler_push(a, o.p[5].b, o.p[5].len);
    stap_vrt_assembler_flush(a, 3);
    int kinds[3] = {0}, why = -1;
    while (stap_vrt_assembler_next(a, &ev))
        for (long long j = ev.cpi; j < ev.cpi + ev.count && j < 3; j++) kinds[j] = (int)ev.kind, why = (int)ev.reason;
    CHECK(kinds[0] == STAP_VRT_CPI_COMPLETE && kinds[1] == STAP_VRT_CPI_COMPLETE && kinds[2] == STAP_VRT_CPI_LOST,
          "overrun: CPIs reported %d %d %d", kinds[0], kinds[1], kinds[2]);
    CHECK(why == STAP_VRT_LOST_OVERRUN && stap_vrt_assembler_counts(a)->overrun == 2,
          "overrun: the reason %d, its later packet dropped too (%llu)", why, stap_vrt_assembler_counts(a)->overrun);
    stap_vrt_assembler_destroy(a);
    free(g.cubes), free(g.p), free(h.cubes), free(h.p), free(o.cubes), free(o.p);
}

static void test_arguments(void)
{
    stap_vrt_assembler *a = (stap_vrt_assembler *)&a;
    stap_error err;
    const stap_vrt_shape bad = {0, 4, 4}, big = {1 << 20, 1 << 20, 2}, ok = {1, 1, 1};
    CHECK(stap_vrt_assembler_create(&a, &bad, 2, &err) == STAP_EINVAL && !a, "channels 0");
    CHECK(stap_vrt_assembler_create(&a, &big, 2, &err) == STAP_EINVAL, "2^41 samples");
    CHECK(stap_vrt_assembler_create(&a, &ok, 0, &err) == STAP_EINVAL, "0 slots");
    unsigned char b[16];
    int16_t iq[2] = {0, 0};
    CHECK(stap_vrt_pack_data(b, 0, 0, 0, iq, 0, 0) == 0, "a packet of no samples");
    CHECK(!strcmp(stap_vrt_kind_name(STAP_VRT_GATES), "gates") && !strcmp(stap_vrt_kind_name(STAP_VRT_KINDS), "unknown"),
          "kind names");
}

int main(void)
{
    const char *seed = getenv("RTSTAP_SEED");
    if (seed) rng_state = strtoull(seed, NULL, 10);
    for (int t = 0; t < 200; t++) test_roundtrip(t);
    test_malformed();
    test_context();
    test_midstream();
    test_wrap_gap_overrun();
    test_arguments();
    if (tc_failures) {
        fprintf(stderr, "test_vrt: %d failure(s)\n", tc_failures);
        return 1;
    }
    printf("test_vrt: all checks passed\n");
    return 0;
}
