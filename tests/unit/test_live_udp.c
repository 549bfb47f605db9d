/* test_live_udp: live input's receiver (stap_live_udp_*, include/rtstap/vrt.h) over
 * 127.0.0.1, fed by datagrams the test packs itself (stap_vrt_pack_cpi): whole CPIs
 * arrive bit for bit, in CPI order; packets reordered and duplicated within a CPI; a
 * dropped packet loses exactly that CPI (by a later CPI completing, or by the timeout for
 * the last one); malformed datagrams counted and nothing else; overload (1 slot never
 * released) loses the CPIs after it with the reason; stop from another thread wakes a
 * consumer waiting without end; port 0 and its address; bad arguments; the consumer's
 * tally (stap_live_tally: runs merged by reason, every run listed past its first 4 096,
 * the stream's end clips the count). Every wait is
 * bounded (and alarm ends a hang): a receiver that misses something fails the test. */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testutil.h"
#include "vrt.h"

enum { NCPI = 6, GATES = 5, MAXPK = 256 };

static const stap_vrt_shape S = {2, 4, 24};
static int16_t cubes[NCPI][2 * 2 * 4 * 24];

typedef struct dgram {
    unsigned char b[4 * (STAP_VRT_HEADER_WORDS + GATES)];
    size_t len;
} dgram;

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* the packets of stream CPI k (cube k % NCPI), in send order */
static int packets(long long k, dgram *out, unsigned char *counts)
{
    const long long n = stap_vrt_cpi_packets(&S, GATES);
    for (long long j = 0; j < n; j++)
        out[j].len = stap_vrt_pack_cpi(out[j].b, &S, GATES, cubes[k % NCPI], k, j, counts);
    return (int)n;
}

static int sender(int port)
{
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
        fprintf(stderr, "test_live_udp: no UDP socket\n");
        exit(1);
    }
    return fd;
}

static void send_one(int fd, const void *b, size_t len)
{
    if (send(fd, b, len, 0) != (ssize_t)len) fprintf(stderr, "test_live_udp: send failed\n");
    usleep(200); /* the socket buffer of a capped system is small: do not overrun it */
}

static stap_live_udp *make_rx(int slots, int timeout_ms, int *port)
{
    stap_live_udp *rx = NULL;
    stap_error err;
    const stap_live_udp_options o = {slots, 0, timeout_ms, 0, 0, 0};
    const int st = stap_live_udp_create(&rx, &S, "udp://127.0.0.1:0", &o, &err);
    CHECK(st == STAP_OK, "create: %s", err.msg);
    if (st) exit(1);
    stap_live_info info;
    stap_live_udp_info(rx, &info);
    *port = info.port;
    char want[64];
    snprintf(want, sizeof want, "udp://127.0.0.1:%d", info.port);
    CHECK(info.port > 0 && !strcmp(info.address, want), "bound address %s (port %d)", info.address, info.port);
    CHECK(info.rcvbuf_got > 0 && info.rcvbuf_asked == 64 << 20 &&
              info.rcvbuf_capped == (info.rcvbuf_got < info.rcvbuf_asked),
          "socket buffer: asked %lld got %lld capped %d", info.rcvbuf_asked, info.rcvbuf_got, info.rcvbuf_capped);
    return rx;
}

/* what the consumer saw of CPIs 0 .. n-1: 1 complete (equal to its cube), -reason lost */
typedef struct seen {
    int state[64];
    long long next; /* the next CPI expected: events come in CPI order */
    int bad_order, bad_data;
} seen;

/* pull events until CPIs 0 .. n-1 are decided (each wait at most 3 s); release each
 * complete CPI unless hold */
static void collect(stap_live_udp *rx, seen *w, long long n, int hold)
{
    stap_error err;
    const size_t bytes = sizeof cubes[0];
    while (w->next < n) {
        stap_live_event ev;
        const int st = stap_live_udp_next(rx, &ev, 3000, &err);
        CHECK(st == STAP_OK, "next: %s", err.msg);
        if (st || ev.kind == STAP_LIVE_NONE || ev.kind == STAP_LIVE_END) {
            CHECK(0, "waited 3 s for CPI %lld (event %d)", w->next, (int)ev.kind);
            return;
        }
        if (ev.cpi != w->next) w->bad_order++;
        for (long long k = ev.cpi; k < ev.cpi + ev.count && k < 64; k++)
            w->state[k] = ev.kind == STAP_LIVE_CPI ? 1 : -(int)ev.reason;
        if (ev.kind == STAP_LIVE_CPI) {
            if (memcmp(ev.iq, cubes[ev.cpi % NCPI], bytes)) w->bad_data++;
            CHECK(ev.arrival_ms > 0 && ev.arrival_ms <= stap_now_ms(), "arrival %g", ev.arrival_ms);
            if (!hold) stap_live_udp_release(rx, ev.cpi);
        }
        w->next = ev.cpi + ev.count;
    }
}

