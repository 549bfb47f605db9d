/* live_udp.c: live input's receiver (include/rtstap/vrt.h, docs/live.md) — a UDP socket
 * read by a thread of its own into the CPI assembler (vrt_assemble.c), CPIs given out in
 * CPI order to one consumer.
 *
 * Why our own code: Debian has no VITA-49 library (issue 45); the codec is vrt.c, the
 * placement vrt_assemble.c, and this file only moves datagrams from the socket to them.
 *
 * The thread: poll on the socket and an eventfd (stop), then recvmmsg batches without
 * waiting (MSG_DONTWAIT) until the socket is empty. Each batch is pushed into the
 * assembler under the mutex, one datagram at a time; after each, the assembler's events
 * move to the delivery queue in CPI order: a CPI completing first declares every earlier
 * CPI still incomplete lost (stap_vrt_assembler_flush), and those go before it. So the
 * decided CPIs are always a prefix of the stream and the queue is in CPI order. When no
 * packet has added a sample for timeout_ms, every CPI still open is lost (a sender that
 * stopped mid-CPI). The consumer waits on a condition variable; the thread never waits on
 * the consumer (a CPI whose buffer is still held is lost whole by the assembler: overrun).
 *
 * The queue holds at most `slots` complete CPIs (each holds a buffer) and the lost ranges
 * between them; when it fills up (a consumer that does not call next), a lost range is
 * merged into the lost range before it whatever its reason (the counts by reason stay
 * exact). */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "vrt.h"

enum {
    DEFAULT_SLOTS = 8,
    DEFAULT_RCVBUF = 64 << 20,
    DEFAULT_TIMEOUT_MS = 1000,
    DEFAULT_BATCH = 64,
    MAX_BATCH = 1024,
    DGRAM_BYTES = 65536 /* more than UDP's largest payload (65 507 bytes) */
};

struct stap_live_udp {
    stap_vrt_shape s;
    stap_live_udp_options o;
    stap_live_info info;
    int fd, evfd;
    pthread_t thread;
    int thread_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    stap_vrt_assembler *a; /* under mu */
    /* the delivery queue (under mu): a ring of qcap events, qlen from qhead */
    stap_live_event *q;
    int qcap, qhead, qlen;
    int ended, failed; /* under mu: the thread ended after a stop; it failed (ferr) */
    stap_error ferr;
    atomic_int stop_flag;
    stap_live_transport t;          /* another transport (read set), or the socket      */
    /* the thread's own */
    unsigned char *bufs;
    unsigned char **bptr;           /* a transport's: each datagram's buffer, its length   */
    size_t *tlen;
    int *ttrunc;
    struct mmsghdr *msgs;
    struct iovec *iov;
    unsigned long long placed_seen; /* the assembler's placed count at the last progress */
    double progress_ms;             /* when a packet last added a sample                 */
    int open_cpis;                  /* samples placed since the last timeout's flush     */
    stap_live_counts n;             /* under mu; n.vrt copied out on demand              */
    /* raw mode (o.raw_item_bytes): the datagrams' bytes framed into CPIs by count */
    size_t raw_cpi_bytes;
    unsigned char *raw_pool;        /* slots CPIs                                        */
    long long *raw_held;            /* per slot: the CPI the consumer holds, or -1       */
    long long raw_cpi;              /* the CPI being filled, its bytes so far            */
    size_t raw_off;
    int raw_drop;                   /* its slot was held: its bytes dropped (overload)   */
    stap_vrt_counts rawn;           /* raw mode's counts (datagrams, CPIs)               */
};

/* ---- the address --------------------------------------------------------------------- */

/* udp://HOST:PORT (HOST a name, an IPv4 address, [IPv6], or empty: every address; PORT
 * 0..65535) into host and port */
