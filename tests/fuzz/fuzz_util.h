/* fuzz_util: what the libFuzzer harnesses of tests/fuzz share — a private scratch
 * directory, a reader of the fuzzer's bytes as choices, HDF5 identifier bookkeeping and
 * the checks every harness makes of a library call's result. */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "rtstap/common.h"

/* Report a finding and abort (libFuzzer saves the input as a crash). */
void fz_die(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

/* A scratch directory of this process ($FUZZ_TMPDIR, else /dev/shm, else $TMPDIR, else
 * /tmp), emptied and removed at exit; fz_path joins a name to it. */
const char *fz_dir(void);
const char *fz_path(const char *name, char *buf, size_t len);
/* Write a file (replacing a regular file of that name); removes whatever was at path. */
void fz_write_file(const char *path, const void *data, size_t n);
/* Remove a file, FIFO, symbolic link or empty directory at path, if any. */
void fz_remove(const char *path);

/* The fuzzer's bytes read as a stream of choices; past the end every read gives 0, so
 * that a short input (and the all-zero seed) takes the first, default, choice of each. */
typedef struct fz_bytes {
    const uint8_t *p;
    size_t n;
} fz_bytes;

unsigned fz_u8(fz_bytes *b);
uint32_t fz_u32(fz_bytes *b);
/* A choice in [0, n) (n <= 256). */
unsigned fz_pick(fz_bytes *b, unsigned n);
/* Copy up to len bytes (0-filled past the end). */
void fz_take(fz_bytes *b, void *out, size_t len);

/* A library call's outcome must be STAP_OK, or a known stap_status with a message (printed
 * when FUZZ_VERBOSE is set in the environment). */
void fz_check_status(const char *what, int st, const stap_error *err);

/* A watchdog: a call between fz_watch and fz_unwatch that has not returned after
 * FZ_BLOCK_SECONDS is reported as blocked (an open(2) of a FIFO waits for a writer
 * forever; libFuzzer's own timer only interrupts it, and the reader then fails cleanly). */
#define FZ_BLOCK_SECONDS 3
void fz_watch(const char *what);
void fz_unwatch(void);

/* HDF5 identifiers held by the process, by kind: a library call that returns must leave
 * these counts as it found them (an identifier it did not close keeps a file open). */
typedef struct fz_h5_ids {
    unsigned long long n[8];
} fz_h5_ids;
void fz_h5_ids_get(fz_h5_ids *ids);
void fz_h5_ids_same(const char *what, const fz_h5_ids *before);
/* HDF5 quiet (no error stack printing) and initialized; call once from an initializer. */
void fz_h5_init(void);

#endif