static void test_whole_reordered_dropped(void)
{
    int port;
    stap_live_udp *rx = make_rx(8, 1000, &port); /* a slot a CPI: the consumer reads after */
    const int fd = sender(port);
    dgram pk[MAXPK];
    unsigned char counts[2] = {0, 0};
    /* CPIs 0, 1 whole; 2 shuffled with duplicates; 3 with packet 7 dropped; 4 whole; 5 with
     * its last packet dropped (only the timeout can decide it) */
    int dups = 0;
    for (long long k = 0; k < NCPI; k++) {
        const int n = packets(k, pk, counts);
        int order[MAXPK];
        for (int j = 0; j < n; j++) order[j] = j;
        if (k == 2)
            for (int j = n - 1; j > 0; j--) {
                const int r = (int)(rnd() % (uint64_t)(j + 1)), t = order[j];
                order[j] = order[r], order[r] = t;
            }
        for (int j = 0; j < n; j++) {
            if ((k == 3 && order[j] == 7) || (k == 5 && order[j] == n - 1)) continue;
            send_one(fd, pk[order[j]].b, pk[order[j]].len);
            if (k == 2 && j % 5 == 0 && j < n - 1) { /* a duplicate, sent later in the CPI */
                send_one(fd, pk[order[j]].b, pk[order[j]].len);
                dups++;
            }
        }
    }
    seen w;
    memset(&w, 0, sizeof w);
    collect(rx, &w, NCPI, 0);
    CHECK(w.state[0] == 1 && w.state[1] == 1 && w.state[2] == 1 && w.state[4] == 1,
          "complete CPIs: %d %d %d %d", w.state[0], w.state[1], w.state[2], w.state[4]);
    CHECK(w.state[3] == -STAP_VRT_LOST_MISSING && w.state[5] == -STAP_VRT_LOST_MISSING,
          "CPIs 3 and 5 lost (missing a packet): %d %d", w.state[3], w.state[5]);
    CHECK(!w.bad_order && !w.bad_data, "out of order %d, wrong samples %d", w.bad_order, w.bad_data);
    stap_live_counts c;
    stap_live_udp_counts(rx, &c);
    const long long n = stap_vrt_cpi_packets(&S, GATES);
    CHECK(c.vrt.datagrams == (unsigned long long)(NCPI * n - 2 + dups) && c.vrt.duplicates == (unsigned long long)dups,
          "datagrams %llu (want %lld), duplicates %llu (want %d)", c.vrt.datagrams, NCPI * n - 2 + dups,
          c.vrt.duplicates, dups);
    CHECK(c.vrt.cpis_complete == 4 && c.vrt.cpis_lost == 2 && c.lost[STAP_VRT_LOST_MISSING] == 2 && c.timeouts >= 1,
          "complete %lld lost %lld missing %lld timeouts %lld", c.vrt.cpis_complete, c.vrt.cpis_lost,
          c.lost[STAP_VRT_LOST_MISSING], c.timeouts);
    CHECK(c.bytes > 0 && c.first_ms > 0 && c.last_ms >= c.first_ms && c.vrt.malformed == 0, "bytes %llu", c.bytes);
    /* a packet of CPI 5 (lost) now: late */
    send_one(fd, pk[0].b, pk[0].len);
    for (int t = 0; t < 300; t++) { /* (the receive thread's time: at most 3 s) */
        stap_live_udp_counts(rx, &c);
        if (c.vrt.late) break;
        usleep(10000);
    }
    CHECK(c.vrt.late == 1, "late packets: %llu", c.vrt.late);
    close(fd);
    stap_live_udp_destroy(rx);
}