static int parse_address(const char *address, char *host, size_t hostlen, char *port, size_t portlen,
                         stap_error *err)
{
    if (!address || strncmp(address, "udp://", 6))
        return stap_fail(err, STAP_EINVAL, "live input address '%s': expected udp://HOST:PORT",
                         address ? address : "(null)");
    const char *u = address + 6;
    const char *colon = strrchr(u, ':');
    size_t hl = colon ? (size_t)(colon - u) : 0;
    const char *h = u;
    if (hl >= 2 && u[0] == '[' && u[hl - 1] == ']') h++, hl -= 2;
    char *end = NULL;
    errno = 0;
    const long p = colon ? strtol(colon + 1, &end, 10) : -1;
    if (!colon || hl >= hostlen || memchr(h, '[', hl) || memchr(h, ']', hl) || end == colon + 1 || *end ||
        errno || p < 0 || p > 65535)
        return stap_fail(err, STAP_EINVAL, "live input address '%s': expected udp://HOST:PORT with a port "
                         "0..65535 (0: any free port)", address);
    memcpy(host, h, hl);
    host[hl] = '\0';
    snprintf(port, portlen, "%ld", p);
    return STAP_OK;
}

/* the socket buffer: forced when allowed, else asked; what it got */
static void set_rcvbuf(stap_live_udp *rx)
{
    const int want = rx->o.rcvbuf_bytes;
    rx->info.rcvbuf_asked = want;
    rx->info.rcvbuf_forced = setsockopt(rx->fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof want) == 0;
    if (!rx->info.rcvbuf_forced) setsockopt(rx->fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof want);
    int got = 0;
    socklen_t len = sizeof got;
    if (getsockopt(rx->fd, SOL_SOCKET, SO_RCVBUF, &got, &len) == 0) rx->info.rcvbuf_got = got / 2;
    rx->info.rcvbuf_capped = rx->info.rcvbuf_got < rx->info.rcvbuf_asked;
}

/* the bound address as udp://HOST:PORT */
static void name_bound(stap_live_udp *rx)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char host[INET6_ADDRSTRLEN] = "?";
    if (getsockname(rx->fd, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET6) {
            const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &a6->sin6_addr, host, sizeof host);
            rx->info.port = ntohs(a6->sin6_port);
        } else {
            const struct sockaddr_in *a4 = (const struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &a4->sin_addr, host, sizeof host);
            rx->info.port = ntohs(a4->sin_port);
        }
    }
    snprintf(rx->info.address, sizeof rx->info.address, ss.ss_family == AF_INET6 ? "udp://[%s]:%d" : "udp://%s:%d",
             host, rx->info.port);
}

static int open_socket(stap_live_udp *rx, const char *address, stap_error *err)
{
    char host[256], port[16];
    if (parse_address(address, host, sizeof host, port, sizeof port, err)) return err ? err->code : STAP_EINVAL;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    const int gai = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
    if (gai) return stap_fail(err, STAP_EIO, "live input address '%s': cannot resolve '%s': %s", address, host,
                              gai_strerror(gai));
    int e = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        rx->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (rx->fd >= 0) {
            set_rcvbuf(rx); /* before bind: datagrams may come at once */
            if (bind(rx->fd, ai->ai_addr, ai->ai_addrlen) == 0) break;
        }
        e = errno;
        if (rx->fd >= 0) close(rx->fd);
        rx->fd = -1;
    }
    freeaddrinfo(res);
    if (rx->fd < 0) return stap_fail(err, STAP_EIO, "live input address '%s': cannot bind: %s", address, strerror(e));
    name_bound(rx);
    return STAP_OK;
}

/* ---- the delivery queue (under mu) ---------------------------------------------------- */

static void deliver(stap_live_udp *rx, const stap_live_event *ev)
{
    if (ev->kind == STAP_LIVE_LOST) rx->n.lost[ev->reason & 3] += ev->count;
    if (rx->qlen && ev->kind == STAP_LIVE_LOST) {
        stap_live_event *last = &rx->q[(rx->qhead + rx->qlen - 1) % rx->qcap];
        /* every CPI is decided once, in order: a lost range follows its predecessor */
        const int full = rx->qlen >= rx->qcap - 2 * rx->o.slots - 2;
        if (last->kind == STAP_LIVE_LOST && (last->reason == ev->reason || full)) {
            last->count += ev->count;
            return;
        }
    }
    if (rx->qlen == rx->qcap) return; /* not reached (the header's bound) */
    rx->q[(rx->qhead + rx->qlen++) % rx->qcap] = *ev;
}

