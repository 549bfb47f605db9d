/* zmq_live.c: zmq_live.h — the address form every ZeroMQ option of rtstap takes, the PUB
 * socket (an XPUB: a sender sees its first subscriber), and the SUB or PULL socket as the
 * live receiver's transport: zmq_poll on the socket and the receiver's stop eventfd, then
 * messages read without waiting, one a datagram. */
#include "zmq_live.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef RTSTAP_HAVE_ZMQ
#include <zmq.h>
#endif

int stap_zmq_endpoint(const char *url, char *endpoint, size_t len, int *ipv6, stap_error *err)
{
    const char *at = url;
    if (!strncmp(at, "zmq+", 4)) at += 4;
    if (strncmp(at, "tcp://", 6))
        return stap_fail(err, STAP_EINVAL, "'%s': expected tcp://HOST:PORT or zmq+tcp://HOST:PORT", url);
    at += 6;
    const char *colon = strrchr(at, ':');
    const char *close = strrchr(at, ']');
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : -1;
    if (!colon || colon == at || (close && close > colon) || end == colon + 1 || *end || port < 0 || port > 65535)
        return stap_fail(err, STAP_EINVAL, "'%s': expected tcp://HOST:PORT (a port 0..65535)", url);
    *ipv6 = at[0] == '[';
    const int n = port ? snprintf(endpoint, len, "tcp://%.*s:%ld", (int)(colon - at), at, port)
                       : snprintf(endpoint, len, "tcp://%.*s:*", (int)(colon - at), at);
    if (n < 0 || (size_t)n >= len) return stap_fail(err, STAP_EINVAL, "'%s': too long", url);
    return STAP_OK;
}

#ifdef RTSTAP_HAVE_ZMQ

int stap_zmq_available(void) { return 1; }

struct stap_zmq_pub {
    void *ctx, *sock;
    char address[300];
    long long sent, dropped;
};

int stap_zmq_pub_create(stap_zmq_pub **out, const char *url, int hwm, stap_error *err)
{
    *out = NULL;
    char ep[280];
    int ipv6, st = stap_zmq_endpoint(url, ep, sizeof ep, &ipv6, err);
    if (st) return st;
    stap_zmq_pub *p = calloc(1, sizeof *p);
    if (!p) return stap_fail(err, STAP_ENOMEM, "out of memory");
    const int one = 1, zero = 0;
    p->ctx = zmq_ctx_new();
    p->sock = p->ctx ? zmq_socket(p->ctx, ZMQ_XPUB) : NULL; /* a PUB that sees subscriptions */
    if (!p->sock || zmq_setsockopt(p->sock, ZMQ_SNDHWM, &hwm, sizeof hwm) ||
        zmq_setsockopt(p->sock, ZMQ_XPUB_NODROP, &one, sizeof one) ||
        zmq_setsockopt(p->sock, ZMQ_LINGER, &zero, sizeof zero) ||
        (ipv6 && zmq_setsockopt(p->sock, ZMQ_IPV6, &one, sizeof one))) {
        st = stap_fail(err, STAP_EIO, "ZeroMQ: cannot make a PUB socket: %s", zmq_strerror(zmq_errno()));
    } else if (zmq_bind(p->sock, ep)) {
        st = stap_fail(err, STAP_EIO, "cannot bind %s: %s", url, zmq_strerror(zmq_errno()));
    } else {
        char last[280];
        size_t ll = sizeof last;
        if (zmq_getsockopt(p->sock, ZMQ_LAST_ENDPOINT, last, &ll)) snprintf(last, sizeof last, "%s", ep);
        snprintf(p->address, sizeof p->address, "zmq+%s", last);
    }
    if (st) {
        stap_zmq_pub_destroy(p, 0);
        return st;
    }
    *out = p;
    return STAP_OK;
}

int stap_zmq_pub_send(stap_zmq_pub *p, const void *msg, size_t len, stap_error *err)
{
    for (;;) {
        if (zmq_send(p->sock, msg, len, ZMQ_DONTWAIT) >= 0) {
            p->sent++;
            return STAP_OK;
        }
        const int e = zmq_errno();
        if (e == EINTR) continue;
        if (e == EAGAIN) {
            p->dropped++;
            return 1;
        }
        return stap_fail(err, STAP_EIO, "ZeroMQ publish on %s: %s", p->address, zmq_strerror(e));
    }
}

