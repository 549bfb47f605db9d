/* fuzz_h5: the HDF5 harnesses, one executable per FUZZ_H5_MODE (tests/fuzz/CMakeLists.txt):
 *   fuzz_h5_file  the bytes are an input file (mutating HDF5 byte by byte mostly exercises
 *                 libhdf5's own decoder: README.md says what that found in Debian's HDF5);
 *   fuzz_h5_cube  structure-aware: the bytes choose a file written with the HDF5 API
 *                 (h5_schema.c), first /data/iq — presence, links, element type, rank,
 *                 shape, layout, filters, fill values, samples;
 *   fuzz_h5_meta  the same, first /steering and the /radar and /array attributes.
 * Each file is read by stap_input_read and by stap_recording_open with reads of its first
 * and last CPI, and what they return is checked (fzh5_read_all). */
#include <stddef.h>
#include <stdint.h>

#include "h5_schema.h"

#define FUZZ_H5_FILE 0
#define FUZZ_H5_CUBE 1
#define FUZZ_H5_META 2
#ifndef FUZZ_H5_MODE
#error "FUZZ_H5_MODE must be FUZZ_H5_FILE, FUZZ_H5_CUBE or FUZZ_H5_META"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fzh5_setup();
    fz_path("input.h5", path, sizeof path);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#if FUZZ_H5_MODE == FUZZ_H5_FILE
    fz_write_file(path, data, size);
#else
    fz_bytes b = {data, size};
    fzh5_build(path, &b, FUZZ_H5_MODE == FUZZ_H5_CUBE ? FZH5_CUBE_FIRST : FZH5_META_FIRST);
#endif
    fzh5_read_all(path);
    return 0;
}