static void deliver_vrt(stap_live_udp *rx, const stap_vrt_event *e, double arrival_ms)
{
    stap_live_event ev;
    memset(&ev, 0, sizeof ev);
    ev.cpi = e->cpi;
    ev.count = e->count;
    if (e->kind == STAP_VRT_CPI_COMPLETE) {
        ev.kind = STAP_LIVE_CPI;
        ev.iq = e->iq;
        ev.data = e->iq;
        ev.arrival_ms = arrival_ms;
    } else {
        ev.kind = STAP_LIVE_LOST;
        ev.reason = e->reason;
    }
    deliver(rx, &ev);
}

/* the assembler's events into the queue in CPI order: a complete CPI after every CPI
 * before it, decided (lost) at once when not complete */
static void drain(stap_live_udp *rx, double arrival_ms)
{
    stap_vrt_event e;
    while (stap_vrt_assembler_next(rx->a, &e)) {
        if (e.kind != STAP_VRT_CPI_COMPLETE) {
            deliver_vrt(rx, &e, arrival_ms);
            continue;
        }
        stap_vrt_assembler_flush(rx->a, e.cpi); /* lost ranges before it, in order */
        stap_vrt_event l;
        while (stap_vrt_assembler_next(rx->a, &l)) deliver_vrt(rx, &l, arrival_ms);
        deliver_vrt(rx, &e, arrival_ms);
    }
}

/* ---- raw mode: CPIs framed by count ------------------------------------------------------ */

/* one datagram's bytes into the CPIs being filled (under mu) */
static void raw_push(stap_live_udp *rx, const unsigned char *b, size_t len, double now)
{
    rx->rawn.datagrams++;
    rx->rawn.kinds[STAP_VRT_DATA]++;
    if (rx->rawn.first_cpi < 0) rx->rawn.first_cpi = 0;
    while (len) {
        const int slot = (int)(rx->raw_cpi % rx->o.slots);
        if (rx->raw_off == 0) rx->raw_drop = rx->raw_held[slot] >= 0; /* a new CPI: a free buffer? */
        size_t take = rx->raw_cpi_bytes - rx->raw_off;
        if (take > len) take = len;
        if (!rx->raw_drop) memcpy(rx->raw_pool + (size_t)slot * rx->raw_cpi_bytes + rx->raw_off, b, take);
        else rx->rawn.overrun++;
        rx->raw_off += take;
        b += take;
        len -= take;
        if (rx->raw_off < rx->raw_cpi_bytes) break;
        stap_live_event ev;
        memset(&ev, 0, sizeof ev);
        ev.cpi = rx->raw_cpi;
        ev.count = 1;
        if (rx->raw_drop) {
            ev.kind = STAP_LIVE_LOST;
            ev.reason = STAP_VRT_LOST_OVERRUN;
            rx->rawn.cpis_lost++;
        } else {
            ev.kind = STAP_LIVE_CPI;
            ev.data = rx->raw_pool + (size_t)slot * rx->raw_cpi_bytes;
            ev.arrival_ms = now;
            rx->raw_held[slot] = rx->raw_cpi;
            rx->rawn.cpis_complete++;
        }
        deliver(rx, &ev);
        rx->raw_cpi++;
        rx->raw_off = 0;
    }
}

/* ---- the receive thread ---------------------------------------------------------------- */

static void thread_fail(stap_live_udp *rx, int e)
{
    pthread_mutex_lock(&rx->mu);
    stap_fail(&rx->ferr, STAP_EIO, "live input %s: receiving: %s", rx->info.address, strerror(e));
    rx->failed = 1;
    pthread_cond_broadcast(&rx->cv);
    pthread_mutex_unlock(&rx->mu);
}

