/* result_info: what a file is before it is read as an input — an HDF5 file (an input cube, a
 * result of a run, or another), a SigMF recording, a PERFECT suite input or some other file —
 * and a result file's summary (its /config, its CPIs and detections, whether it stopped),
 * for `rtstap info` and the messages of the commands that read inputs. */
#ifndef RESULT_INFO_H
#define RESULT_INFO_H

#include "rt_hidden.h"
#include "h5io.h"

typedef enum stap_file_kind {
    STAP_FILE_UNREADABLE = 0, /* missing, not a regular file, or unreadable               */
    STAP_FILE_HDF5,           /* an HDF5 file (H5Fis_hdf5)                                */
    STAP_FILE_SIGMF,          /* not HDF5: a SigMF recording's .sigmf-meta or .sigmf-data  */
    STAP_FILE_PERFECT,        /* not HDF5: <size>_app_input.bin or _steering_vectors.bin of
                                 the PERFECT suite (size small, medium or large)           */
    STAP_FILE_RAW             /* not HDF5: any other file (raw samples, perhaps)           */
} stap_file_kind;

/* What path is; for STAP_FILE_PERFECT, its size ("small") into size (len bytes, or NULL).
 * SigMF: the name ends in .sigmf-meta or .sigmf-data, or the file is JSON whose first
 * 64 KiB name a "core:" field. */
RT_INTERNAL stap_file_kind stap_file_kind_of(const char *path, char *size, size_t len);

/* A result of a run (/config with its shape), summarized; the strings "" when absent. */
typedef struct stap_result_info {
    int has_iq;              /* /data/iq exists: an input (then nothing else is read)      */
    int is_result;           /* /config exists (the rest is filled only then)              */
    int channels, pulses, range_gates, doppler_bins, doppler_order, segments, training, beams;
    double loading;
    char algorithm[32], training_window[16], window[32];
    char backend[32], device[160], engine[256], engine_note[256];
    char input[512], input_samples[256], version[64], stopped[256], cfar[128];
    int recording;           /* /weights or /axes/input_cpi has a CPI axis                  */
    long long rows;          /* the CPIs run (1 for one CPI's result)                       */
    long long cpis_unwritten;
    long long cpis_lost;     /* a live stream's CPIs lost (rtstap listen -o), -1: not one   */
    int has_weights, has_output, has_detections;
    long long detections;    /* rows of /detections                                        */
} stap_result_info;

/* Open path (any HDF5 file) and fill ri: has_iq and is_result always, the summary when it is
 * a result. STAP_OK, or the error of opening it or of a malformed /config. */
RT_INTERNAL int stap_result_info_read(const char *path, stap_result_info *ri, stap_error *err);

#endif
