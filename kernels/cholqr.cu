/* cholqr.cu: batched CholeskyQR2 (R only) on the GPU, issue 47: one block of 512 threads a
 * matrix, the whole matrix in shared memory, the m n^2 products on the tensor cores.
 *
 *     G1 = T^H T,  R1 = chol(G1),  Q1 = T R1^-1,  G2 = Q1^H Q1,  R2 = chol(G2),  R = R2 R1
 *
 * (linalg/cholqr_cpu.c has the CPU's copy and the references.) The steps:
 * - the Gram products on the tensor cores, 3xTF32 (rtk_mma.cuh: FP32-accurate), complex as
 *   four real products: warp tiles of 16 x 8 complex of the upper triangle, the rows split
 *   into S slices so that every warp works (tiles x S items, at most CQ_ITEMS a warp, held in
 *   registers); the slices' partial sums are added in slice order (deterministic: no atomics);
 * - the Cholesky factorizations, right-looking in place, one barrier a column: a warp a
 *   column, its lanes the rows (G_ij -= conj(G_ki) G_kj / G_kk, row k unscaled; row k scaled
 *   by 1/sqrt(G_kk) after the loop). The first also forms R1^-1 in the same sweep, in the
 *   strict lower triangle: the forward substitution R1^H Y = I, column by column, stores B
 *   with R1^-1_kj = conj(B_jk) / R1_jj;
 * - Q1 = T R1^-1 on the tensor cores (3xTF32), in place: panels of 16 columns from the
 *   right (a panel needs T's columns up to its own), a warp 16 rows of the panel;
 * - G2 takes Q1's place (m >= n), so shared memory holds ldx n + ldg n complex values and n
 *   floats, ldx = m rounded up to 16, then to 4 mod 16, ldg = n to 4 mod 16 (the MMA
 *   fragments' loads free of bank conflicts; n | 1 where that does not fit): 240 x 66
 *   (hard) 165 KB, 192 x 96 (medium) 228 KB;
 * - R = R2 R1, written to the upper triangle of A (real positive diagonal). Everything
 *   else of A is left as it was.
 * A matrix whose Cholesky breaks down (a pivot not > 0 or not finite) or whose R has
 * min|R_ii| / max|R_ii| < min_ratio is not written: its index goes to fail_list (the
 * caller refactors it by Householder, linalg/gpu_dispatch.cu).
 * Q1 from R1^-1 rather than a triangular solve: R = R2 R1 with R2 = R(T X), X the computed
 * R1^-1, is R(T) (X R1); the column-by-column forward substitution keeps |X R1 - I| within
 * a small multiple of u |X| |R1| (test_gpu_qr: the LAPACK ratios at cond 1e2 to 1e6). */
#include "rtk_device.cuh"
#include "rtk_mma.cuh"