/* one batch of m datagrams into the assembler (or raw mode's framing); 1 when it failed */
static int push_batch(stap_live_udp *rx, int m, double now)
{
    pthread_mutex_lock(&rx->mu);
    if (!rx->n.first_ms) rx->n.first_ms = now;
    rx->n.last_ms = now;
    rx->n.batches++;
    for (int i = 0; i < m; i++) {
        const size_t len = rx->msgs[i].msg_len;
        rx->n.bytes += len;
        if (rx->msgs[i].msg_hdr.msg_flags & MSG_TRUNC) rx->n.truncated++;
        if (rx->raw_cpi_bytes && (rx->msgs[i].msg_hdr.msg_flags & MSG_TRUNC)) { /* the framing lost */
            stap_fail(&rx->ferr, STAP_EIO, "live input %s: a message longer than %d bytes (raw mode: every "
                      "later CPI's framing would be lost)", rx->info.address, rx->o.datagram_bytes);
            rx->failed = 1;
            break;
        }
        if (rx->raw_cpi_bytes) {
            raw_push(rx, rx->iov[i].iov_base, len, now);
            continue;
        }
        stap_vrt_assembler_push(rx->a, rx->iov[i].iov_base, len);
        drain(rx, now);
    }
    const unsigned long long placed = rx->raw_cpi_bytes ? 0 : stap_vrt_assembler_counts(rx->a)->placed;
    if (placed != rx->placed_seen) { /* (raw mode: never; no timeout) */
        rx->placed_seen = placed;
        rx->progress_ms = now;
        rx->open_cpis = 1;
    }
    const int failed = rx->failed;
    if (rx->qlen || failed) pthread_cond_broadcast(&rx->cv);
    pthread_mutex_unlock(&rx->mu);
    return failed;
}

/* no sample added for timeout_ms: every CPI still open is lost */
static void time_out(stap_live_udp *rx, double now)
{
    pthread_mutex_lock(&rx->mu);
    stap_vrt_assembler_flush(rx->a, -1);
    drain(rx, now);
    rx->open_cpis = 0;
    rx->n.timeouts++;
    if (rx->qlen) pthread_cond_broadcast(&rx->cv);
    pthread_mutex_unlock(&rx->mu);
}

/* wait up to `wait` ms (-1: without end) for datagrams or the stop: 1 when there are
 * datagrams to read, 0 when not, -1 on a failure (errno) */
static int wait_input(stap_live_udp *rx, int wait)
{
    if (rx->t.read) return rx->t.wait(rx->t.user, rx->evfd, wait);
    struct pollfd p[2] = {{rx->fd, POLLIN, 0}, {rx->evfd, POLLIN, 0}};
    const int r = poll(p, 2, wait);
    if (r < 0) return errno == EINTR ? 0 : -1;
    return r > 0 && (p[0].revents & POLLIN);
}

/* a batch of datagrams without waiting, into msgs (lengths, MSG_TRUNC): how many (0: none
 * now), -1 on a failure (errno) */
static int read_batch(stap_live_udp *rx)
{
    if (rx->t.read) {
        const int m = rx->t.read(rx->t.user, rx->bptr, (size_t)rx->o.datagram_bytes, rx->tlen, rx->ttrunc,
                                 rx->o.batch);
        for (int i = 0; i < m; i++) {
            rx->msgs[i].msg_len = (unsigned)rx->tlen[i];
            rx->msgs[i].msg_hdr.msg_flags = rx->ttrunc[i] ? MSG_TRUNC : 0;
        }
        return m;
    }
    for (int i = 0; i < rx->o.batch; i++) rx->msgs[i].msg_hdr.msg_flags = 0;
    for (;;) {
        const int m = recvmmsg(rx->fd, rx->msgs, (unsigned)rx->o.batch, MSG_DONTWAIT, NULL);
        if (m >= 0) return m;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
        if (errno != EINTR) return -1;
    }
}

