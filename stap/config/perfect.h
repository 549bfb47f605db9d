/* perfect: the STAP application of the PERFECT benchmark suite (PNNL/GTRI) on rtstap's
 * pipeline — its three sizes, their configuration and its agreement metric (its raw
 * input, steering and output files: stap/io/perfect_io.h). The suite's application is the
 * processing contract with D = 256 (zero-padded, no window), Q = 3, S = R / N_R segments of
 * K = N_R training cells, its 16 steering vectors and no loading. */
#ifndef PERFECT_H
#define PERFECT_H

#include "rt_hidden.h"
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

RT_INTERNAL int stap_perfect_size_parse(const char *name, perfect_size *out, stap_error *err);
RT_INTERNAL const perfect_dims *stap_perfect_get_dims(perfect_size s);
/* The pipeline configuration of a size (backend AUTO; caller may change it). */
RT_INTERNAL void stap_perfect_config(perfect_size s, stap_config *cfg);

/* The suite's agreement metric: 10 log10(sum |ref|^2 / sum |ref - out|^2) in dB. */
RT_INTERNAL double stap_perfect_snr_db(const stap_cf32 *ref, const stap_cf32 *out, size_t n);

#endif
