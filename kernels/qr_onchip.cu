/* qr_onchip.cu: register-resident QR with one matrix per block using most of an SM's
 * register file (240x66: 127 KB of matrix in 352 threads' registers; 192x96: 147 KB).
 * See qr_reg.cuh for the algorithm and docs/kernels/design.md for the performance model. */
#include "qr_reg.cuh"
#include "qr_variants.cuh"

RTK_ONCHIP_VARIANTS(RTK_DEFINE_REG)