static void *receive_thread(void *arg)
{
    stap_live_udp *rx = arg;
    while (!atomic_load(&rx->stop_flag)) {
        int wait = -1;
        if (rx->open_cpis) {
            const double left = rx->progress_ms + rx->o.timeout_ms - stap_now_ms();
            if (left <= 0) {
                time_out(rx, stap_now_ms());
                continue;
            }
            wait = (int)left + 1;
        }
        const int r = wait_input(rx, wait);
        if (r < 0) {
            thread_fail(rx, errno);
            return NULL;
        }
        if (r == 0) continue;
        while (!atomic_load(&rx->stop_flag)) {
            const int m = read_batch(rx);
            if (m < 0) {
                thread_fail(rx, errno);
                return NULL;
            }
            if (m == 0) break;
            if (push_batch(rx, m, stap_now_ms())) return NULL;
            if (m < rx->o.batch) break; /* the socket is empty: wait again */
        }
    }
    pthread_mutex_lock(&rx->mu);
    rx->ended = 1; /* after its last batch: END comes after every event */
    pthread_cond_broadcast(&rx->cv);
    pthread_mutex_unlock(&rx->mu);
    return NULL;
}

/* ---- the API --------------------------------------------------------------------------- */

static int options(stap_live_udp_options *o, const stap_live_udp_options *given, stap_error *err)
{
    memset(o, 0, sizeof *o);
    if (given) *o = *given;
    if (!o->slots) o->slots = DEFAULT_SLOTS;
    if (!o->rcvbuf_bytes) o->rcvbuf_bytes = DEFAULT_RCVBUF;
    if (!o->timeout_ms) o->timeout_ms = DEFAULT_TIMEOUT_MS;
    if (!o->batch) o->batch = DEFAULT_BATCH;
    if (!o->datagram_bytes) o->datagram_bytes = DGRAM_BYTES;
    if (o->datagram_bytes < DGRAM_BYTES || o->datagram_bytes > (64 << 20))
        return stap_fail(err, STAP_EINVAL, "live input: datagram_bytes must be 65536 to 64 MiB (got %d)",
                         o->datagram_bytes);
    if (o->slots < 1 || o->slots > 1 << 16)
        return stap_fail(err, STAP_EINVAL, "live input: slots must be in 1..65536 (got %d)", o->slots);
    if (o->rcvbuf_bytes < 1 || o->rcvbuf_bytes > (1 << 30))
        return stap_fail(err, STAP_EINVAL, "live input: the socket buffer must be 1 byte to 1 GiB (got %d)",
                         o->rcvbuf_bytes);
    if (o->timeout_ms < 1)
        return stap_fail(err, STAP_EINVAL, "live input: timeout_ms must be positive (got %d)", o->timeout_ms);
    if (o->raw_item_bytes < 0 || o->raw_item_bytes > 64)
        return stap_fail(err, STAP_EINVAL, "live input: raw items of 0..64 bytes (got %d)", o->raw_item_bytes);
    if (o->batch < 1 || o->batch > MAX_BATCH)
        return stap_fail(err, STAP_EINVAL, "live input: batch must be in 1..%d (got %d)", MAX_BATCH, o->batch);
    return STAP_OK;
}