namespace rtk {

constexpr int CQ_THREADS = 512, CQ_WARPS = CQ_THREADS / 32;
constexpr int CQ_ITEMS = 5;               /* Gram items (tile, slice) a warp at most */
constexpr int CQ_SMEM_MAX = 232448;       /* sm_90's opt-in shared memory a block */

struct CqLayout {
    int mp, ldx, ldg;
};
__host__ __device__ inline size_t cq_bytes(int ldx, int ldg, int n)
{
    return ((size_t)ldx * n + (size_t)ldg * n) * sizeof(float2) + (size_t)n * sizeof(float);
}
__host__ __device__ inline CqLayout cq_layout(int m, int n)
{
    CqLayout L;
    L.mp = (m + 15) & ~15;
    L.ldx = L.mp + ((4 - L.mp) & 15);
    L.ldg = n + ((4 - n) & 15);
    if (cq_bytes(L.ldx, L.ldg, n) > (size_t)CQ_SMEM_MAX) L.ldg = n | 1;
    return L;
}

/* the TF32 pairs of a fragment's real and imaginary parts */
struct CqFrag4 {
    unsigned rb[4], rs[4], ib[4], is[4];
};
struct CqFrag2 {
    unsigned rb[2], rs[2], ib[2], is[2];
};
__device__ __forceinline__ void cq_split4(const float2 (&v)[4], CqFrag4 &f)
{
#pragma unroll
    for (int q = 0; q < 4; q++) {
        tf32_split(v[q].x, f.rb[q], f.rs[q]);
        tf32_split(v[q].y, f.ib[q], f.is[q]);
    }
}
__device__ __forceinline__ void cq_split2(const float2 (&v)[2], CqFrag2 &f)
{
#pragma unroll
    for (int q = 0; q < 2; q++) {
        tf32_split(v[q].x, f.rb[q], f.rs[q]);
        tf32_split(v[q].y, f.ib[q], f.is[q]);
    }
}
__device__ __forceinline__ void cq_neg4(const unsigned (&a)[4], unsigned (&b)[4])
{
#pragma unroll
    for (int q = 0; q < 4; q++) b[q] = a[q] ^ 0x80000000u;
}
/* acc (re[4], im[4]) += A B over one k step: conj_a: conj(A) B (the Gram), else A B */
__device__ __forceinline__ void cq_mma(float (&re)[4], float (&im)[4], const CqFrag4 &a, const CqFrag2 &b,
                                       bool conj_a)
{
    unsigned nb[4], ns[4];
    cq_neg4(a.ib, nb);
    cq_neg4(a.is, ns);
    float tr[4] = {0.f, 0.f, 0.f, 0.f}, ti[4] = {0.f, 0.f, 0.f, 0.f};
    mma3(tr, a.rb, a.rs, b.rb, b.rs);
    if (conj_a) { /* re: ar br + ai bi, im: ar bi - ai br */
        mma3(tr, a.ib, a.is, b.ib, b.is);
        mma3(ti, a.rb, a.rs, b.ib, b.is);
        mma3(ti, nb, ns, b.rb, b.rs);
    } else { /* re: ar br - ai bi, im: ar bi + ai br */
        mma3(tr, nb, ns, b.ib, b.is);
        mma3(ti, a.rb, a.rs, b.ib, b.is);
        mma3(ti, a.ib, a.is, b.rb, b.rs);
    }
#pragma unroll
    for (int q = 0; q < 4; q++) {
        re[q] = __fadd_rn(re[q], tr[q]);
        im[q] = __fadd_rn(im[q], ti[q]);
    }
}

/* G (upper triangle, ld ldg) = X^H X for X mp x n (ld ldx, rows m..mp-1 zero), on the
 * tensor cores. G may overlap X (G2 over Q1): every read is done before the first write. */
__device__ void cq_gram(const float2 *X, int ldx, int mp, int n, float2 *G, int ldg)
{
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, c = lane & 3;
    const int mt = (n + 15) >> 4, nt = (n + 7) >> 3, ks = mp >> 3;
    int ntiles = 0;
    for (int bi = 0; bi < mt; bi++) ntiles += nt - 2 * bi > 0 ? nt - 2 * bi : 0;
    int S = 1, best = 1 << 30; /* slices: the fewest k steps on the busiest warp */
    for (int s = 1; s <= 8 && s <= ks; s++) {
        const int per = (ntiles * s + CQ_WARPS - 1) / CQ_WARPS;
        if (per > CQ_ITEMS) break;
        const int cost = per * ((ks + s - 1) / s);
        if (cost < best) best = cost, S = s;
    }
    float re[CQ_ITEMS][4], im[CQ_ITEMS][4];
    int ti0[CQ_ITEMS], tj0[CQ_ITEMS], tsl[CQ_ITEMS];
#pragma unroll
    for (int r = 0; r < CQ_ITEMS; r++) {
#pragma unroll
        for (int q = 0; q < 4; q++) re[r][q] = im[r][q] = 0.f;
        const int item = warp + CQ_WARPS * r;
        tsl[r] = -1;
        ti0[r] = tj0[r] = 0;
        if (item >= ntiles * S) continue;
        int tile = item / S, bi = 0;
        tsl[r] = item - tile * S;
        while (tile >= nt - 2 * bi) {
            tile -= nt - 2 * bi;
            bi++;
        }
        ti0[r] = 16 * bi;
        tj0[r] = 8 * (2 * bi + tile);
        const int ia = ti0[r] + g, ib = ia + 8, jb = tj0[r] + g;
        const float2 *pa = X + (size_t)(ia < n ? ia : 0) * ldx, *pb = X + (size_t)(ib < n ? ib : 0) * ldx;
        const float2 *pj = X + (size_t)(jb < n ? jb : 0) * ldx;
        const bool va = ia < n, vb = ib < n, vj = jb < n;
        const int k0 = tsl[r] * ks / S, k1 = (tsl[r] + 1) * ks / S;
        for (int k = k0; k < k1; k++) {
            const int t = 8 * k + c;
            const float2 av[4] = {va ? pa[t] : c0(), vb ? pb[t] : c0(), va ? pa[t + 4] : c0(),
                                  vb ? pb[t + 4] : c0()};
            const float2 bv[2] = {vj ? pj[t] : c0(), vj ? pj[t + 4] : c0()};
            CqFrag4 fa;
            CqFrag2 fb;
            cq_split4(av, fa);
            cq_split2(bv, fb);
            cq_mma(re[r], im[r], fa, fb, true);
        }
    }
    __syncthreads(); /* X read in full: G may take its place */
    for (int s = 0; s < S; s++) { /* the slices' sums in slice order */
#pragma unroll
        for (int r = 0; r < CQ_ITEMS; r++) {
            if (tsl[r] != s) continue;
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int i = ti0[r] + g + (q >> 1) * 8, j = tj0[r] + 2 * c + (q & 1);
                if (i < n && j < n && i <= j) {
                    float2 *p = G + (size_t)j * ldg + i;
                    *p = s == 0 ? make_float2(re[r][q], im[r][q])
                                : make_float2(__fadd_rn(p->x, re[r][q]), __fadd_rn(p->y, im[r][q]));
                }
            }
        }
        __syncthreads();
    }
}

