/* perfect: the STAP application of the PERFECT benchmark suite (PNNL/GTRI) on rtstap's
 * pipeline — its three sizes, its raw input/steering/output files, and its agreement
 * metric. The suite's application is the processing contract with D = 256 (zero-padded,
 * no window), Q = 3, S = R / N_R segments of K = N_R training cells, its 16 steering
 * vectors and no loading. */
#ifndef PERFECT_H
#define PERFECT_H

#include "h5io.h"
#include "stap.h"

typedef enum { PERFECT_SMALL = 0, PERFECT_MEDIUM, PERFECT_LARGE, PERFECT_SIZE_COUNT } perfect_size;

typedef struct perfect_dims {
    const char *name;   /* "small", "medium", "large"        */
    int channels;       /* C                                  */
    int range_cells;    /* R                                  */
    int training_block; /* N_R: cells per training block     */
    int pulses;         /* P = 128                            */
    int doppler_bins;   /* D = 256                            */
    int doppler_order;  /* Q = 3                              */
    int steering;       /* 16 steering vectors                */
} perfect_dims;

int perfect_size_parse(const char *name, perfect_size *out, stap_error *err);
const perfect_dims *perfect_get_dims(perfect_size s);
/* The pipeline configuration of a size (backend AUTO; caller may change it). */
void perfect_config(perfect_size s, stap_config *cfg);

/* Read "<dir>/<size>_app_input.bin" ([channel][pulse][range]) and
 * "<dir>/<size>_app_steering_vectors.bin" ([16][C*3]) into in (shape, iq, steering).
 * The file sizes must match the size exactly; non-finite samples are rejected. */
int perfect_read_inputs(perfect_size s, const char *dir, stap_input *in, stap_error *err);
/* The path of the input (steering = 0) or steering-vector file of size s in dir; returns buf. */
const char *perfect_input_path(perfect_size s, const char *dir, int steering, char *buf,
                               size_t len);

/* Read a raw interleaved float32 complex file of exactly n elements. */
int perfect_read_raw(const char *path, size_t n, stap_cf32 *out, stap_error *err);
/* Write n complex elements as raw interleaved float32, atomically (STAP_WRITE_NEW never
 * overwrites; STAP_WRITE_REPLACE replaces an existing file, h5io.h). */
int perfect_write_raw(const char *path, const stap_cf32 *data, size_t n, stap_write_mode mode,
                      stap_error *err);

/* The suite's agreement metric: 10 log10(sum |ref|^2 / sum |ref - out|^2) in dB. */
double perfect_snr_db(const stap_cf32 *ref, const stap_cf32 *out, size_t n);

#endif
