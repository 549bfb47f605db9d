/* test_live_raw: live input's receiver on a caller's transport (stap_live_udp_create_on) in
 * raw mode (stap_live_udp_options.raw_item_bytes): the messages' bytes framed into CPIs by
 * count whatever the message sizes (a message ending mid-item, one spanning several CPIs),
 * each CPI bit for bit and in order; overload (a buffer never released) loses the CPIs that
 * find it held, whole, with reason overload, and the next after the release is complete;
 * a message longer than datagram_bytes ends the receiver with an error (its framing lost);
 * VITA-49 mode on the same transport. The transport: an AF_UNIX datagram socketpair, its
 * wait a poll on it and the stop eventfd. Every wait is bounded (alarm ends a hang). */
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testutil.h"
#include "vrt.h"

static const stap_vrt_shape S = {2, 3, 5}; /* 30 items a CPI */
enum { ITEM = 4, CPI_BYTES = 2 * 3 * 5 * ITEM, NCPI = 6 };

static int pair[2]; /* [0]: the test sends; [1]: the transport reads */

static int t_wait(void *user, int stop_fd, int wait_ms)
{
    struct pollfd p[2] = {{pair[1], POLLIN, 0}, {stop_fd, POLLIN, 0}};
    const int r = poll(p, 2, wait_ms);
    return r < 0 ? -1 : r > 0 && (p[0].revents & POLLIN);
}

static int t_read(void *user, unsigned char *const *bufs, size_t cap, size_t *lens, int *truncated, int max)
{
    int m = 0;
    while (m < max) {
        const ssize_t n = recv(pair[1], bufs[m], cap, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0) break;
        truncated[m] = (size_t)n > cap;
        lens[m] = truncated[m] ? cap : (size_t)n;
        m++;
    }
    return m;
}

