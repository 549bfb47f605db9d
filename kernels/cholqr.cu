/* cholqr.cu: batched CholeskyQR2 (R only) on the GPU, issue 47, the first version: FP32 on
 * the CUDA cores, one block of 512 threads a matrix, the whole matrix in shared memory.
 *
 *     G1 = T^H T,  R1 = chol(G1),  Q1 = T R1^-1,  G2 = Q1^H Q1,  R2 = chol(G2),  R = R2 R1
 *
 * (linalg/cholqr_cpu.c has the CPU's copy and the references.) Every step is a sweep of the
 * block over shared memory:
 * - the Gram products: 4 x 4 tiles of the upper triangle, the rows split into S interleaved
 *   slices so that about every thread works; the slices' partial sums are added in slice
 *   order (deterministic: no atomics);
 * - the Cholesky factorizations, right-looking in place, one barrier a column: the
 *   trailing update uses row k unscaled (G_ij -= conj(G_ki) G_kj / G_kk), row k is scaled
 *   by 1/sqrt(G_kk) after the loop; a thread a column;
 * - Q1 = T R1^-1 the same way: column j updates the later ones with R1_jc / R1_jj, and the
 *   columns are divided by R1_jj after the loop;
 * - G2 takes Q1's place (m >= n), so shared memory holds m n + n^2 complex values and n
 *   floats: 240 x 66 (hard) 162 KB, 192 x 96 (medium) 216 KB;
 * - R = R2 R1, written to the upper triangle of A (real positive diagonal). Everything
 *   else of A is left as it was.
 * A matrix whose Cholesky breaks down (a pivot not > 0 or not finite) or whose R has
 * min|R_ii| / max|R_ii| < min_ratio is not written: its index goes to fail_list (the
 * caller refactors it by Householder, linalg/gpu_dispatch.cu). */
#include "rtk_device.cuh"

