/* h5_schema: the HDF5 side of the harnesses — a structure-aware writer that turns the
 * fuzzer's bytes into a real HDF5 file shaped like (or unlike) rtstap's schema v1, and the
 * checks of rtstap's readers on any file. */
#ifndef H5_SCHEMA_H
#define H5_SCHEMA_H

#include "fuzz_util.h"

/* Values written only into the decoy file that external links, external storage and
 * virtual datasets of the built files point at: a reader that returns one of them read
 * another file. (A FIFO beside it catches readers that open other files: they block.) */
#define FZ_DECOY_VALUE 777777.0

/* Make the decoy file and the FIFO in the scratch directory (once). */
void fzh5_setup(void);

/* The order in which the bytes choose the parts of a file: the cube first, or /steering
 * and the attributes first (what a harness fuzzes hardest). */
typedef enum { FZH5_CUBE_FIRST, FZH5_META_FIRST } fzh5_focus;

/* Write `path` (replaced) from the choices in b. All-zero choices give a valid file:
 * /data/iq 2 x 3 x 4 complex64, /steering 2 x 2, /radar and /array attributes. */
void fzh5_build(const char *path, fz_bytes *b, fzh5_focus focus);

/* Run rtstap's readers on path (stap_input_read; stap_recording_open and reads of its
 * first and last CPI) and check what they return: a status with a message, no HDF5
 * identifier left open, and on success shapes, finite samples and metadata as
 * documented, nothing from the decoy. */
void fzh5_read_all(const char *path);

#endif
