/* stream_devices: every GPU of a host in one process (issue 32) — one thread per device,
 * each selecting its device, making its own engine (slots, streams, pinned ring) and
 * streaming its share of the CPIs; the threads start timing together. */
#ifndef STREAM_DEVICES_H
#define STREAM_DEVICES_H

#include "stream_loop.h"

enum { STREAM_MAX_DEVICES = 16 };

typedef struct stream_device {
    int device;            /* CUDA's number                                     */
    char name[128];        /* the GPU's name                                    */
    long long cpis;        /* its share of the timed CPIs                       */
    stream_stats st;       /* its own rate, latency and stages                  */
    char engine[256];      /* stap_engine_describe                              */
} stream_device;

typedef struct stream_devices_job {
    const stap_config *cfg;
    const stap_cf32 *steering;  /* or NULL: the default beams              */
    int nbeams, steering_len;
    const stap_engine_options *eo; /* input: the ring's sample format    */
    const stap_cf32 *ring;      /* ring_n synthesized cubes of cube_len samples (complex64),
                                   stored in each device's pinned ring as eo->input says */
    int ring_n;
    size_t cube_len;
    long long warm, cpis;       /* warm-up per device; timed CPIs in all (dealt evenly) */
} stream_devices_job;

/* Run the job on devices[0..n-1]; per-device results into out[0..n-1]; *wall_s the time from
 * the common start to the last device's end. STAP_OK, or the first device's error (naming
 * the device). */
int stream_devices_run(const stream_devices_job *job, const int *devices, int n,
                       stream_device *out, double *wall_s, stap_error *err);

#endif
