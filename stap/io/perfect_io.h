/* perfect_io: the files of the PERFECT suite's STAP application (stap/config/perfect.h has
 * its sizes and configuration) — its raw input, steering-vector and output files, read and
 * written here with every other file of rtstap (stap/io/). */
#ifndef PERFECT_IO_H
#define PERFECT_IO_H

#include "h5io.h"
#include "perfect.h"

#include "rt_hidden.h"
/* Read "<dir>/<size>_app_input.bin" ([channel][pulse][range]) and
 * "<dir>/<size>_app_steering_vectors.bin" ([16][C*3]) into in (shape, iq, steering).
 * The file sizes must match the size exactly; non-finite samples are rejected. */
RT_INTERNAL int stap_perfect_read_inputs(perfect_size s, const char *dir, stap_input *in, stap_error *err);
/* The path of the input (steering = 0) or steering-vector file of size s in dir; returns buf. */
RT_INTERNAL const char *stap_perfect_input_path(perfect_size s, const char *dir, int steering, char *buf,
                               size_t len);

/* Read a raw interleaved float32 complex file of exactly n elements. */
RT_INTERNAL int stap_perfect_read_raw(const char *path, size_t n, stap_cf32 *out, stap_error *err);
/* Write n complex elements as raw interleaved float32, atomically (STAP_WRITE_NEW never
 * overwrites; STAP_WRITE_REPLACE replaces an existing file, h5io.h). */
RT_INTERNAL int stap_perfect_write_raw(const char *path, const stap_cf32 *data, size_t n, stap_write_mode mode,
                      stap_error *err);

#endif
