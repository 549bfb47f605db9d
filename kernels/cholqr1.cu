/* cholqr1.cu: the one-pass mixed-precision CholeskyQR on the GPU (--qr cholqr; issue 47),
 * reached through rtk_cholqr2_launch with passes = 1 (kernels/cholqr.cu has CholeskyQR2 and
 * the dispatch). */
#include "cholqr1.cuh"
#include "rtk_mma.cuh"
#ifdef RTK_CQ1_ENVSEL /* experiments only: the variant <PAD><G3><CH> as the includer chooses it */
int cq1_variant(int dflt); /* tests/experiments/cq_phases.cu: RTK_CQ1 from its environment */
#endif

namespace rtk {

/* the pieces both cholqr kernels share: kernels/cholqr1.cuh (constants, layout, Gram, Cholesky, guard) */

template <int G3, int CH, int PAD>
__global__ void __launch_bounds__(CQ_THREADS, 1) cholqr1_kernel(int m, int n, float2 *A, int lda, long long stride,
                                                             float min_ratio, int *fail_list)
{
    extern __shared__ __align__(16) unsigned char sm1[];
    const Cq1Layout L = cq1_layout(n, G3);
    double *Xr = (double *)(sm1 + L.xr), *Xi = (double *)(sm1 + L.xi);
    double2 *Gp = (double2 *)(sm1 + L.gp), *rowb = (double2 *)(sm1 + L.row);
    double *piv = (double *)(sm1 + L.piv), *rin = (double *)(sm1 + L.rin);
    __shared__ double ratio_s;
    __shared__ int bad_s;
    const int tid = threadIdx.x, lane = tid & 31;
    const int k = blockIdx.x;
    float2 *Ak = A + (long long)k * stride;
    const float2 *Tk = Ak; /* read in full before R is written */
    if (tid == 0) bad_s = 0;
    CQ_STAMP(0);
    cq1_gram<G3, PAD>(m, n, [&](int col, int t) { return Tk[(size_t)col * lda + t]; }, sm1, L);
    CQ_STAMP(2);
    if (CH) {
        cq1_chol_blocked(Gp, n, L.ncp, Xr, Xi, rin, &bad_s);
        CQ_STAMP(3);
        cq1_finish(Gp, n, Ak, lda, min_ratio, fail_list, k, &bad_s, &ratio_s);
        CQ_STAMP(4);
        return;
    }

    /* the Cholesky: thread tid holds the packed elements e = tid + CQ_THREADS r */
    const int np = n * (n + 1) / 2;
    double2 val[CQ1_NE];
    short ei[CQ1_NE], ej[CQ1_NE];
#pragma unroll
    for (int r = 0; r < CQ1_NE; r++) {
        const int e = tid + CQ_THREADS * r;
        ei[r] = ej[r] = -1;
        val[r] = make_double2(0.0, 0.0);
        if (e >= np) continue;
        int j = (int)((sqrt(8.0 * e + 1.0) - 1.0) * 0.5);
        if ((j + 1) * (j + 2) / 2 <= e) j++;
        else if (j * (j + 1) / 2 > e) j--;
        ei[r] = (short)(e - j * (j + 1) / 2);
        ej[r] = (short)j;
        val[r] = Gp[e];
        if (ei[r] == 0) rowb[j] = val[r]; /* row 0 of S = G */
    }
    __syncthreads();
    for (int kq = 0; kq + 1 < n; kq++) {
        const double2 *row = rowb + (kq & 1) * n;
        double2 *nxt = rowb + ((kq + 1) & 1) * n;
        const double inv = __drcp_rn(row[kq].x); /* a pivot not > 0: the guard below */
#pragma unroll
        for (int r = 0; r < CQ1_NE; r++) {
            const int i = ei[r], j = ej[r];
            if (i > kq) { /* ei < 0 (none): never */
                const double2 a = row[i], b = row[j];
                const double pr = fma(a.y, b.y, a.x * b.x), pi = fma(-a.y, b.x, a.x * b.y); /* conj(a) b */
                val[r].x = fma(-pr, inv, val[r].x);
                val[r].y = fma(-pi, inv, val[r].y);
                if (i == kq + 1) nxt[j] = val[r];
            }
        }
        __syncthreads();
    }
    CQ_STAMP(3);
    /* the pivots S_ii: held by the owners of (i, i) */
#pragma unroll
    for (int r = 0; r < CQ1_NE; r++)
        if (ei[r] >= 0 && ei[r] == ej[r]) piv[ei[r]] = val[r].x;
    __syncthreads();
    if (tid < 32) {
        double lo = INFINITY, hi = 0.0;
        int bad = 0;
        for (int i = lane; i < n; i += 32) {
            const double d = piv[i];
            bad |= !(d > 0.0) || !isfinite(d);
            const double rr = sqrt(d);
            rin[i] = 1.0 / rr;
            lo = fmin(lo, rr);
            hi = fmax(hi, rr);
        }
        for (int o = 16; o; o >>= 1) {
            lo = fmin(lo, __shfl_xor_sync(0xffffffffu, lo, o));
            hi = fmax(hi, __shfl_xor_sync(0xffffffffu, hi, o));
            bad |= __shfl_xor_sync(0xffffffffu, bad, o);
        }
        if (lane == 0) {
            bad_s = bad;
            ratio_s = hi > 0.0 && isfinite(hi) ? lo / hi : 0.0;
        }
    }
    __syncthreads();
    /* R_ij = S_ij / sqrt(S_ii), rounded to float; every one finite */
    float2 rv[CQ1_NE];
    int notfin = 0;
#pragma unroll
    for (int r = 0; r < CQ1_NE; r++) {
        rv[r] = make_float2(0.f, 0.f);
        const int i = ei[r], j = ej[r];
        if (i < 0) continue;
        const double s = rin[i];
        rv[r] = i == j ? make_float2((float)(val[r].x * s), 0.f) : make_float2((float)(val[r].x * s), (float)(val[r].y * s));
        notfin |= !isfinite(rv[r].x) || !isfinite(rv[r].y);
    }
    notfin = __syncthreads_or(notfin);
    const bool ok = !bad_s && !notfin && ratio_s >= (double)min_ratio;
    if (!ok) {
        if (tid == 0) fail_list[1 + atomicAdd(fail_list, 1)] = k;
        return;
    }
#pragma unroll
    for (int r = 0; r < CQ1_NE; r++)
        if (ei[r] >= 0) Ak[(size_t)ej[r] * lda + ei[r]] = rv[r];
    CQ_STAMP(4);
}

} // namespace rtk

