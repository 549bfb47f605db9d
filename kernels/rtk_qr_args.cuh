/* rtk_qr_args.cuh: the QR kernels' argument block and the training gather that reads a
 * matrix's rows straight from the Doppler cube (part of rtk_device.cuh). */
#ifndef RTK_QR_ARGS_CUH
#define RTK_QR_ARGS_CUH

#include <cuda_runtime.h>

#include "rtk.h"

namespace rtk {

/* ---- arguments of the QR kernels ---------------------------------------------------- */
struct QrArgs {
    float2 *A;
    long long stride;
    int lda, m, n, batch;
    int nbeams;              /* fused kernels: beams (0 = QR only)                */
    const float2 *V;         /* nbeams x n, row-major                              */
    float2 *W;               /* batch x nbeams x n                                 */
    rtk_factor_flags *flags; /* bad diagonal and conditioning (rtk.h)              */
    unsigned long long *phase; /* block 0's timestamps, or NULL                    */
    int fused_subst;         /* fused weights by substitutions (A/B runs; stap_la_tuning.fused_subst) */
    const float2 *gX;        /* gathered input (rtk_gather), or NULL: A is read    */
    const int *gcells;       /* segments x training range cells (rtk_gather.cells)  */
    int gC, gQ, gD, gR, gS, gK;
    int gW;                  /* bins per wrap group (rtk_gather.wrap; = gD when 0) */
    float gload;
    float2 *R;               /* fused kernels: each factor's R out (upper n x n of
                                R + k*rstride, leading dimension n), or NULL       */
    long long rstride;
    const int *list;         /* the generic kernel (qr_generic.cu) only: factor A_k for
                                k = list[1 .. list[0]] (block b < list[0] takes
                                list[1 + b]), or NULL: block b takes A_b            */
};

/* Where column col = c*Q + q of a training matrix of centre bin base + d starts in the
 * Doppler cube X[bins][channels][range] (add the row's range cell): tap bin base +
 * (d - (Q-1)/2 + q) mod W (contract step 2), one wrap at most since Q <= W. Bins come in
 * groups of W that wrap on their own (rtk_gather.wrap: JDL's beams); base = the group's
 * first bin, 0 < d < W. */
__device__ __forceinline__ size_t gather_col_offset(int C, int Q, int W, size_t R, int base,
                                                    int d, int col)
{
    const int c = Q == 1 ? col : col / Q, q = col - c * Q;
    int bin = d - (Q - 1) / 2 + q;
    bin += bin < 0 ? W : 0;
    bin -= bin >= W ? W : 0;
    return ((size_t)(base + bin) * C + c) * R;
}

/* Entry (row, col) of batch item k of the gathered training matrix (rtk.h, rtk_gather);
 * row < m, col < n. */
__device__ __forceinline__ float2 gather_elem(const float2 *X, int C, int Q, int W, int R, int S,
                                              const int *cells, int K, float load, int k, int row,
                                              int col)
{
    if (row >= K) return make_float2(row - K == col ? load : 0.f, 0.f);
    const int d = k / S, s = k - d * S, dl = d % W;
    const int r = __ldg(cells + (size_t)s * K + row);
    const float2 x = X[gather_col_offset(C, Q, W, (size_t)R, d - dl, dl, col) + r];
    return make_float2(x.x, -x.y);
}

/* Batch item k's gathered matrix (m x n, column-major, leading dimension m) into shared
 * memory by the NT threads of its matrix, t = 0..NT-1. Thread t takes one row (one range
 * cell: its table entry is read once) and the columns cg, cg + step, ... of it, where the
 * NT threads cover the m rows step = NT / m times over (or rows t, t + NT, ... when
 * NT < m). Loads come in groups of GU with their addresses computed first, so that GU
 * of them are in flight per thread: a load-then-store loop has one, and its latency
 * (L2, ~600 cycles) times the m*n/NT elements a thread gathers showed as ~20 % of the
 * fused kernel's time at 240x66 (H100, docs/kernels/design.md). Consecutive threads take consecutive
 * rows: the cube's reads are coalesced along range and the stores are conflict-free. */
template <int NT>
__device__ __forceinline__ void gather_to_smem(const QrArgs &a, int k, int m, int n, int t,
                                               float2 *stage)
{
    constexpr int GU = 8;
    const int K = a.gK;
    const int d = k / a.gS, s = k - d * a.gS, dl = d % a.gW, base = d - dl;
    const bool wide = NT >= m; /* every row at once, step column groups of them */
    const int step = wide ? NT / m : 1, cg = wide ? t / m : 0;
    if (cg >= step) return;
    for (int row = wide ? t % m : t; row < m; row += NT) {
        if (row >= K) { /* loading rows: sqrt(K delta) I */
            for (int col = cg; col < n; col += step)
                stage[(size_t)col * m + row] = make_float2(row - K == col ? a.gload : 0.f, 0.f);
            continue;
        }
        const float2 *xr = a.gX + __ldg(a.gcells + (size_t)s * K + row);
        for (int col = cg; col < n; col += GU * step) {
            float2 v[GU];
#pragma unroll
            for (int u = 0; u < GU; u++) {
                const int cc = col + u * step;
                v[u] = cc < n ? xr[gather_col_offset(a.gC, a.gQ, a.gW, (size_t)a.gR, base, dl, cc)]
                              : c0();
            }
#pragma unroll
            for (int u = 0; u < GU; u++) {
                const int cc = col + u * step;
                if (cc < n) stage[(size_t)cc * m + row] = make_float2(v[u].x, -v[u].y);
            }
        }
    }
}

} // namespace rtk

#endif
