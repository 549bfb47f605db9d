/* rtk_device.cuh: the device helpers of the rtk kernels, split by role —
 *   rtk_math.cuh     complex float2 arithmetic, the factor conditioning indicator, lane-group
 *                    reductions, LAPACK's clarfg;
 *   rtk_sync.cuh     mbarriers, thread-block clusters, the global timer;
 *   rtk_qr_args.cuh  the QR kernels' argument block and the training gather;
 *   rtk_solve.cuh    the triangular MVDR solvers;
 * and the launcher type of the QR kernel families. A kernel file includes this header or
 * only the parts it uses. Two more, included only where used:
 *   rtk_mma.cuh        TF32 splits and mma.sync with 3xTF32 (the apply; the round-3 QR);
 *   rtk_cfar_line.cuh  the CFAR arithmetic and one line's detection (cfar.cu, the fused
 *                      apply and detector). */
#ifndef RTK_DEVICE_CUH
#define RTK_DEVICE_CUH

#include <cuda_runtime.h>

#include "rtk.h"
#include "rtk_math.cuh"
#include "rtk_qr_args.cuh"
#include "rtk_solve.cuh"
#include "rtk_sync.cuh"

/* Launchers of the kernel families (qr_small.cu, qr_onchip.cu, qr_generic.cu): launch
 * `batch` matrices with the compile-time shape of the table row they are bound to. */
typedef cudaError_t (*rtk_qr_launcher)(const rtk::QrArgs &args, cudaStream_t stream);

#endif
