/* rtstap/common.h: what every layer of rtstap shares — the complex types, the status codes
 * and the message that goes with them, the version, and a monotonic clock. The bottom of
 * the include graph (docs/architecture.md): it includes no other header of the project but the
 * generated version header, and the CUDA kernels (kernels/) may include it. */
#ifndef RTSTAP_COMMON_H
#define RTSTAP_COMMON_H

#include <stdarg.h>
#include <stddef.h>

#include <rtstap/version.h>

#ifndef __cplusplus
#include <complex.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Complex single and double precision: C99's complex types in C; in C++ (the CUDA sources,
 * C++ users) a struct of the same layout under the same name — only pointers to them
 * cross the API, and std::complex<float> or float2 data may be cast to them. */
#ifdef __cplusplus
typedef struct { float re, im; } cf32;
typedef struct { double re, im; } cf64;
#else
typedef float _Complex cf32;
typedef double _Complex cf64;
/* C11's CMPLXF and CMPLX: glibc's <complex.h> defines them for GCC >= 4.7 only; clang has
 * the builtin */
#ifndef CMPLXF
#define CMPLXF(x, y) __builtin_complex((float)(x), (float)(y))
#endif
#ifndef CMPLX
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif
#endif

/* The status-code-plus-message convention of every rtstap library function: it returns
 * an int status (RT_OK = 0) and fills an rt_error with a message that names the file,
 * dataset or parameter at fault; the library never prints (only app/ does). */
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

/* How an atomic writer publishes its file. RT_WRITE_NEW (every writer without a _mode
 * suffix): an existing file of that name is refused (RT_EIO, "already exists"), before
 * and again after the work. RT_WRITE_REPLACE (rtstap's -f): an existing regular file is
 * replaced by renaming the complete temporary over it, so it stays as it was until the
 * new file is complete, and for good when the writing fails; a directory, symbolic link
 * or other non-regular file of that name is still refused. */
typedef enum rt_write_mode { RT_WRITE_NEW = 0, RT_WRITE_REPLACE = 1 } rt_write_mode;

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
/* "ok", "invalid argument", "i/o error", ... for a status code. */
const char *rt_status_name(int code);

/* The version of the library linked (RTSTAP_VERSION is the headers' version). */
const char *rt_version(void);
/* The git commit the library was built from ("+dirty" when the tree had uncommitted
 * changes), for --version, result files and benchmark records. */
const char *rt_commit(void);
#define RTSTAP_COMMIT rt_commit()

/* A monotonic clock (CLOCK_MONOTONIC), in milliseconds: stage timing and time stamps. */
double rt_now_ms(void);
/* Its earlier name, from when the clock was linalg's; kept so that code written against
 * it builds unchanged (prefer rt_now_ms). */
#define la_now_ms rt_now_ms

#ifdef __cplusplus
}
#endif

#endif