static stap_live_udp *make(int slots, int raw, int datagram_bytes)
{
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, pair)) {
        fprintf(stderr, "test_live_raw: no socketpair\n");
        exit(1);
    }
    const int big = 1 << 20;
    setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    setsockopt(pair[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    const stap_live_transport t = {NULL, "test://pair", t_wait, t_read};
    const stap_live_udp_options o = {.slots = slots, .raw_item_bytes = raw, .datagram_bytes = datagram_bytes};
    stap_live_udp *rx = NULL;
    stap_error err;
    const int st = stap_live_udp_create_on(&rx, &S, &t, &o, &err);
    CHECK(st == STAP_OK, "create_on: %s", st ? err.msg : "");
    return rx;
}

static void done(stap_live_udp *rx)
{
    stap_live_udp_destroy(rx);
    close(pair[0]);
    close(pair[1]);
}

static unsigned char stream[NCPI * CPI_BYTES];

/* the stream's bytes from `from` to `to` in messages of `chunk` bytes */
static void send_bytes(size_t from, size_t to, size_t chunk)
{
    for (size_t k = from; k < to; k += chunk) {
        const size_t n = to - k < chunk ? to - k : chunk;
        if (send(pair[0], stream + k, n, 0) != (ssize_t)n) fprintf(stderr, "test_live_raw: send failed\n");
    }
}

static stap_live_event next(stap_live_udp *rx)
{
    stap_live_event ev;
    stap_error err;
    const int st = stap_live_udp_next(rx, &ev, 5000, &err);
    CHECK(st == STAP_OK, "next: %s", st ? err.msg : "");
    return ev;
}

/* messages of 7 bytes (items cut across messages) and of 2.5 CPIs: every CPI whole, in order */
static void test_framing(size_t chunk)
{
    stap_live_udp *rx = make(NCPI, ITEM, 0); /* (a burst: a buffer for each CPI) */
    if (!rx) return;
    send_bytes(0, sizeof stream, chunk);
    for (long long k = 0; k < NCPI; k++) {
        const stap_live_event ev = next(rx);
        CHECK(ev.kind == STAP_LIVE_CPI && ev.cpi == k && ev.iq == NULL && ev.data &&
                  !memcmp(ev.data, stream + k * CPI_BYTES, CPI_BYTES),
              "chunk %zu: CPI %lld whole (kind %d, cpi %lld)", chunk, k, ev.kind, ev.cpi);
        if (ev.kind == STAP_LIVE_CPI) stap_live_udp_release(rx, ev.cpi);
    }
    stap_live_counts n;
    stap_live_udp_counts(rx, &n);
    CHECK(n.vrt.datagrams == (sizeof stream + chunk - 1) / chunk && n.bytes == sizeof stream &&
              n.vrt.cpis_complete == NCPI && n.vrt.cpis_lost == 0 && n.vrt.malformed == 0,
          "chunk %zu: counts (%llu datagrams, %llu bytes)", chunk, n.vrt.datagrams, n.bytes);
    done(rx);
}

/* 2 slots, CPI 0 held: CPI 2 (its slot) is lost whole, overload; CPIs 1 and 3 complete; after
 * the release CPI 4 (slot 0 again) is complete */
static void test_overload(void)
{
    stap_live_udp *rx = make(2, ITEM, 0);
    if (!rx) return;
    send_bytes(0, CPI_BYTES, 11);
    stap_live_event e0 = next(rx);
    CHECK(e0.kind == STAP_LIVE_CPI && e0.cpi == 0, "overload: CPI 0 complete");
    send_bytes(CPI_BYTES, 2 * CPI_BYTES, 11);
    stap_live_event e1 = next(rx);
    CHECK(e1.kind == STAP_LIVE_CPI && e1.cpi == 1, "overload: CPI 1 complete");
    stap_live_udp_release(rx, 1);
    send_bytes(2 * CPI_BYTES, 4 * CPI_BYTES, 11);
    stap_live_event e2 = next(rx), e3 = next(rx);
    CHECK(e2.kind == STAP_LIVE_LOST && e2.cpi == 2 && e2.count == 1 && e2.reason == STAP_VRT_LOST_OVERRUN,
          "overload: CPI 2 lost, overload (kind %d cpi %lld reason %d)", e2.kind, e2.cpi, e2.reason);
    CHECK(e3.kind == STAP_LIVE_CPI && e3.cpi == 3 && !memcmp(e3.data, stream + 3 * CPI_BYTES, CPI_BYTES),
          "overload: CPI 3 complete, its own bytes");
    stap_live_udp_release(rx, 0);
    stap_live_udp_release(rx, 3);
    send_bytes(4 * CPI_BYTES, 5 * CPI_BYTES, 11);
    stap_live_event e4 = next(rx);
    CHECK(e4.kind == STAP_LIVE_CPI && e4.cpi == 4 && !memcmp(e4.data, stream + 4 * CPI_BYTES, CPI_BYTES),
          "overload: after the release CPI 4 complete");
    stap_live_counts n;
    stap_live_udp_counts(rx, &n);
    CHECK(n.lost[STAP_VRT_LOST_OVERRUN] == 1 && n.vrt.cpis_lost == 1 && n.vrt.cpis_complete == 4,
          "overload: counted");
    done(rx);
}

/* a message longer than datagram_bytes: the receiver fails, naming it */
static void test_too_long(void)
{
    stap_live_udp *rx = make(2, ITEM, 65536);
    if (!rx) return;
    static unsigned char big[65536 + 40];
    if (send(pair[0], big, sizeof big, 0) != (ssize_t)sizeof big) fprintf(stderr, "test_live_raw: send failed\n");
    stap_live_event ev = {0};
    stap_error err;
    int st = STAP_OK;
    for (int i = 0; i < 100 && st == STAP_OK && ev.kind != STAP_LIVE_END; i++) st = stap_live_udp_next(rx, &ev, 5000, &err);
    CHECK(st == STAP_EIO && strstr(err.msg, "longer than 65536 bytes"), "too long: fails (%d: %s)", st,
          st ? err.msg : "");
    done(rx);
}

/* VITA-49 mode on the same transport: whole CPIs as over UDP */
static void test_vrt(void)
{
    stap_live_udp *rx = make(4, 0, 0);
    if (!rx) return;
    unsigned char counts[2] = {0, 0}, b[4 * (STAP_VRT_HEADER_WORDS + 5)];
    for (long long k = 0; k < 2; k++)
        for (long long j = 0; j < stap_vrt_cpi_packets(&S, 5); j++) {
            const size_t len = stap_vrt_pack_cpi(b, &S, 5, (const int16_t *)(stream + k * CPI_BYTES), k, j, counts);
            if (send(pair[0], b, len, 0) != (ssize_t)len) fprintf(stderr, "test_live_raw: send failed\n");
        }
    for (long long k = 0; k < 2; k++) {
        const stap_live_event ev = next(rx);
        CHECK(ev.kind == STAP_LIVE_CPI && ev.cpi == k && ev.data == ev.iq && ev.iq &&
                  !memcmp(ev.iq, stream + k * CPI_BYTES, CPI_BYTES),
              "vrt over a transport: CPI %lld whole", k);
        if (ev.kind == STAP_LIVE_CPI) stap_live_udp_release(rx, ev.cpi);
    }
    done(rx);
}

int main(void)
{
    alarm(120); /* a hang fails */
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sizeof stream; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        stream[i] = (unsigned char)r;
    }
    test_framing(7);
    test_framing(5 * CPI_BYTES / 2);
    test_overload();
    test_too_long();
    test_vrt();
    if (tc_failures) {
        fprintf(stderr, "test_live_raw: %d failure(s)\n", tc_failures);
        return 1;
    }
    printf("test_live_raw: all checks passed\n");
    return 0;
}
