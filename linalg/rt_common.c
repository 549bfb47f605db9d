/* rt_common.c: what include/rtstap/common.h declares — status codes with messages, the
 * version and commit, the monotonic clock. In linalg/, the lowest layer with C sources. */
#include "rtstap/common.h"
#include "rtstap_commit.h" /* generated each build: #define RTSTAP_COMMIT_ID */

#include <stdio.h>
#include <string.h>
#include <time.h>

int stap_fail(stap_error *err, int code, const char *fmt, ...)
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

int stap_error_prefix(stap_error *err, const char *fmt, ...)
{
    if (!err) return STAP_EINVAL;
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

void stap_error_clear(stap_error *err)
{
    if (err) { err->code = STAP_OK; err->msg[0] = '\0'; }
}

const char *stap_status_name(int code)
{
    switch (code) {
    case STAP_OK: return "ok";
    case STAP_EINVAL: return "invalid argument";
    case STAP_EIO: return "i/o error";
    case STAP_EFORMAT: return "format error";
    case STAP_ENOMEM: return "out of memory";
    case STAP_ENUMERIC: return "numerical error";
    case STAP_EDEVICE: return "device error";
    case STAP_EUNSUPPORTED: return "unsupported";
    default: return "unknown error";
    }
}

const char *stap_version(void) { return RTSTAP_VERSION; }

const char *stap_commit(void) { return RTSTAP_COMMIT_ID; }

double stap_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