static int make_buffers(stap_live_udp *rx, stap_error *err)
{
    const int b = rx->o.batch;
    rx->qcap = 4 * rx->o.slots + 64;
    rx->q = calloc((size_t)rx->qcap, sizeof *rx->q);
    const size_t dg = (size_t)rx->o.datagram_bytes;
    rx->bufs = malloc((size_t)b * dg);
    rx->msgs = calloc((size_t)b, sizeof *rx->msgs);
    rx->iov = calloc((size_t)b, sizeof *rx->iov);
    rx->bptr = calloc((size_t)b, sizeof *rx->bptr);
    rx->tlen = calloc((size_t)b, sizeof *rx->tlen);
    rx->ttrunc = calloc((size_t)b, sizeof *rx->ttrunc);
    if (!rx->q || !rx->bufs || !rx->msgs || !rx->iov || !rx->bptr || !rx->tlen || !rx->ttrunc)
        return stap_fail(err, STAP_ENOMEM, "live input: out of memory for a batch of %d datagrams", b);
    for (int i = 0; i < b; i++) {
        rx->bptr[i] = rx->bufs + (size_t)i * dg;
        rx->iov[i].iov_base = rx->bufs + (size_t)i * dg;
        rx->iov[i].iov_len = dg;
        rx->msgs[i].msg_hdr.msg_iov = &rx->iov[i];
        rx->msgs[i].msg_hdr.msg_iovlen = 1;
    }
    return STAP_OK;
}

static int raw_buffers(stap_live_udp *rx, stap_error *err)
{
    rx->raw_cpi_bytes = (size_t)rx->o.raw_item_bytes * (size_t)rx->s.channels * (size_t)rx->s.pulses *
                        (size_t)rx->s.range_gates;
    rx->raw_pool = malloc(rx->raw_cpi_bytes * (size_t)rx->o.slots);
    rx->raw_held = malloc(sizeof *rx->raw_held * (size_t)rx->o.slots);
    if (!rx->raw_pool || !rx->raw_held)
        return stap_fail(err, STAP_ENOMEM, "live input: out of memory for %d CPIs of %zu bytes", rx->o.slots,
                         rx->raw_cpi_bytes);
    for (int k = 0; k < rx->o.slots; k++) rx->raw_held[k] = -1;
    rx->rawn.first_cpi = -1;
    return STAP_OK;
}

static int start_thread(stap_live_udp *rx, stap_error *err)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    const int c = pthread_cond_init(&rx->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (c || pthread_mutex_init(&rx->mu, NULL))
        return stap_fail(err, STAP_ENOMEM, "live input: cannot make a mutex or condition variable");
    /* the thread takes no signal: a program's handler runs on its own threads */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    const int e = pthread_create(&rx->thread, NULL, receive_thread, rx);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) return stap_fail(err, STAP_ENOMEM, "live input: cannot start the receive thread: %s", strerror(e));
    rx->thread_started = 1;
    return STAP_OK;
}