using namespace rtk;

template <int G3, int CH, int PAD>
static int cq1_launch(int m, int n, int batch, void *A, int lda, long long stride, float min_ratio, int *fail_list,
                      void *stream)
{
    const size_t smem1 = cq1_layout(n, G3).end;
    cudaError_t e = cudaFuncSetAttribute(cholqr1_kernel<G3, CH, PAD>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)smem1);
    if (e != cudaSuccess) return e;
    cholqr1_kernel<G3, CH, PAD><<<batch, CQ_THREADS, smem1, (cudaStream_t)stream>>>(m, n, (float2 *)A, lda, stride,
                                                                               min_ratio, fail_list);
    return cudaGetLastError();
}

extern "C" int rtk_cholqr1_fits(int m, int n, int smem_limit)
{
    return m >= n && n >= 1 && n <= CQ1_MAX_N && cq1_layout(n, 1).end <= (size_t)smem_limit;
}

extern "C" int rtk_cholqr1_launch(int m, int n, int batch, void *A, int lda, long long stride, float min_ratio,
                                  int *fail_list, void *stream)
{
    if (batch <= 0) return cudaSuccess;
#ifdef RTK_CQ1_ENVSEL /* cq_phases and the variants' device runs */
    switch (cq1_variant(RTK_CQ1_PAD * 100 + RTK_CQ1_G3 * 10 + RTK_CQ1_CH)) {
    case 0: return cq1_launch<0, 0, 0>(m, n, batch, A, lda, stride, min_ratio, fail_list, stream);
    case 1: return cq1_launch<0, 1, 0>(m, n, batch, A, lda, stride, min_ratio, fail_list, stream);
    case 10: return cq1_launch<1, 0, 0>(m, n, batch, A, lda, stride, min_ratio, fail_list, stream);
    case 11: return cq1_launch<1, 1, 0>(m, n, batch, A, lda, stride, min_ratio, fail_list, stream);
    default: return cq1_launch<1, 1, 1>(m, n, batch, A, lda, stride, min_ratio, fail_list, stream);
    }
#else
    return cq1_launch<RTK_CQ1_G3, RTK_CQ1_CH, RTK_CQ1_PAD>(m, n, batch, A, lda, stride, min_ratio, fail_list,
                                                           stream);
#endif
}
