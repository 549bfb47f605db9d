/* mkinput_lib: writers of small schema-v1 input files, valid ones (complex64 and the other
 * recorder formats: integer and real interleaved cubes, integer and {real, imag} compounds,
 * big-endian, scaled) and one per way of being malformed, with the raw HDF5 C API (not stap/io/, so that the tests of the reader
 * do not trust the code under test). Used by tests/tools/mkinput.c and test_h5io.c. */
#ifndef MKINPUT_LIB_H
#define MKINPUT_LIB_H

#include <stddef.h>
#include <stdint.h>

/* Shape of every cube written here (and of the /steering of kind "steering": 3 x C). */
enum { MKINPUT_C = 4, MKINPUT_P = 8, MKINPUT_R = 48, MKINPUT_STEER_B = 3 };

typedef struct mkinput_kind {
    const char *name;
    int valid;            /* 1: the reader must accept it and run process it; 2: the reader
                             accepts it, run refuses it (keyword in its message); 0: the
                             reader refuses it                                           */
    int status;           /* expected stap_status of the reader (0 when valid)             */
    const char *keyword;  /* words its rejection message must contain (NULL when valid)  */
    const char *keyword2; /* a second one, e.g. the dataset or the index, or NULL        */
    const char *what;     /* one line for `mkinput --list`                                */
} mkinput_kind;

extern const mkinput_kind mkinput_kinds[];
extern const int mkinput_nkinds;
const mkinput_kind *mkinput_find(const char *name);

/* The samples of the valid cube for a seed: 2*C*P*R doubles (re, im interleaved,
 * row-major C x P x R), complex normal. Float kinds store them rounded to float32, the
 * float64 kind stores them as they are: a reader must give (float) of each value. */
void mkinput_samples(uint64_t seed, double *ri);
/* The /steering of kind "steering": 2*MKINPUT_STEER_B*C doubles, float32-exact. */
void mkinput_steering(uint64_t seed, double *ri);
/* The metadata of the valid kinds (when the reader must report them). */
#define MKINPUT_PRF_HZ 2000.0
#define MKINPUT_CARRIER_HZ 1.25e9
#define MKINPUT_SAMPLE_RATE_HZ 5000000 /* written as an integer attribute */
#define MKINPUT_SPACING 0.45

/* Write file `kind` at path (replacing it). Returns 0, or -1 with why[] filled. */
int mkinput_write(const char *kind, const char *path, uint64_t seed, char *why, size_t whylen);

/* What a reader must give for a valid kind: 2*C*P*R floats (re, im interleaved, C x P x R),
 * (float)(stored value * scale) — the samples themselves for the complex kinds, their
 * quantized values times the `scale` attribute for the integer forms — and that scale (1
 * when the kind has none). 0, or -1 for a kind that is not valid. */
int mkinput_expected(const char *kind, uint64_t seed, float *ri, double *scale);

/* What a valid kind's samples are, as read, in units of mkinput_samples: the gain (the
 * quantization multiplier times the scale; the scale alone for the real forms; 1 for the
 * complex kinds) and the largest rounding error of a component before the gain (half a
 * quantization step; 0 for the real forms). */
void mkinput_gain(const char *kind, double *gain, double *half_step);
/* The complex64 equivalent of a valid kind: its expected samples as a plain {r, i} float32
 * cube, with the same metadata. 0, or -1 with why[] filled. */
int mkinput_write_complex64(const char *kind, const char *path, uint64_t seed, char *why,
                            size_t whylen);

#endif
