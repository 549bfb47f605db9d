/* zmq_live.h: ZeroMQ for live streams (docs/live.md) — a PUB socket that publishes one
 * message a CPI without ever waiting (listen --publish) or VRT packets (send --zmq), and a
 * SUB or PULL socket as the live receiver's transport (listen --zmq). A library of its own (rtstap_zmq,
 * like stap/plot/): only app/ links it, and librtstap needs no ZeroMQ. Built without
 * libzmq (RTSTAP_ZMQ=OFF, or AUTO and none found), every create fails with
 * STAP_EUNSUPPORTED saying so. No printing: status codes with a message. */
#ifndef STAP_ZMQ_LIVE_H
#define STAP_ZMQ_LIVE_H

#include <stddef.h>

#include "rtstap/common.h"
#include "rtstap/vrt.h"

/* 1 when this build has ZeroMQ */
int stap_zmq_available(void);

/* "tcp://HOST:PORT" or "zmq+tcp://HOST:PORT" (HOST a name, an IPv4 address or [IPv6]; PORT
 * 0..65535, 0: a free one when bound) into ZeroMQ's endpoint (port 0: "*") and whether
 * HOST is IPv6; STAP_EINVAL saying what is expected otherwise. */
int stap_zmq_endpoint(const char *url, char *endpoint, size_t len, int *ipv6, stap_error *err);

typedef struct stap_zmq_pub stap_zmq_pub;
/* A PUB socket bound at url (stap_zmq_endpoint), at most hwm messages queued for each
 * subscriber; a message that finds a subscriber's queue full is dropped and counted, never
 * waited for (ZMQ_XPUB_NODROP with a non-blocking send). */
int stap_zmq_pub_create(stap_zmq_pub **p, const char *url, int hwm, stap_error *err);
/* The address bound, "zmq+tcp://HOST:PORT" (the port chosen for 0). */
const char *stap_zmq_pub_address(const stap_zmq_pub *p);
/* Publish one message of len bytes without waiting: STAP_OK when queued, 1 when dropped
 * (a subscriber's queue full; counted), or an error. */
int stap_zmq_pub_send(stap_zmq_pub *p, const void *msg, size_t len, stap_error *err);
void stap_zmq_pub_counts(const stap_zmq_pub *p, long long *sent, long long *dropped);
/* For a sender (rtstap send --zmq): wait up to timeout_ms for a first subscriber's
 * subscription (STAP_ETIMEOUT-like STAP_EIO when none came), and publish waiting for room
 * (never dropping: ZMQ_XPUB_NODROP). */
int stap_zmq_pub_wait_subscriber(stap_zmq_pub *p, int timeout_ms, stap_error *err);
int stap_zmq_pub_send_wait(stap_zmq_pub *p, const void *msg, size_t len, stap_error *err);
/* Close, giving queued messages up to linger_ms to leave. */
void stap_zmq_pub_destroy(stap_zmq_pub *p, int linger_ms);

/* The receiving side: a SUB socket subscribed to every message (pull 0) or a PULL socket
 * (pull 1) connected to url (stap_zmq_endpoint; ZeroMQ connects, and reconnects, in the
 * background), at most hwm messages queued (ZMQ_RCVHWM). Its transport gives the live
 * receiver (stap_live_udp_create_on) one message a datagram; it must outlive it. */
typedef struct stap_zmq_in stap_zmq_in;
int stap_zmq_in_create(stap_zmq_in **z, const char *url, int pull, int hwm, stap_error *err);
const stap_live_transport *stap_zmq_in_transport(stap_zmq_in *z);
void stap_zmq_in_destroy(stap_zmq_in *z);

#endif