static void test_malformed(void)
{
    int port;
    stap_live_udp *rx = make_rx(2, 1000, &port);
    const int fd = sender(port);
    dgram pk[MAXPK];
    unsigned char counts[2] = {0, 0};
    const int n = packets(0, pk, counts);
    unsigned char bad[64];
    send_one(fd, "ab", 2);                                /* short                         */
    memcpy(bad, pk[0].b, pk[0].len);
    bad[0] = 0x70;                                        /* type 0111                     */
    send_one(fd, bad, pk[0].len);
    memcpy(bad, pk[0].b, pk[0].len);
    bad[7] = 9;                                           /* channel 9 of 2                */
    send_one(fd, bad, pk[0].len);
    send_one(fd, pk[0].b, pk[0].len - 4);                 /* size word disagrees           */
    for (int j = 0; j < n; j++) send_one(fd, pk[j].b, pk[j].len);
    seen w;
    memset(&w, 0, sizeof w);
    collect(rx, &w, 1, 0);
    stap_live_counts c;
    stap_live_udp_counts(rx, &c);
    CHECK(w.state[0] == 1 && !w.bad_data, "the CPI among malformed datagrams: %d", w.state[0]);
    CHECK(c.vrt.malformed == 4 && c.vrt.kinds[STAP_VRT_SHORT] == 1 && c.vrt.kinds[STAP_VRT_TYPE] == 1 &&
              c.vrt.kinds[STAP_VRT_CHANNEL] == 1 && c.vrt.kinds[STAP_VRT_SIZE] == 1 && c.vrt.cpis_lost == 0,
          "malformed %llu (short %llu type %llu channel %llu size %llu), lost %lld", c.vrt.malformed,
          c.vrt.kinds[STAP_VRT_SHORT], c.vrt.kinds[STAP_VRT_TYPE], c.vrt.kinds[STAP_VRT_CHANNEL],
          c.vrt.kinds[STAP_VRT_SIZE], c.vrt.cpis_lost);
    close(fd);
    stap_live_udp_destroy(rx);
}

/* one slot, held: the CPIs after it are lost whole (overload), the receiver never waits */
static void test_overload(void)
{
    int port;
    stap_live_udp *rx = make_rx(1, 1000, &port);
    const int fd = sender(port);
    dgram pk[MAXPK];
    unsigned char counts[2] = {0, 0};
    for (long long k = 0; k < 4; k++) {
        const int n = packets(k, pk, counts);
        for (int j = 0; j < n; j++) send_one(fd, pk[j].b, pk[j].len);
    }
    seen w;
    memset(&w, 0, sizeof w);
    collect(rx, &w, 4, 1); /* CPI 0 held */
    CHECK(w.state[0] == 1 && w.state[1] == -STAP_VRT_LOST_OVERRUN && w.state[2] == -STAP_VRT_LOST_OVERRUN &&
              w.state[3] == -STAP_VRT_LOST_OVERRUN && !w.bad_order,
          "overload: %d %d %d %d", w.state[0], w.state[1], w.state[2], w.state[3]);
    stap_live_counts c;
    stap_live_udp_counts(rx, &c);
    CHECK(c.lost[STAP_VRT_LOST_OVERRUN] == 3 && c.vrt.overrun == (unsigned long long)(3 * stap_vrt_cpi_packets(&S, GATES)),
          "lost to overload %lld, overrun packets %llu", c.lost[STAP_VRT_LOST_OVERRUN], c.vrt.overrun);
    /* released: the next CPI comes whole */
    stap_live_udp_release(rx, 0);
    const int n = packets(4, pk, counts);
    for (int j = 0; j < n; j++) send_one(fd, pk[j].b, pk[j].len);
    collect(rx, &w, 5, 0);
    CHECK(w.state[4] == 1 && !w.bad_data, "after the release: %d", w.state[4]);
    close(fd);
    stap_live_udp_destroy(rx);
}

static void *wait_forever(void *arg)
{
    static stap_live_event ev;
    stap_error err;
    ev.kind = STAP_LIVE_NONE;
    if (stap_live_udp_next(arg, &ev, -1, &err)) ev.kind = STAP_LIVE_NONE;
    return &ev;
}

static void test_stop(void)
{
    int port;
    stap_live_udp *rx = make_rx(2, 1000, &port);
    pthread_t t;
    pthread_create(&t, NULL, wait_forever, rx);
    usleep(100000);
    const double t0 = stap_now_ms();
    stap_live_udp_stop(rx);
    void *r;
    pthread_join(t, &r);
    const stap_live_event *ev = r;
    CHECK(ev->kind == STAP_LIVE_END && stap_now_ms() - t0 < 2000, "stop: event %d after %.0f ms", (int)ev->kind,
          stap_now_ms() - t0);
    stap_live_event e2;
    stap_error err;
    CHECK(stap_live_udp_next(rx, &e2, 10, &err) == STAP_OK && e2.kind == STAP_LIVE_END, "END again");
    stap_live_udp_destroy(rx);
}

