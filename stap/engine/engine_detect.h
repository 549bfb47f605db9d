/* engine_detect: the adaptive detectors (AMF, Kelly's GLRT, ACE; cfar.h) in the CPU engine —
 * from the QR factors the weight solves leave in the training matrices, the Doppler cube and
 * the steering vectors, in double. Not part of the public API. */
#ifndef STAP_ENGINE_DETECT_H
#define STAP_ENGINE_DETECT_H

#include "cfar.h"
#include "rt_hidden.h"

typedef struct stap_engine stap_engine;
typedef struct stap_engine_detect stap_engine_detect;

/* For e's validated configuration and options (kind adaptive, stap_detector_check passed):
 * the threshold and the work space of `threads` threads. */
RT_INTERNAL int stap_engine_detect_create(const stap_engine *e, int threads, stap_engine_detect **out,
                                          stap_error *err);
/* One CPI: X the Doppler cube (C x D x R), T the factored training matrices (R factor in
 * the upper triangle of each, leading dimension e->M), Y the output (B x D x R, for the
 * detections' power). The detections, sorted by (beam, Doppler bin, range cell), stay valid
 * until the next call; the work space grows only when a CPI detects more than any before. */
RT_INTERNAL int stap_engine_detect_run(const stap_engine *e, stap_engine_detect *d, const stap_cf32 *X,
                                       const stap_cf32 *T, const stap_cf32 *Y,
                                       const stap_detection **out, size_t *count, stap_error *err);
/* The threshold of the requested pfa. */
RT_INTERNAL double stap_engine_detect_threshold(const stap_engine_detect *d);
RT_INTERNAL void stap_engine_detect_destroy(stap_engine_detect *d);

#endif
