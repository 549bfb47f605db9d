/* listen_pub: `rtstap listen --publish zmq+tcp://HOST:PORT` — each processed CPI's detections
 * as one JSON message on a ZeroMQ PUB socket (stap/zmq/zmq_live.h), for a tracker or a
 * display; the schema is docs/live.md's ("--publish"). The message is formatted into one
 * buffer, grown only when a CPI has more detections than any before; the send never waits
 * (a subscriber's full queue drops the message, counted in the report). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "listen.h"

enum { PUB_HEAD = 320, PUB_PER_DET = 160 }; /* bytes: the message's fields, one detection */

int listen_pub_open(listen_job *j)
{
    stap_error err;
    const int st = stap_zmq_pub_create(&j->pub, j->publish, j->publish_hwm, &err);
    if (st == STAP_EINVAL) return cli_error(EXIT_USAGE, "--publish %s", err.msg);
    if (st) return cli_error(EXIT_PROCESSING, "--publish %s: %s", j->publish, err.msg);
    j->msg_cap = PUB_HEAD + 64 * PUB_PER_DET;
    if (!(j->msg = malloc(j->msg_cap))) return cli_error(EXIT_PROCESSING, "out of memory");
    return EXIT_OK;
}

int listen_pub_cpi(listen_job *j, const stap_cpi_result *r, long long input_cpi, long long lost, double ms,
                   stap_error *err)
{
    const size_t need = PUB_HEAD + PUB_PER_DET * r->detection_count;
    if (need > j->msg_cap) {
        char *m = realloc(j->msg, need);
        if (!m) return stap_fail(err, STAP_ENOMEM, "out of memory for a message of %zu detections",
                                 r->detection_count);
        j->msg = m;
        j->msg_cap = need;
    }
    /* floats as %.9g: each reads back as the same float32 */
    size_t n = (size_t)snprintf(j->msg, j->msg_cap, "{\"cpi\":%lld,\"row\":%lld,\"cpis_lost\":%lld,"
                                "\"latency_ms\":%.6f,\"detection_count\":%zu,\"detections\":[",
                                input_cpi, r->cpi, lost, ms, r->detection_count);
    for (size_t k = 0; k < r->detection_count && n < j->msg_cap; k++) {
        const stap_detection *d = &r->detections[k];
        n += (size_t)snprintf(j->msg + n, j->msg_cap - n, "%s{\"beam\":%d,\"doppler_bin\":%d,\"range_cell\":%d,"
                              "\"power\":%.9g,\"snr_db\":%.9g,\"statistic\":%.9g,\"threshold\":%.9g}",
                              k ? "," : "", d->beam, d->doppler_bin, d->range_cell, (double)d->power,
                              (double)d->snr_db, (double)d->statistic, (double)d->threshold);
    }
    if (n < j->msg_cap) n += (size_t)snprintf(j->msg + n, j->msg_cap - n, "]}");
    if (n >= j->msg_cap) return stap_fail(err, STAP_EINVAL, "a CPI's message outgrew its %zu bytes", j->msg_cap);
    const int st = stap_zmq_pub_send(j->pub, j->msg, n, err);
    return st == 1 ? STAP_OK : st; /* dropped: counted */
}