static void test_arguments(void)
{
    stap_live_udp *rx = (stap_live_udp *)&rx;
    stap_error err;
    const char *bad[] = {"tcp://127.0.0.1:5", "udp://127.0.0.1", "udp://127.0.0.1:70000", "udp://[::1:5",
                         "udp://127.0.0.1:5x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(stap_live_udp_create(&rx, &S, bad[i], NULL, &err) == STAP_EINVAL && !rx, "address %s", bad[i]);
        CHECK(!strstr(err.msg, "--"), "a library message names no flag: %s", err.msg);
    }
    const stap_live_udp_options o = {-1, 0, 0, 0, 0, 0};
    CHECK(stap_live_udp_create(&rx, &S, "udp://127.0.0.1:0", &o, &err) == STAP_EINVAL, "slots -1");
    const stap_vrt_shape z = {0, 1, 1};
    CHECK(stap_live_udp_create(&rx, &z, "udp://127.0.0.1:0", NULL, &err) == STAP_EINVAL, "channels 0");
    CHECK(stap_live_udp_create(&rx, &S, "udp://192.0.2.1:0", NULL, &err) == STAP_EIO, "an address not ours: %s",
          err.msg);
    /* the same port twice */
    int port;
    stap_live_udp *a = make_rx(2, 100, &port);
    char addr[64];
    snprintf(addr, sizeof addr, "udp://127.0.0.1:%d", port);
    CHECK(stap_live_udp_create(&rx, &S, addr, NULL, &err) == STAP_EIO && strstr(err.msg, "bind"),
          "a port in use: %s", err.msg);
    stap_live_udp_destroy(a);
    CHECK(!strcmp(stap_vrt_lost_reason_name(STAP_VRT_LOST_OVERRUN), "overload"), "reason names");
}

/* the tally: 10 000 runs of one lost CPI between complete ones (the list grows past its
 * first 4 096), adjacent runs of one reason merged, of two reasons not, the end clipped */
static void test_tally(void)
{
    stap_error err;
    stap_live_tally t;
    CHECK(stap_live_tally_init(&t, 0, &err) == STAP_EINVAL, "a stream of 0 CPIs refused");
    CHECK(stap_live_tally_init(&t, 20004, &err) == STAP_OK, "init: %s", err.msg);
    long long cpi = 100;
    for (int k = 0; k < 10000; k++) {
        const stap_live_event lost = {STAP_LIVE_LOST, cpi++, 1, STAP_VRT_LOST_MISSING, NULL, 0, NULL};
        const stap_live_event whole = {STAP_LIVE_CPI, cpi++, 1, 0, NULL, 0, NULL};
        CHECK(stap_live_tally_add(&t, &lost) == 0 && stap_live_tally_add(&t, &whole) == 1, "run %d", k);
    }
    const stap_live_event a = {STAP_LIVE_LOST, cpi, 1, STAP_VRT_LOST_MISSING, NULL, 0, NULL};
    const stap_live_event b = {STAP_LIVE_LOST, cpi + 1, 1, STAP_VRT_LOST_MISSING, NULL, 0, NULL};
    const stap_live_event c = {STAP_LIVE_LOST, cpi + 2, 5, STAP_VRT_LOST_OVERRUN, NULL, 0, NULL};
    stap_live_tally_add(&t, &a);
    stap_live_tally_add(&t, &b); /* merged with a */
    stap_live_tally_add(&t, &c); /* 2 of its 5 within the stream's 20 004 */
    CHECK(t.complete == 10000 && t.lost == 10004 && stap_live_tally_done(&t), "counts %lld complete, %lld lost",
          t.complete, t.lost);
    CHECK(t.nranges == 10002 && !t.ranges_truncated && t.first_cpi == 100, "%d runs listed (truncated %d)",
          t.nranges, t.ranges_truncated);
    int ok = 1;
    for (int k = 0; k < 10000; k++) ok &= t.ranges[k].cpi == 100 + 2 * k && t.ranges[k].count == 1;
    CHECK(ok, "every single lost CPI listed in order");
    CHECK(t.ranges[10000].cpi == cpi && t.ranges[10000].count == 2 &&
          t.ranges[10000].reason == STAP_VRT_LOST_MISSING, "adjacent runs of one reason merged");
    CHECK(t.ranges[10001].cpi == cpi + 2 && t.ranges[10001].count == 2 &&
          t.ranges[10001].reason == STAP_VRT_LOST_OVERRUN, "another reason its own run, clipped at the end");
    const stap_live_event late = {STAP_LIVE_CPI, cpi + 9, 1, 0, NULL, 0, NULL};
    CHECK(stap_live_tally_add(&t, &late) == 0 && t.complete == 10000, "nothing counted past the end");
    stap_live_tally_free(&t);
}

int main(void)
{
    alarm(120); /* a hang fails */
    for (size_t i = 0; i < sizeof cubes / sizeof cubes[0][0]; i++) (&cubes[0][0])[i] = (int16_t)(rnd() & 0xffff);
    test_whole_reordered_dropped();
    test_malformed();
    test_overload();
    test_stop();
    test_arguments();
    test_tally();
    if (tc_failures) {
        fprintf(stderr, "test_live_udp: %d failure(s)\n", tc_failures);
        return 1;
    }
    printf("test_live_udp: all checks passed\n");
    return 0;
}