/* In place: G (upper, ld ldg) = R^H R, R upper with a real positive diagonal. Returns false
 * (every thread alike) when a pivot is not > 0 or not finite. diag: n floats of scratch.
 * inv: the strict lower triangle gets B, R^-1_kj = conj(B_jk) / R_jj (k < j), at G[k ldg + j].
 * Step k: warp w the columns q = w, w + 16, ..., its lanes the rows i > k: G_iq (i <= q) of
 * the trailing matrix, and with inv B_iq (q <= k): both -= conj(G_ki) M_q / G_kk, M_q the
 * column's multiplier (G_kq, B_kq, or 1 at q = k, where B_ik is first written). */
constexpr int CQ_ROWS = RTK_CHOLQR2_MAX_N / 32; /* a lane's rows */
__device__ bool cq_chol(float2 *G, int ldg, int n, float *diag, bool inv)
{
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    for (int k = 0; k < n; k++) {
        const float d = G[(size_t)k * ldg + k].x;
        if (!(d > 0.f) || !isfinite(d)) return false; /* the same value for every thread */
        const float invd = 1.f / d;
        float2 gk[CQ_ROWS]; /* conj(G_ki) / G_kk of the lane's rows */
#pragma unroll
        for (int s = 0; s < CQ_ROWS; s++) {
            const int i = k + 1 + lane + 32 * s;
            const float2 v = i < n ? G[(size_t)i * ldg + k] : c0();
            gk[s] = make_float2(v.x * invd, -v.y * invd);
        }
        for (int q = warp; q < n; q += CQ_WARPS) {
            if (q <= k && !inv) continue;
            const float2 mq = q > k ? G[(size_t)q * ldg + k] : q < k ? G[(size_t)q * ldg + k] : make_float2(1.f, 0.f);
            const int iend = q > k ? q + 1 : n;
            float2 *col = G + (size_t)q * ldg;
#pragma unroll
            for (int s = 0; s < CQ_ROWS; s++) {
                const int i = k + 1 + lane + 32 * s;
                if (i < iend) {
                    const float2 old = q == k ? c0() : col[i];
                    col[i] = cfms(gk[s], mq, old);
                }
            }
        }
        __syncthreads();
    }
    for (int k = threadIdx.x; k < n; k += CQ_THREADS) diag[k] = sqrtf(G[(size_t)k * ldg + k].x);
    __syncthreads();
    for (int j = warp; j < n; j += CQ_WARPS)
        for (int i = lane; i <= j; i += 32) {
            float2 *g = G + (size_t)j * ldg + i;
            const float r = 1.f / diag[i];
            *g = i == j ? make_float2(diag[i], 0.f) : make_float2(g->x * r, g->y * r);
        }
    __syncthreads();
    return true;
}

/* In place: X (mp x n, ld ldx) = X R^-1, R^-1 from cq_chol's inv (G: R upper, B lower), on
 * the tensor cores. A row of the product needs only its own row of X: warp w takes the row
 * tiles 16 w, 16 (w + 16), ... and, in each, panels of 16 columns from the right (a panel
 * reads X's columns up to its own), so no barrier of the block. */
