/* cfar_gpu: the CA/OS CFAR detector of stap/cfar.h on the GPU (kernels/cfar.cu), for
 * outputs that are already large (B x D x R cells). Same detector, same edge rule and
 * the same arithmetic as stap_cfar_detect (powers and window sums in double, in the
 * same order), so the detection lists are identical. Only in builds with CUDA: the
 * caller checks la_backend_available(LA_BACKEND_GPU) first. */
#ifndef CFAR_GPU_H
#define CFAR_GPU_H

#ifdef __cplusplus
#include "rtk.h" /* names cf32 / cf64 for C++ */
#endif
#include "cfar.h"

#ifdef __cplusplus
extern "C" {
#endif

/* y_host: B x D x R (row-major, host memory). Copies y up, tests one cell per thread,
 * compacts the detections on the device, copies them back and sorts them by (beam,
 * Doppler bin, range cell) on the host. *out is malloc'd (free with free()), NULL when
 * *count is 0. RT_EDEVICE on a CUDA error (message names the call). */
int rtk_cfar_detect_host(const stap_cfar_config *c, const cf32 *y_host, int B, int D, int R,
                         stap_detection **out, size_t *count, rt_error *err);

#ifdef __cplusplus
}
#endif

#endif