namespace rtk {

constexpr int CQ_THREADS = 512; /* 128 registers a thread: the 4 x 4 tile of the Gram in registers */

/* G (upper triangle, ld ldg) = X^H X for X m x n (ld ldx), by 4 x 4 tiles over S slices */
__device__ void cq_gram(const float2 *X, int ldx, int m, int n, float2 *G, int ldg)
{
    const int nt = (n + 3) >> 2, ntiles = nt * (nt + 1) / 2;
    int S = CQ_THREADS / ntiles;
    if (S > (m + 7) / 8) S = (m + 7) / 8;
    if (S < 1) S = 1;
    for (int base = 0; base < ntiles * S; base += CQ_THREADS) {
        const int w = base + threadIdx.x;
        const bool active = w < ntiles * S;
        int s = 0, bi = 0, bj = 0;
        float2 acc[4][4];
#pragma unroll
        for (int c = 0; c < 4; c++)
#pragma unroll
            for (int d = 0; d < 4; d++) acc[c][d] = c0();
        if (active) {
            int tile = w / S;
            s = w - tile * S;
            while (tile >= nt - bi) { /* tiles by rows of the upper triangle: (bi, bi..nt-1) */
                tile -= nt - bi;
                bi++;
            }
            bj = bi + tile;
            const float2 *xi[4], *xj[4];
            bool vi[4], vj[4];
#pragma unroll
            for (int c = 0; c < 4; c++) {
                vi[c] = 4 * bi + c < n;
                vj[c] = 4 * bj + c < n;
                xi[c] = X + (size_t)(vi[c] ? 4 * bi + c : 0) * ldx;
                xj[c] = X + (size_t)(vj[c] ? 4 * bj + c : 0) * ldx;
            }
            for (int t = s; t < m; t += S) {
                float2 a[4], b[4];
#pragma unroll
                for (int c = 0; c < 4; c++) {
                    a[c] = vi[c] ? xi[c][t] : c0();
                    b[c] = vj[c] ? xj[c][t] : c0();
                }
#pragma unroll
                for (int c = 0; c < 4; c++)
#pragma unroll
                    for (int d = 0; d < 4; d++) acc[c][d] = cjfma(a[c], b[d], acc[c][d]);
            }
        }
        __syncthreads(); /* X read in full: G may take its place (G2 over Q1) */
        for (int s2 = 0; s2 < S; s2++) { /* the slices' sums in slice order */
            if (active && s == s2) {
#pragma unroll
                for (int c = 0; c < 4; c++)
#pragma unroll
                    for (int d = 0; d < 4; d++) {
                        const int i = 4 * bi + c, j = 4 * bj + d;
                        if (i < n && j < n && i <= j) {
                            float2 *g = G + (size_t)j * ldg + i;
                            *g = s2 == 0 ? acc[c][d] : make_float2(g->x + acc[c][d].x, g->y + acc[c][d].y);
                        }
                    }
            }
            __syncthreads();
        }
    }
}

/* In place: G (upper, ld ldg) = R^H R, R upper with a real positive diagonal. Returns false
 * (every thread alike) when a pivot is not > 0 or not finite. diag: n floats of scratch.
 * Step k: thread (ti, tj) updates column j = k + 1 + tj, rows k + 1 + ti, + CQ_RSTEP, ...
 * (no division; a warp's columns at an odd ld: no bank conflicts). */
constexpr int CQ_COLS = RTK_CHOLQR2_MAX_N, CQ_RSTEP = CQ_THREADS / CQ_COLS;
__device__ bool cq_chol(float2 *G, int ldg, int n, float *diag)
{
    const int tj = threadIdx.x % CQ_COLS, ti = threadIdx.x / CQ_COLS;
    for (int k = 0; k < n; k++) {
        const float d = G[(size_t)k * ldg + k].x;
        if (!(d > 0.f) || !isfinite(d)) return false; /* the same value for every thread */
        const float invd = 1.f / d;
        const int j = k + 1 + tj;
        if (j < n) {
            float2 gkj = G[(size_t)j * ldg + k];
            gkj.x *= invd;
            gkj.y *= invd;
            for (int i = k + 1 + ti; i <= j; i += CQ_RSTEP)
                G[(size_t)j * ldg + i] = cjfms(G[(size_t)i * ldg + k], gkj, G[(size_t)j * ldg + i]);
        }
        __syncthreads();
    }
    for (int k = threadIdx.x; k < n; k += CQ_THREADS) diag[k] = sqrtf(G[(size_t)k * ldg + k].x);
    __syncthreads();
    for (int j = tj; j < n; j += CQ_COLS)
        for (int i = ti; i <= j; i += CQ_RSTEP) {
            float2 *g = G + (size_t)j * ldg + i;
            const float r = 1.f / diag[i];
            *g = i == j ? make_float2(diag[i], 0.f) : make_float2(g->x * r, g->y * r);
        }
    __syncthreads();
    return true;
}

/* In place: X (m x n, ld ldx) = X R^-1 for R upper (ld ldr) with a real positive diagonal */
__device__ void cq_trsm(float2 *X, int ldx, int m, int n, const float2 *R, int ldr)
{
    const int rstep = m < CQ_THREADS ? m : CQ_THREADS;
    const int r0 = threadIdx.x % rstep, cstep = CQ_THREADS / rstep, c0i = threadIdx.x / rstep;
    for (int j = 0; j + 1 < n; j++) {
        const float inv = 1.f / R[(size_t)j * ldr + j].x;
        for (int c = j + 1 + c0i; c < n && c0i < cstep; c += cstep) {
            float2 r = R[(size_t)c * ldr + j];
            r.x *= inv;
            r.y *= inv;
            for (int t = r0; t < m; t += rstep)
                X[(size_t)c * ldx + t] = cfms(X[(size_t)j * ldx + t], r, X[(size_t)c * ldx + t]);
        }
        __syncthreads();
    }
    for (int idx = threadIdx.x; idx < m * n; idx += CQ_THREADS) {
        const int c = idx / m, t = idx - c * m;
        const float inv = 1.f / R[(size_t)c * ldr + c].x;
        float2 *x = X + (size_t)c * ldx + t;
        x->x *= inv;
        x->y *= inv;
    }
    __syncthreads();
}

__global__ void __launch_bounds__(CQ_THREADS, 1) cholqr2_kernel(int m, int n, float2 *A, int lda,
                                                             long long stride, float min_ratio,
                                                             int *fail_list)
{
    extern __shared__ float2 sm[];
    /* ldx = 1 mod 4: the Gram's 4-column tiles of one warp fall on different banks; ldg odd */
    const int ldx = m + ((1 - m) & 3), ldg = n | 1;
    float2 *Ts = sm, *G1 = Ts + (size_t)ldx * n, *G2 = Ts; /* G2 over Q1, dead once G2 is formed */
    float *diag = reinterpret_cast<float *>(G1 + (size_t)ldg * n);
    __shared__ float ratio;
    const int k = blockIdx.x;
    float2 *Ak = A + (long long)k * stride;
    for (int idx = threadIdx.x; idx < m * n; idx += CQ_THREADS) {
        const int c = idx / m, t = idx - c * m;
        Ts[(size_t)c * ldx + t] = Ak[(size_t)c * lda + t];
    }
    __syncthreads();
    cq_gram(Ts, ldx, m, n, G1, ldg);
    bool ok = cq_chol(G1, ldg, n, diag);
    if (ok) {
        cq_trsm(Ts, ldx, m, n, G1, ldg);
        cq_gram(Ts, ldx, m, n, G2, ldg);
        ok = cq_chol(G2, ldg, n, diag);
    }
    if (ok) {
        if (threadIdx.x < 32) { /* min and max |R_ii| = R2_ii R1_ii */
            float lo = INFINITY, hi = 0.f;
            for (int i = threadIdx.x; i < n; i += 32) {
                const float r = G2[(size_t)i * ldg + i].x * G1[(size_t)i * ldg + i].x;
                lo = fminf(lo, isfinite(r) ? r : 0.f);
                hi = fmaxf(hi, r);
            }
            for (int o = 16; o; o >>= 1) {
                lo = fminf(lo, __shfl_xor_sync(0xffffffffu, lo, o));
                hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, o));
            }
            if (threadIdx.x == 0) ratio = hi > 0.f && isfinite(hi) ? lo / hi : 0.f;
        }
        __syncthreads();
        ok = ratio >= min_ratio;
    }
    if (!ok) {
        if (threadIdx.x == 0) fail_list[1 + atomicAdd(fail_list, 1)] = k;
        return;
    }
    for (int idx = threadIdx.x; idx < n * n; idx += CQ_THREADS) { /* R = R2 R1 */
        const int j = idx / n, i = idx - j * n;
        if (i > j) continue;
        float2 r = c0();
        for (int q = i; q <= j; q++) r = cfma(G2[(size_t)q * ldg + i], G1[(size_t)j * ldg + q], r);
        Ak[(size_t)j * lda + i] = r;
    }
}

