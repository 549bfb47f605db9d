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
typedef struct { float re, im; } stap_cf32;
typedef struct { double re, im; } stap_cf64;
#else
typedef float _Complex stap_cf32;
typedef double _Complex stap_cf64;
/* A complex value from its real and imaginary parts, exactly (C11's CMPLXF and CMPLX, which
 * glibc's <complex.h> defines for GCC >= 4.7 only; GCC and clang have the builtin) */
#define STAP_CMPLXF(x, y) __builtin_complex((float)(x), (float)(y))
#define STAP_CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif

/* The status-code-plus-message convention of every rtstap library function: it returns
 * an int status (STAP_OK = 0) and fills a stap_error with a message that names the file,
 * dataset or parameter at fault; the library never prints (only app/ does). */
enum stap_status {
    STAP_OK = 0,
    STAP_EINVAL = 1,   /* an argument or parameter is out of range            */
    STAP_EIO = 2,      /* a file could not be read or written                 */
    STAP_EFORMAT = 3,  /* an input file does not follow the expected schema   */
    STAP_ENOMEM = 4,   /* an allocation failed                                */
    STAP_ENUMERIC = 5, /* a non-finite value or a singular factor was met     */
    STAP_EDEVICE = 6,  /* a GPU error, or no GPU where one is needed          */
    STAP_EUNSUPPORTED = 7 /* the build lacks a feature (e.g. CUDA)            */
};

typedef struct stap_error {
    int code;        /* one of enum stap_status                              */
    char msg[512];   /* what went wrong, naming the file/dataset/parameter */
} stap_error;

/* How an atomic writer publishes its file. STAP_WRITE_NEW (the default): an existing file
 * of that name is refused (STAP_EIO, "already exists"), before and again after the work.
 * STAP_WRITE_REPLACE (rtstap's -f): an existing regular file is replaced by renaming the
 * complete temporary over it, so it stays as it was until the new file is complete, and
 * for good when the writing fails; a directory, symbolic link or other non-regular file
 * of that name is still refused. */
typedef enum stap_write_mode { STAP_WRITE_NEW = 0, STAP_WRITE_REPLACE = 1 } stap_write_mode;

/* What a result file keeps of each CPI (stap_write_options.keep). */
enum {
    STAP_KEEP_WEIGHTS = 1u << 0,    /* /weights: D x S x B x N per CPI (about 1 MB, hard) */
    STAP_KEEP_OUTPUT = 1u << 1,     /* /output/iq: B x D x R per CPI                     */
    STAP_KEEP_DETECTIONS = 1u << 2  /* /detections (a few KB per CPI)                    */
};

/* How a writer writes (NULL = defaults: a new file; a result file keeps what its writer
 * names as its default). */
typedef struct stap_write_options {
    stap_write_mode mode;    /* STAP_WRITE_NEW (0): an existing file is refused;
                                STAP_WRITE_REPLACE: an existing regular file is replaced */
    unsigned keep;           /* result files: STAP_KEEP_* bits, 0 = the writer's default   */
    long long cpis;          /* a recording's result writer: the CPIs it will be given, when
                                known (0: not). The disk space for their weights and output
                                is then checked at open, not mid-run, and up to
                                STAP_RESULT_PLACE_ROWS rows (more when a row is large: one
                                per 256 bytes of it) are placed: allocated at open and
                                written in place, without HDF5 per CPI. More rows are
                                appended as they come (placing looks each chunk up, which
                                is quadratic in the chunks with HDF5 before 1.14)        */
    size_t detection_bytes;  /* a recording's result writer: the detections it holds before
                                writing them (0: STAP_RESULT_DETECTION_BYTES); it holds at
                                most this much plus one CPI's                            */
    int place;               /* a recording's result writer: place every one of the `cpis`
                                rows however many (stap_result_writer_placement: other
                                processes write them at known offsets; rtstap-mpi). More
                                rows than it places by itself go several a chunk, about
                                STAP_RESULT_PLACE_ROWS chunks (a chunk at most 64 MiB, or
                                one row): placing stays linear in the rows               */
} stap_write_options;
/* the rows a recording's result writer places at open unless asked for all
 * (stap_write_options.cpis, .place) */
#define STAP_RESULT_PLACE_ROWS 1024
/* the detections a recording's result writer holds before writing them, by default: the
 * rows are written in batches of 1 024 CPIs or of this many bytes of detections, which
 * comes first (a run's memory check counts it) */
#define STAP_RESULT_DETECTION_BYTES ((size_t)64 << 20)

/* Progress of long work (an import of many CPIs): called with the units done of total, now
 * and then and at the end; the library never draws it (app/ does). */
typedef void (*stap_progress_fn)(void *user, long long done, long long total);

/* Record an error (printf-style message) and return its code. err may be NULL. */
int stap_fail(stap_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Prefix an existing message, e.g. with a file name; returns err->code. */
int stap_error_prefix(stap_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void stap_error_clear(stap_error *err);
/* "ok", "invalid argument", "i/o error", ... for a status code. */
const char *stap_status_name(int code);

/* The version of the library linked (RTSTAP_VERSION is the headers' version). */
const char *stap_version(void);
/* The git commit the library was built from ("+dirty" when the tree had uncommitted
 * changes), for --version, result files and benchmark records. */
const char *stap_commit(void);
#define RTSTAP_COMMIT stap_commit()

/* A monotonic clock (CLOCK_MONOTONIC), in milliseconds: stage timing and time stamps. */
double stap_now_ms(void);

#ifdef __cplusplus
}
#endif

#endif
