/* cholqr1_gather.cu: the one-pass cholqr fused with the training gather and the MVDR weights
 * (issue 47): one block of CQ_THREADS a batch item k reads T_k's rows straight from the
 * Doppler cube (rtk_gather, as rtk_training_launch materializes them), forms G = T^H T and R =
 * chol(G) in FP64 with the code of cholqr1_kernel (kernels/cholqr1.cuh: the same bits of R),
 * applies its guard, and solves the beams' weights with R on chip. An item the guard refuses
 * is factored by Householder in the same block (T_k gathered again into shared memory, the
 * generic kernel's code: kernels/qr_mem.cuh, the same bits as rtk_qr_guard_launch's R) and
 * solved the same way; it is still appended to the fail list, and counted in flags->guarded. */
#include "cholqr1.cuh"
#include "qr_mem.cuh"

namespace rtk {

/* the blocked solve's diagonal block and beams a pass, as the fused Householder kernels' */
constexpr int CQG_BS = 8, CQG_NBC = 16;
constexpr size_t CQG_STATIC = 256; /* the kernel's static shared memory, at most (bytes) */
/* R's packed elements a thread, n <= CQ1_MAX_N (the guard's restaging through registers) */
constexpr int CQG_RPT = (CQ1_MAX_N * (CQ1_MAX_N + 1) / 2 + CQ_THREADS - 1) / CQ_THREADS;

/* The guard's Householder: T_k (m x n, through elem) into M (shared memory, column-major, ld
 * m), factored in place by the whole block (mem_factor), then R restaged row-major into Rs
 * (ld; Rs may overlap M: R goes through registers) and, when Rk, column-major into Rk. */
template <class Elem>
__device__ __forceinline__ void cqg_householder(const Elem &elem, int m, int n, float2 *M, float2 *Rs, int ld,
                                                float2 *Rk, float2 *taub)
{
    const int tid = threadIdx.x, np = n * (n + 1) / 2;
    for (int idx = tid; idx < m * n; idx += CQ_THREADS) {
        const int col = idx / m, row = idx - col * m;
        M[idx] = elem(col, row);
    }
    __syncthreads();
    mem_factor(M, (size_t)m, m, n, taub);
    __syncthreads();
    float2 r[CQG_RPT];
#pragma unroll
    for (int u = 0; u < CQG_RPT; u++) {
        const int e = tid + CQ_THREADS * u;
        int i = 0, j = 0;
        if (e < np) cq1_unpack(e, i, j);
        r[u] = e < np ? M[(size_t)j * m + i] : make_float2(0.f, 0.f);
    }
    __syncthreads();
#pragma unroll
    for (int u = 0; u < CQG_RPT; u++) {
        const int e = tid + CQ_THREADS * u;
        if (e >= np) break;
        int i, j;
        cq1_unpack(e, i, j);
        Rs[i * ld + j] = r[u];
        if (Rk) Rk[(size_t)j * n + i] = r[u];
    }
}

/* the weights of item k from the float R staged row-major in shared memory (ld = n | 1):
 * subst, as weights_kernel solves them (kernels/weights.cu: the same solver shape,
 * SolveShape<NC>, so the same bits), else by blocked substitutions with the whole block
 * (solve_beams_blocked, as the fused Householder kernels; R overwritten, scratch after dinv) */
template <int NC>
__device__ __forceinline__ void cqg_solve(float2 *Rs, int ld, const float2 *dinv, int n, int nbeams,
                                          const float2 *V, float2 *Wk, int subst, float2 *scratch)
{
    using SS = SolveShape<NC>;
    if (subst)
        solve_beams_warp<SS::RR, SS::NB>(Rs, ld, 1, dinv, n, nbeams, V, Wk, threadIdx.x >> 5, CQ_WARPS);
    else
        solve_beams_blocked<CQG_BS, CQG_NBC, CQ_THREADS, NC>(Rs, ld, dinv, n, nbeams, V, Wk, threadIdx.x, scratch);
}

/* The kernel's dynamic shared memory (the layout's comment below): where the columns' offsets
 * start (past the Gram's layout, the staged R with the solve's scratch, and the guard's T_k),
 * and the whole */
__host__ __device__ inline size_t cqg_coff(int m, int n)
{
    const int nc = n <= 32 ? 32 : n <= 64 ? 64 : 96;
    const size_t lay = cq1_layout(n, 1).end,
                 rs = ((size_t)n * (n | 1) + n + BlockedSolve<CQG_BS, CQG_NBC>::scratch_f2(nc)) * sizeof(float2),
                 mat = (size_t)m * n * sizeof(float2);
    const size_t a = lay > rs ? lay : rs, b = a > mat ? a : mat;
    return (b + 15) & ~(size_t)15;
}
__host__ __device__ inline size_t cqg_smem(int m, int n) { return cqg_coff(m, n) + (size_t)n * sizeof(long long); }

/* Shared memory: cholqr1's layout (G3 = 1), then the training columns' offsets in the cube
 * (n long longs at cqg_coff, past everything else: the gather's index arithmetic once a
 * block, not once an element, and read again by the guard's gather); after the
 * Cholesky the chunk planes (4 ncp CQ1_LDT doubles, at offset 0) hold the float R (n rows of
 * ld = n | 1): 8 n (n | 1) bytes <= 1152 ncp for n <= 142 (n <= CQ1_MAX_N here), so staging R
 * never overwrites G; then 1 / R_ii and the blocked solve's scratch (over G, read by then). The
 * guard's Householder takes T_k whole from offset 0 (m n float2: cqg_smem). */
template <int PAD>
__global__ void __launch_bounds__(CQ_THREADS, 1)
    cholqr1_gather_kernel(const rtk_gather g, int m, int n, int nbeams, const float2 *V, float2 *W,
                          rtk_factor_flags *flags, float min_ratio, int *fail_list, float2 *Rout, int subst)
{
    extern __shared__ __align__(16) unsigned char sm1[];
    const Cq1Layout L = cq1_layout(n, 1);
    double *Xr = (double *)(sm1 + L.xr), *Xi = (double *)(sm1 + L.xi);
    double2 *Gp = (double2 *)(sm1 + L.gp);
    double *rin = (double *)(sm1 + L.rin);
    long long *coff = (long long *)(sm1 + cqg_coff(m, n));
    __shared__ double ratio_s;
    __shared__ int bad_s, flag_s;
    __shared__ float2 taub[2];
    const int tid = threadIdx.x, k = blockIdx.x;
    if (tid == 0) bad_s = flag_s = 0;
    /* T_k (rtk.h, rtk_gather): row t < K conj(X[tap bin][c][cells[s K + t]]), column c Q + q;
     * loading row K + i: load on the diagonal */
    const float2 *X = (const float2 *)g.X;
    const int K = g.training, Wb = g.wrap > 0 ? g.wrap : g.bins;
    const int d = k / g.segments, s = k - d * g.segments, dl = d % Wb;
    const int *cells = g.cells + (size_t)s * K;
    const float load = g.load;
    for (int col = tid; col < n; col += CQ_THREADS)
        coff[col] = (long long)gather_col_offset(g.channels, g.order, Wb, (size_t)g.range, d - dl, dl, col);
    __syncthreads();
    const auto elem = [&](int col, int t) {
        if (t >= K) return make_float2(t - K == col ? load : 0.f, 0.f);
        const float2 x = X[coff[col] + __ldg(cells + t)];
        return make_float2(x.x, -x.y);
    };
    cq1_gram<1, PAD>(m, n, elem, sm1, L);
    cq1_chol_blocked(Gp, n, L.ncp, Xr, Xi, rin, &bad_s);
    /* R rounded to float (the bits cholqr1_kernel writes), row-major into the free planes;
     * kept (Rout) column-major n x n. Refused by the guard (block-uniform): Householder's R. */
    const int ld = n | 1, np = n * (n + 1) / 2;
    float2 *Rs = (float2 *)sm1, *dinv = Rs + (size_t)n * ld, *scratch = dinv + n;
    float2 *Rk = Rout ? Rout + (size_t)k * n * n : nullptr;
    if (cq1_guard(Gp, n, min_ratio, fail_list, k, &bad_s, &ratio_s)) {
        for (int e = tid; e < np; e += CQ_THREADS) {
            int i, j;
            cq1_unpack(e, i, j);
            const float2 r = cq1_rounded(Gp[e], i, j);
            Rs[i * ld + j] = r;
            if (Rk) Rk[(size_t)j * n + i] = r;
        }
    } else {
        cqg_householder(elem, m, n, (float2 *)sm1, Rs, ld, Rk, taub);
        if (tid == 0) atomicAdd(&flags->guarded, 1);
    }
    __syncthreads();
    for (int i = tid; i < n; i += CQ_THREADS) { /* weights_kernel's check and 1 / R_ii */
        const float2 dd = Rs[i * ld + i];
        if (!cfinite_nonzero(dd)) flag_s = 1;
        dinv[i] = crecip(dd);
    }
    __syncthreads();
    if (flag_s) {
        if (tid == 0) atomicMin(&flags->bad_item, k);
        return;
    }
    if (tid < 32) diag_ratio_warp([&](int i) { return Rs[i * ld + i]; }, n, k, flags, tid);
    float2 *Wk = W + (size_t)k * nbeams * n;
    if (n <= 32) cqg_solve<32>(Rs, ld, dinv, n, nbeams, V, Wk, subst, scratch);
    else if (n <= 64) cqg_solve<64>(Rs, ld, dinv, n, nbeams, V, Wk, subst, scratch);
    else cqg_solve<96>(Rs, ld, dinv, n, nbeams, V, Wk, subst, scratch);
}

} // namespace rtk

using namespace rtk;

extern "C" int rtk_cholqr1_gather_fits(int m, int n, int smem_limit)
{
    return m >= n && n >= 1 && n <= CQ1_MAX_N && cqg_smem(m, n) + CQG_STATIC <= (size_t)smem_limit;
}

extern "C" int rtk_cholqr1_gather_weights_launch(const rtk_gather *g, int m, int n, int batch, int nbeams,
                                                 const void *V, void *W, rtk_factor_flags *flags, float min_ratio,
                                                 int *fail_list, void *R, int subst, void *stream)
{
    if (batch <= 0) return cudaSuccess;
    if (!g || !g->cells || !g->X || m < n || n < 1 || n > CQ1_MAX_N || nbeams < 1 || g->segments < 1)
        return (int)cudaErrorInvalidValue;
    auto kern = cholqr1_gather_kernel<RTK_CQ1_PAD>;
    const size_t smem = cqg_smem(m, n);
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return (int)e;
    kern<<<batch, CQ_THREADS, smem, (cudaStream_t)stream>>>(*g, m, n, nbeams, (const float2 *)V, (float2 *)W, flags,
                                                            min_ratio, fail_list, (float2 *)R, subst);
    return (int)cudaGetLastError();
}