static int live_create(stap_live_udp **out, const stap_vrt_shape *s, const char *address,
                       const stap_live_transport *t, const stap_live_udp_options *opts, stap_error *err)
{
    *out = NULL;
    stap_live_udp_options o;
    int st = options(&o, opts, err);
    if (st) return st;
    if (stap_vrt_shape_validate(s, err)) return err ? err->code : STAP_EINVAL;
    stap_live_udp *rx = calloc(1, sizeof *rx);
    if (!rx) return stap_fail(err, STAP_ENOMEM, "live input: out of memory");
    rx->s = *s;
    rx->o = o;
    rx->fd = rx->evfd = -1;
    atomic_init(&rx->stop_flag, 0);
    st = stap_vrt_assembler_create(&rx->a, s, o.raw_item_bytes ? 1 : o.slots, err); /* (raw: unused) */
    if (!st && o.raw_item_bytes) st = raw_buffers(rx, err);
    if (!st) st = make_buffers(rx, err);
    if (!st && (rx->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
        st = stap_fail(err, STAP_EIO, "live input: eventfd: %s", strerror(errno));
    if (!st && t) {
        rx->t = *t;
        snprintf(rx->info.address, sizeof rx->info.address, "%s", t->address ? t->address : "?");
    } else if (!st) {
        st = open_socket(rx, address, err);
    }
    if (!st) st = start_thread(rx, err);
    if (st) {
        stap_live_udp_destroy(rx);
        return st;
    }
    *out = rx;
    return STAP_OK;
}

int stap_live_udp_create(stap_live_udp **out, const stap_vrt_shape *s, const char *address,
                         const stap_live_udp_options *opts, stap_error *err)
{
    return live_create(out, s, address, NULL, opts, err);
}

int stap_live_udp_create_on(stap_live_udp **out, const stap_vrt_shape *s, const stap_live_transport *t,
                            const stap_live_udp_options *opts, stap_error *err)
{
    if (!t || !t->wait || !t->read) {
        *out = NULL;
        return stap_fail(err, STAP_EINVAL, "live input: a transport needs its wait and read functions");
    }
    return live_create(out, s, NULL, t, opts, err);
}

void stap_live_udp_stop(stap_live_udp *rx)
{
    if (!rx) return;
    const int saved = errno; /* (a signal handler's caller keeps its errno) */
    atomic_store(&rx->stop_flag, 1);
    const uint64_t one = 1;
    if (rx->evfd >= 0 && write(rx->evfd, &one, sizeof one) < 0) {
        /* full (it counts to 2^64 - 2): the thread is woken already */
    }
    errno = saved;
}

int stap_live_udp_next(stap_live_udp *rx, stap_live_event *ev, int timeout_ms, stap_error *err)
{
    memset(ev, 0, sizeof *ev);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    if (timeout_ms > 0) {
        until.tv_sec += timeout_ms / 1000;
        until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&rx->mu);
    int st = STAP_OK;
    for (;;) {
        if (rx->qlen) {
            *ev = rx->q[rx->qhead];
            rx->qhead = (rx->qhead + 1) % rx->qcap;
            rx->qlen--;
            break;
        }
        if (rx->failed) {
            st = err ? (*err = rx->ferr, err->code) : STAP_EIO;
            break;
        }
        if (rx->ended) {
            ev->kind = STAP_LIVE_END;
            break;
        }
        if (timeout_ms == 0) break;
        /* (a stop from a signal handler wakes the thread, which ends and broadcasts) */
        const int w = timeout_ms < 0 ? pthread_cond_wait(&rx->cv, &rx->mu)
                                     : pthread_cond_timedwait(&rx->cv, &rx->mu, &until);
        if (w == ETIMEDOUT && !rx->qlen && !rx->ended && !rx->failed) break;
    }
    pthread_mutex_unlock(&rx->mu);
    return st;
}

void stap_live_udp_release(stap_live_udp *rx, long long cpi)
{
    pthread_mutex_lock(&rx->mu);
    if (rx->raw_cpi_bytes && rx->raw_held[cpi % rx->o.slots] == cpi) rx->raw_held[cpi % rx->o.slots] = -1;
    else if (!rx->raw_cpi_bytes) stap_vrt_assembler_release(rx->a, cpi);
    pthread_mutex_unlock(&rx->mu);
}

void stap_live_udp_counts(stap_live_udp *rx, stap_live_counts *out)
{
    pthread_mutex_lock(&rx->mu);
    *out = rx->n;
    out->vrt = rx->raw_cpi_bytes ? rx->rawn : *stap_vrt_assembler_counts(rx->a);
    pthread_mutex_unlock(&rx->mu);
}

void stap_live_udp_info(const stap_live_udp *rx, stap_live_info *out)
{
    *out = rx->info;
}

void stap_live_udp_destroy(stap_live_udp *rx)
{
    if (!rx) return;
    if (rx->thread_started) {
        stap_live_udp_stop(rx);
        pthread_join(rx->thread, NULL);
        pthread_mutex_destroy(&rx->mu);
        pthread_cond_destroy(&rx->cv);
    }
    if (rx->fd >= 0) close(rx->fd);
    if (rx->evfd >= 0) close(rx->evfd);
    stap_vrt_assembler_destroy(rx->a);
    free(rx->q);
    free(rx->bufs);
    free(rx->msgs);
    free(rx->iov);
    free(rx->bptr);
    free(rx->tlen);
    free(rx->ttrunc);
    free(rx->raw_pool);
    free(rx->raw_held);
    free(rx);
}
