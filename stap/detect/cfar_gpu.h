/* cfar_gpu: the GPU detector's launches (stap/detect/cfar_gpu.cu, CUDA builds only), shared
 * by stap_cfar_detect_gpu and the GPU engine (engine_gpu.cu). Not part of the public API. */
#ifndef STAP_CFAR_GPU_H
#define STAP_CFAR_GPU_H

#include "cfar.h"
#include "rtk_pipeline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueue the detector c (a valid kind other than NONE) on y, B*D lines of R cells on the
 * device, on stream: the per-line prefix sums when the kind uses them and make_prefix is
 * set (a re-test of the same output passes 0), then the test kernel with the device
 * tables alpha and rank (stap_cfar_table_len entries) — or, for CA, GO and SO where a line
 * fits, the one-pass line kernel (each power read once). two_pass = 1: the prefix and test
 * passes even there; line_threads: the line kernel's threads a line (0 = 128; 32, 64, 128),
 * for comparisons (stap_engine_tuning). Returns a cudaError_t value. */
int stap_cfar_enqueue(const stap_cfar_config *c, int B, int D, int R, const void *y,
                      double *prefix, int make_prefix, const double *alpha, const int *rank,
                      rtk_cfar_hit *hits, unsigned int capacity, rtk_cpi_status *status,
                      int two_pass, int line_threads, void *stream);

#ifdef __cplusplus
}
#endif

#endif
