/* rt_error: the status-code-plus-message convention shared by every rtstap library.
 * Library functions return an int status (RT_OK = 0) and fill an rt_error; only app/ prints. */
#ifndef RT_ERROR_H
#define RT_ERROR_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

enum rt_status {
    RT_OK = 0,
    RT_EINVAL = 1,   /* an argument or parameter is out of range            */
    RT_EIO = 2,      /* a file could not be read or written                 */
    RT_EFORMAT = 3,  /* an input file does not follow the expected schema   */
    RT_ENOMEM = 4,   /* an allocation failed                                */
    RT_ENUMERIC = 5, /* a non-finite value or a singular factor was met     */
    RT_EDEVICE = 6,  /* a GPU error, or no GPU where one is needed          */
    RT_EUNSUPPORTED = 7 /* the build lacks a feature (e.g. CUDA)            */
};

typedef struct rt_error {
    int code;        /* one of enum rt_status                              */
    char msg[512];   /* what went wrong, naming the file/dataset/parameter */
} rt_error;

/* Record an error (printf-style message) and return its code. err may be NULL. */
int rt_fail(rt_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Prefix an existing message, e.g. with a file name; returns err->code. */
int rt_prefix(rt_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void rt_clear(rt_error *err);

/* The git commit the library was built from ("+dirty" when the tree had uncommitted
 * changes), for --version, result files and benchmark records. */
const char *rt_commit(void);
#define RTSTAP_COMMIT rt_commit()
const char *rt_status_name(int code);

#ifdef __cplusplus
}
#endif

#endif