int stap_zmq_pub_wait_subscriber(stap_zmq_pub *p, int timeout_ms, stap_error *err)
{
    zmq_setsockopt(p->sock, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    unsigned char sub[256];
    for (;;) { /* a subscription message: 1, then its topic */
        const int n = zmq_recv(p->sock, sub, sizeof sub, 0);
        if (n >= 1 && sub[0] == 1) return STAP_OK;
        if (n < 0 && zmq_errno() != EINTR)
            return stap_fail(err, STAP_EIO, "%s: no subscriber within %d ms: %s", p->address, timeout_ms,
                             zmq_strerror(zmq_errno()));
    }
}

int stap_zmq_pub_send_wait(stap_zmq_pub *p, const void *msg, size_t len, stap_error *err)
{
    while (zmq_send(p->sock, msg, len, 0) < 0) {
        if (zmq_errno() != EINTR)
            return stap_fail(err, STAP_EIO, "ZeroMQ send on %s: %s", p->address, zmq_strerror(zmq_errno()));
    }
    p->sent++;
    return STAP_OK;
}

/* ---- the receiving side ---------------------------------------------------------------- */

struct stap_zmq_in {
    void *ctx, *sock;
    char address[300];
    stap_live_transport t;
};

static int in_wait(void *user, int stop_fd, int wait_ms)
{
    stap_zmq_in *z = user;
    zmq_pollitem_t items[2] = {{z->sock, 0, ZMQ_POLLIN, 0}, {NULL, stop_fd, ZMQ_POLLIN, 0}};
    const int r = zmq_poll(items, 2, wait_ms);
    if (r < 0) {
        errno = zmq_errno();
        return errno == EINTR ? 0 : -1;
    }
    return (items[0].revents & ZMQ_POLLIN) != 0;
}

static int in_read(void *user, unsigned char *const *bufs, size_t cap, size_t *lens, int *truncated, int max)
{
    stap_zmq_in *z = user;
    int m = 0;
    while (m < max) {
        const int n = zmq_recv(z->sock, bufs[m], cap, ZMQ_DONTWAIT);
        if (n < 0) {
            const int e = zmq_errno();
            if (e == EINTR) continue;
            if (e == EAGAIN) break;
            errno = e;
            return m ? m : -1;
        }
        truncated[m] = (size_t)n > cap;
        lens[m] = truncated[m] ? cap : (size_t)n;
        m++;
    }
    return m;
}

int stap_zmq_in_create(stap_zmq_in **out, const char *url, int pull, int hwm, stap_error *err)
{
    *out = NULL;
    char ep[280];
    int ipv6, st = stap_zmq_endpoint(url, ep, sizeof ep, &ipv6, err);
    if (st) return st;
    if (strstr(ep, ":*")) return stap_fail(err, STAP_EINVAL, "'%s': a port to connect to (not 0)", url);
    stap_zmq_in *z = calloc(1, sizeof *z);
    if (!z) return stap_fail(err, STAP_ENOMEM, "out of memory");
    const int one = 1, zero = 0;
    z->ctx = zmq_ctx_new();
    z->sock = z->ctx ? zmq_socket(z->ctx, pull ? ZMQ_PULL : ZMQ_SUB) : NULL;
    if (!z->sock || zmq_setsockopt(z->sock, ZMQ_RCVHWM, &hwm, sizeof hwm) ||
        zmq_setsockopt(z->sock, ZMQ_LINGER, &zero, sizeof zero) ||
        (!pull && zmq_setsockopt(z->sock, ZMQ_SUBSCRIBE, "", 0)) ||
        (ipv6 && zmq_setsockopt(z->sock, ZMQ_IPV6, &one, sizeof one)))
        st = stap_fail(err, STAP_EIO, "ZeroMQ: cannot make a %s socket: %s", pull ? "PULL" : "SUB",
                       zmq_strerror(zmq_errno()));
    else if (zmq_connect(z->sock, ep))
        st = stap_fail(err, STAP_EIO, "cannot connect to %s: %s", url, zmq_strerror(zmq_errno()));
    if (st) {
        stap_zmq_in_destroy(z);
        return st;
    }
    snprintf(z->address, sizeof z->address, "zmq+%s (%s)", ep, pull ? "PULL" : "SUB");
    z->t = (stap_live_transport){z, z->address, in_wait, in_read};
    *out = z;
    return STAP_OK;
}

void stap_zmq_in_destroy(stap_zmq_in *z)
{
    if (!z) return;
    if (z->sock) zmq_close(z->sock);
    if (z->ctx) zmq_ctx_term(z->ctx);
    free(z);
}

void stap_zmq_pub_destroy(stap_zmq_pub *p, int linger_ms)
{
    if (!p) return;
    if (p->sock) {
        zmq_setsockopt(p->sock, ZMQ_LINGER, &linger_ms, sizeof linger_ms);
        zmq_close(p->sock);
    }
    if (p->ctx) zmq_ctx_term(p->ctx);
    free(p);
}

#else /* built without ZeroMQ */

int stap_zmq_available(void) { return 0; }

struct stap_zmq_pub {
    char address[1];
    long long sent, dropped;
};

int stap_zmq_pub_create(stap_zmq_pub **out, const char *url, int hwm, stap_error *err)
{
    *out = NULL;
    return stap_fail(err, STAP_EUNSUPPORTED, "this build has no ZeroMQ (libzmq; Debian: libzmq3-dev)");
}

int stap_zmq_pub_send(stap_zmq_pub *p, const void *msg, size_t len, stap_error *err)
{
    return stap_fail(err, STAP_EUNSUPPORTED, "this build has no ZeroMQ");
}

void stap_zmq_pub_destroy(stap_zmq_pub *p, int linger_ms) { free(p); }

int stap_zmq_pub_wait_subscriber(stap_zmq_pub *p, int timeout_ms, stap_error *err)
{
    return stap_fail(err, STAP_EUNSUPPORTED, "this build has no ZeroMQ");
}

int stap_zmq_pub_send_wait(stap_zmq_pub *p, const void *msg, size_t len, stap_error *err)
{
    return stap_fail(err, STAP_EUNSUPPORTED, "this build has no ZeroMQ");
}

struct stap_zmq_in {
    stap_live_transport t;
};

int stap_zmq_in_create(stap_zmq_in **out, const char *url, int pull, int hwm, stap_error *err)
{
    *out = NULL;
    return stap_fail(err, STAP_EUNSUPPORTED, "this build has no ZeroMQ (libzmq; Debian: libzmq3-dev)");
}

void stap_zmq_in_destroy(stap_zmq_in *z) { free(z); }

#endif

const char *stap_zmq_pub_address(const stap_zmq_pub *p) { return p->address; }

const stap_live_transport *stap_zmq_in_transport(stap_zmq_in *z) { return &z->t; }

void stap_zmq_pub_counts(const stap_zmq_pub *p, long long *sent, long long *dropped)
{
    *sent = p ? p->sent : 0;
    *dropped = p ? p->dropped : 0;
}
