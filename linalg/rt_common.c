/* rt_common.c: what include/rtstap/common.h declares — status codes with messages, the
 * version and commit, the monotonic clock. In linalg/, the lowest layer with C sources. */
#include "rtstap/common.h"
#include "rtstap_commit.h" /* generated each build: #define RTSTAP_COMMIT_ID */

#include <stdio.h>
#include <string.h>
#include <time.h>

int rt_fail(rt_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

int rt_prefix(rt_error *err, const char *fmt, ...)
{
    if (!err) return RT_EINVAL;
    char head[256], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    size_t h = strlen(head);
    if (h + 2 >= sizeof err->msg) h = sizeof err->msg - 3;
    memcpy(err->msg, head, h);
    memcpy(err->msg + h, ": ", 2);
    size_t room = sizeof err->msg - h - 3, o = strlen(old);
    if (o > room) o = room;
    memcpy(err->msg + h + 2, old, o);
    err->msg[h + 2 + o] = '\0';
    return err->code;
}

void rt_clear(rt_error *err)
{
    if (err) { err->code = RT_OK; err->msg[0] = '\0'; }
}

const char *rt_status_name(int code)
{
    switch (code) {
    case RT_OK: return "ok";
    case RT_EINVAL: return "invalid argument";
    case RT_EIO: return "i/o error";
    case RT_EFORMAT: return "format error";
    case RT_ENOMEM: return "out of memory";
    case RT_ENUMERIC: return "numerical error";
    case RT_EDEVICE: return "device error";
    case RT_EUNSUPPORTED: return "unsupported";
    default: return "unknown error";
    }
}

const char *rt_version(void) { return RTSTAP_VERSION; }

const char *rt_commit(void) { return RTSTAP_COMMIT_ID; }

double rt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