/* Householder's share (the guard): the listed matrices gathered into packed B, and the
 * upper triangles of B's factors put back */
__global__ void cq_gather_kernel(int m, int n, const float2 *A, int lda, long long stride,
                                 const int *list, float2 *B)
{
    const float2 *Ak = A + (long long)list[1 + blockIdx.x] * stride;
    float2 *Bk = B + (size_t)blockIdx.x * m * n;
    for (int idx = threadIdx.x; idx < m * n; idx += blockDim.x) {
        const int c = idx / m, t = idx - c * m;
        Bk[idx] = Ak[(size_t)c * lda + t];
    }
}

__global__ void cq_scatter_kernel(int m, int n, float2 *A, int lda, long long stride, const int *list,
                                  const float2 *B)
{
    float2 *Ak = A + (long long)list[1 + blockIdx.x] * stride;
    const float2 *Bk = B + (size_t)blockIdx.x * m * n;
    for (int idx = threadIdx.x; idx < n * n; idx += blockDim.x) {
        const int c = idx / n, t = idx - c * n;
        if (t <= c) Ak[(size_t)c * lda + t] = Bk[(size_t)c * m + t];
    }
}

} // namespace rtk

using namespace rtk;

static size_t cq_smem(int m, int n)
{
    const size_t ldx = (size_t)(m + ((1 - m) & 3)), ldg = (size_t)(n | 1);
    return (ldx * n + ldg * n) * sizeof(float2) + (size_t)n * sizeof(float);
}

extern "C" int rtk_cholqr2_fits(int m, int n, int smem_limit)
{
    return m >= n && n >= 1 && n <= RTK_CHOLQR2_MAX_N && cq_smem(m, n) <= (size_t)smem_limit;
}

extern "C" int rtk_cholqr2_launch(int m, int n, int batch, void *A, int lda, long long stride,
                                  float min_ratio, int *fail_list, void *stream)
{
    if (batch <= 0) return cudaSuccess;
    const size_t smem = cq_smem(m, n);
    cudaError_t e = cudaFuncSetAttribute(cholqr2_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)smem);
    if (e != cudaSuccess) return e;
    cholqr2_kernel<<<batch, CQ_THREADS, smem, (cudaStream_t)stream>>>(m, n, (float2 *)A, lda, stride,
                                                                     min_ratio, fail_list);
    return cudaGetLastError();
}

extern "C" int rtk_cholqr2_gather_launch(int m, int n, int count, const void *A, int lda,
                                         long long stride, const int *fail_list, void *B, void *stream)
{
    if (count <= 0) return cudaSuccess;
    cq_gather_kernel<<<count, 256, 0, (cudaStream_t)stream>>>(m, n, (const float2 *)A, lda, stride,
                                                              fail_list, (float2 *)B);
    return cudaGetLastError();
}

extern "C" int rtk_cholqr2_scatter_launch(int m, int n, int count, void *A, int lda, long long stride,
                                          const int *fail_list, const void *B, void *stream)
{
    if (count <= 0) return cudaSuccess;
    cq_scatter_kernel<<<count, 256, 0, (cudaStream_t)stream>>>(m, n, (float2 *)A, lda, stride, fail_list,
                                                               (const float2 *)B);
    return cudaGetLastError();
}