__device__ void cq_q1(float2 *X, int ldx, int mp, int n, const float2 *G, int ldg)
{
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, c = lane & 3;
    for (int t0 = 16 * warp; t0 < mp; t0 += 16 * CQ_WARPS) {
        for (int p = (n - 1) >> 4; p >= 0; p--) {
            const int j0 = 16 * p, kend = j0 + 16 < n ? j0 + 16 : n;
            float re[2][4], im[2][4];
            int jc[2];
            float sc[2]; /* this lane's columns of R^-1, j = j0 + 8 b + g, and 1 / R_jj */
#pragma unroll
            for (int b = 0; b < 2; b++) {
#pragma unroll
                for (int q = 0; q < 4; q++) re[b][q] = im[b][q] = 0.f;
                jc[b] = j0 + 8 * b + g;
                sc[b] = jc[b] < n ? 1.f / G[(size_t)jc[b] * ldg + jc[b]].x : 0.f;
            }
            for (int k0 = 0; k0 < kend; k0 += 8) {
                const int ka = k0 + c, kb = ka + 4;
                const float2 *xa = X + (size_t)(ka < n ? ka : 0) * ldx + t0 + g;
                const float2 *xb = X + (size_t)(kb < n ? kb : 0) * ldx + t0 + g;
                const float2 av[4] = {ka < n ? xa[0] : c0(), ka < n ? xa[8] : c0(), kb < n ? xb[0] : c0(),
                                      kb < n ? xb[8] : c0()};
                CqFrag4 fa;
                cq_split4(av, fa);
#pragma unroll
                for (int b = 0; b < 2; b++) {
                    float2 bv[2];
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        const int k = h ? kb : ka, j = jc[b];
                        float2 v = c0();
                        if (j < n && k < j) {
                            const float2 w = G[(size_t)k * ldg + j];
                            v = make_float2(w.x * sc[b], -w.y * sc[b]);
                        } else if (j < n && k == j) {
                            v = make_float2(sc[b], 0.f);
                        }
                        bv[h] = v;
                    }
                    CqFrag2 fb;
                    cq_split2(bv, fb);
                    cq_mma(re[b], im[b], fa, fb, false);
                }
            }
            __syncwarp(); /* the warp's rows of the panel read: write them */
#pragma unroll
            for (int b = 0; b < 2; b++)
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    const int t = t0 + g + (q >> 1) * 8, j = j0 + 8 * b + 2 * c + (q & 1);
                    if (j < n) X[(size_t)j * ldx + t] = make_float2(re[b][q], im[b][q]);
                }
            __syncwarp();
        }
    }
    __syncthreads();
}

__global__ void __launch_bounds__(CQ_THREADS, 1) cholqr2_kernel(int m, int n, float2 *A, int lda,
                                                             long long stride, float min_ratio,
                                                             int *fail_list)
{
    extern __shared__ float2 sm[];
    const CqLayout L = cq_layout(m, n);
    const int ldx = L.ldx, ldg = L.ldg, mp = L.mp;
    float2 *Ts = sm, *G1 = Ts + (size_t)ldx * n, *G2 = Ts; /* G2 over Q1, dead once G2 is formed */
    float *diag = reinterpret_cast<float *>(G1 + (size_t)ldg * n);
    __shared__ float ratio;
    const int k = blockIdx.x;
    float2 *Ak = A + (long long)k * stride;
    for (int idx = threadIdx.x; idx < mp * n; idx += CQ_THREADS) { /* rows m..mp-1 zero */
        const int c = idx / mp, t = idx - c * mp;
        Ts[(size_t)c * ldx + t] = t < m ? Ak[(size_t)c * lda + t] : c0();
    }
    __syncthreads();
    cq_gram(Ts, ldx, mp, n, G1, ldg);
    bool ok = cq_chol(G1, ldg, n, diag, true);
    if (ok) {
        cq_q1(Ts, ldx, mp, n, G1, ldg);
        cq_gram(Ts, ldx, mp, n, G2, ldg);
        ok = cq_chol(G2, ldg, n, diag, false);
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
    const CqLayout L = cq_layout(m, n);
    return cq_bytes(L.ldx, L.ldg, n);
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
