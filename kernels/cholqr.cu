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
 * - the Cholesky factorizations, right-looking in place, one barrier a column: step k's
 *   updates (G_iq -= conj(G_ki) G_kq / G_kk, row k unscaled; row k scaled by 1/sqrt(G_kk)
 *   after the loop) by 2 x 2 blocks spread over the block. The first also forms R1^-1 in
 *   the same sweep, in the strict lower triangle: the forward substitution R1^H Y = I,
 *   column by column (B, R1^-1_kj = conj(B_jk) / R1_jj, scaled in place after the loop);
 * - Q1 = T R1^-1 on the tensor cores (3xTF32), in place: a warp 16 rows, panels of 16
 *   columns from the right (a panel needs its rows' columns up to its own): no barrier;
 * - G2 takes Q1's place (m >= n), so shared memory holds ldx n + ldg n complex values and n
 *   floats, ldx = m rounded up to 16, then to 4 mod 16 (the MMA fragments' loads free of
 *   bank conflicts), ldg = n | 1 (odd: the Cholesky's loads of row k too): 240 x 66 (hard)
 *   164 KB, 192 x 96 (medium) 225 KB;
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
    L.ldg = n | 1;
    return L;
}

/* the TF32 pairs of a fragment's real and imaginary parts */
struct CqFrag4 {
    unsigned rb[4], rs[4], ib[4], is[4];
};
struct CqFrag2 {
    unsigned rb[2], rs[2], ib[2], is[2];
};
/* a = big + small: big rounded to TF32 by the integer add and mask (tf32_of), small = a - big
 * exact and left to the tensor core's truncation (|small| <= 2^-11 |a|: an error 2^-22 |a|).
 * No clamp (rtk_mma.cuh's tf32_split): a finite |a| near FLT_MAX gives an infinite or NaN
 * product, and the Cholesky's pivot test or the diagonal ratio sends the matrix to the guard. */
__device__ __forceinline__ void cq_split(float a, unsigned &big, unsigned &small)
{
    big = tf32_of(a);
    small = __float_as_uint(a - __uint_as_float(big));
}
__device__ __forceinline__ void cq_split4(const float2 (&v)[4], CqFrag4 &f)
{
#pragma unroll
    for (int q = 0; q < 4; q++) {
        cq_split(v[q].x, f.rb[q], f.rs[q]);
        cq_split(v[q].y, f.ib[q], f.is[q]);
    }
}
__device__ __forceinline__ void cq_split2(const float2 (&v)[2], CqFrag2 &f)
{
#pragma unroll
    for (int q = 0; q < 2; q++) {
        cq_split(v[q].x, f.rb[q], f.rs[q]);
        cq_split(v[q].y, f.ib[q], f.is[q]);
    }
}
__device__ __forceinline__ void cq_neg2(const unsigned (&a)[2], unsigned (&b)[2])
{
    b[0] = a[0] ^ 0x80000000u;
    b[1] = a[1] ^ 0x80000000u;
}
/* (tr, ti) += A B over one k step (3xTF32, complex as four real products, chained on the
 * tensor core's accumulator): conj_a: conj(A) B (the Gram), else A B */
__device__ __forceinline__ void cq_mma(float (&tr)[4], float (&ti)[4], const CqFrag4 &a, const CqFrag2 &b,
                                       bool conj_a)
{
    unsigned nb[2], ns[2];
    mma3(tr, a.rb, a.rs, b.rb, b.rs);
    if (conj_a) { /* re: ar br + ai bi, im: ar bi + ai (-br) */
        cq_neg2(b.rb, nb);
        cq_neg2(b.rs, ns);
        mma3(tr, a.ib, a.is, b.ib, b.is);
        mma3(ti, a.rb, a.rs, b.ib, b.is);
        mma3(ti, a.ib, a.is, nb, ns);
    } else { /* re: ar br + ai (-bi), im: ar bi + ai br */
        cq_neg2(b.ib, nb);
        cq_neg2(b.is, ns);
        mma3(tr, a.ib, a.is, nb, ns);
        mma3(ti, a.rb, a.rs, b.ib, b.is);
        mma3(ti, a.ib, a.is, b.rb, b.rs);
    }
}
/* acc += t by rounded FP32 adds, t = 0: every CQ_KC k steps (rtk_mma.cuh adds every k step;
 * the tensor core truncates its sums). Chained over 4 k steps, test_gpu_qr's ratios at
 * 240 x 66 went from 0.004 / 0.023 (residual / diag) to 0.006 / 0.036, 30 allowed. */
constexpr int CQ_KC = 4;
__device__ __forceinline__ void cq_flush(float (&re)[4], float (&im)[4], float (&tr)[4], float (&ti)[4])
{
#pragma unroll
    for (int q = 0; q < 4; q++) {
        re[q] = __fadd_rn(re[q], tr[q]);
        im[q] = __fadd_rn(im[q], ti[q]);
        tr[q] = ti[q] = 0.f;
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
        float tr[4] = {0.f, 0.f, 0.f, 0.f}, ti[4] = {0.f, 0.f, 0.f, 0.f};
        for (int k = k0; k < k1; k++) {
            const int t = 8 * k + c;
            const float2 av[4] = {va ? pa[t] : c0(), vb ? pb[t] : c0(), va ? pa[t + 4] : c0(),
                                  vb ? pb[t + 4] : c0()};
            const float2 bv[2] = {vj ? pj[t] : c0(), vj ? pj[t + 4] : c0()};
            CqFrag4 fa;
            CqFrag2 fb;
            cq_split4(av, fa);
            cq_split2(bv, fb);
            cq_mma(tr, ti, fa, fb, true);
            if ((k - k0) % CQ_KC == CQ_KC - 1) cq_flush(re[r], im[r], tr, ti);
        }
        cq_flush(re[r], im[r], tr, ti);
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
 * inv: the strict lower triangle gets R^-1 too, R^-1_kj at G[k ldg + j] (k < j), by the
 * forward substitution R^H Y = I in the same sweep (B, R^-1_kj = conj(B_jk) / R_jj).
 * Step k, by 2 x 2 blocks over the block's threads: the trailing triangle's G_iq
 * (k < i <= q) and, with inv, B_iq (q <= k < i), each -= conj(G_ki) M_q / G_kk, M_q = G_kq,
 * B_kq, or 1 at q = k (where B_ik is first written); row k unscaled, scaled after the loop.
 * ncu (240 x 66, H200): the two take about half of the kernel's time, one barrier a
 * column and a few blocks a thread between (docs/benchmarks.md). */
/* Step k's update of a 2 x 2 block, rows i0, i0 + 1 (< n), columns q0, q0 + 1 (<= qmax):
 * G_iq -= conj(G_ki) M_q / G_kk, M_q = G_kq (B_kq below the diagonal), or 1 at q = k where
 * the target starts at 0; upper: only i <= q. Loads before stores. */
__device__ __forceinline__ void cq_blk(float2 *G, int ldg, int n, int k, float invd, int i0, int q0, int qmax,
                                       bool upper)
{
    float2 a[2], mq[2], old[2][2];
    bool on[2][2];
#pragma unroll
    for (int x = 0; x < 2; x++) {
        const int i = i0 + x, q = q0 + x;
        const float2 g = i < n ? G[i * ldg + k] : c0();
        a[x] = make_float2(g.x * invd, -g.y * invd);
        mq[x] = q == k ? make_float2(1.f, 0.f) : q <= qmax ? G[q * ldg + k] : c0();
    }
#pragma unroll
    for (int y = 0; y < 2; y++)
#pragma unroll
        for (int x = 0; x < 2; x++) {
            const int i = i0 + x, q = q0 + y;
            on[y][x] = i < n && q <= qmax && (!upper || i <= q);
            old[y][x] = on[y][x] && q != k ? G[q * ldg + i] : c0();
        }
#pragma unroll
    for (int y = 0; y < 2; y++)
#pragma unroll
        for (int x = 0; x < 2; x++)
            if (on[y][x]) G[(q0 + y) * ldg + i0 + x] = cfms(a[x], mq[y], old[y][x]);
}
/* a thread's 2 x 2 blocks of a trailing triangle (n <= 128: at most 64 blocks a side) */
constexpr int CQ_CB = (64 * 65 / 2 + CQ_THREADS - 1) / CQ_THREADS;
__device__ bool cq_chol(float2 *G, int ldg, int n, float *diag, bool inv)
{
    /* this thread's blocks of a trailing triangle, e = tid + 512 r, column by column
       (e = j (j + 1) / 2 + i, i <= j): the same (i, j) at every step, packed i | j << 16 */
    unsigned pk[CQ_CB];
#pragma unroll
    for (int r = 0; r < CQ_CB; r++) {
        const int e = threadIdx.x + CQ_THREADS * r;
        int jj = (int)((sqrtf(8.f * (float)e + 1.f) - 1.f) * 0.5f);
        if ((jj + 1) * (jj + 2) / 2 <= e) jj++;
        else if (jj * (jj + 1) / 2 > e) jj--;
        pk[r] = (unsigned)(e - jj * (jj + 1) / 2) | (unsigned)jj << 16;
    }
    for (int k = 0; k < n; k++) {
        const float d = G[k * ldg + k].x;
        if (!(d > 0.f) || !isfinite(d)) return false; /* the same value for every thread */
        const float invd = 1.f / d;
        const int mb = (n - k) >> 1, eb = mb * (mb + 1) / 2; /* (n - k - 1 + 1) / 2 blocks a side */
#pragma unroll
        for (int r = 0; r < CQ_CB; r++) {
            if (threadIdx.x + CQ_THREADS * r >= eb) break;
            cq_blk(G, ldg, n, k, invd, k + 1 + 2 * (int)(pk[r] & 0xffffu), k + 1 + 2 * (int)(pk[r] >> 16), n - 1,
                   true);
        }
        if (inv && mb) { /* B_ic, c <= k < i, by 2 x 2 blocks: f = (c block, i block) */
            const int e2 = mb * ((k + 2) >> 1);
            const float rmb = 1.f / (float)mb;
            /* from thread eb on: the threads with no trailing block take B's first */
            for (int f = (threadIdx.x + CQ_THREADS - eb % CQ_THREADS) % CQ_THREADS; f < e2; f += CQ_THREADS) {
                const int cb = (int)(((float)f + 0.5f) * rmb), ib = f - cb * mb;
                cq_blk(G, ldg, n, k, invd, k + 1 + 2 * ib, 2 * cb, k, false);
            }
        }
        __syncthreads();
    }
    for (int k = threadIdx.x; k < n; k += CQ_THREADS) diag[k] = sqrtf(G[(size_t)k * ldg + k].x);
    __syncthreads();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    for (int j = warp; j < n; j += CQ_WARPS)
        for (int i = lane; i < (inv ? n : j + 1); i += 32) {
            float2 *g = G + (size_t)j * ldg + i;
            const float r = 1.f / diag[i]; /* R_ij = G_ij / R_ii; R^-1_ji = conj(B_ij) / R_ii */
            *g = i == j ? make_float2(diag[i], 0.f)
                        : i < j ? make_float2(g->x * r, g->y * r) : make_float2(g->x * r, -g->y * r);
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
            float re[2][4], im[2][4], tr[2][4], ti[2][4];
            int jc[2];
            float sc[2]; /* this lane's columns of R^-1, j = j0 + 8 b + g, and 1 / R_jj */
#pragma unroll
            for (int b = 0; b < 2; b++) {
#pragma unroll
                for (int q = 0; q < 4; q++) re[b][q] = im[b][q] = tr[b][q] = ti[b][q] = 0.f;
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
                            v = G[(size_t)k * ldg + j];
                        } else if (j < n && k == j) {
                            v = make_float2(sc[b], 0.f);
                        }
                        bv[h] = v;
                    }
                    CqFrag2 fb;
                    cq_split2(bv, fb);
                    cq_mma(tr[b], ti[b], fa, fb, false);
                    if ((k0 >> 3) % CQ_KC == CQ_KC - 1) cq_flush(re[b], im[b], tr[b], ti[b]);
                }
            }
#pragma unroll
            for (int b = 0; b < 2; b++) cq_flush(re[b], im[b], tr[b], ti[b]);
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
    for (int c = threadIdx.x >> 5; c < n; c += CQ_WARPS) { /* a warp a column; rows m..mp-1 zero */
        const float2 *src = Ak + (size_t)c * lda;
        float2 v[8];
#pragma unroll
        for (int u = 0; u < 8; u++) { /* the loads of 8 rows in flight */
            const int t = (threadIdx.x & 31) + 32 * u;
            v[u] = t < m ? src[t] : c0();
        }
        for (int t0 = 0; t0 < mp; t0 += 256) {
#pragma unroll
            for (int u = 0; u < 8; u++) {
                const int t = t0 + (threadIdx.x & 31) + 32 * u, tn = t + 256;
                if (t < mp) Ts[(size_t)c * ldx + t] = v[u];
                v[u] = tn < m ? src[tn] : c0();
            }
        }
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
        float2 r2 = c0(); /* two chains, the loads unrolled */
        int q = i;
#pragma unroll 4
        for (; q + 1 <= j; q += 2) {
            r = cfma(G2[q * ldg + i], G1[j * ldg + q], r);
            r2 = cfma(G2[(q + 1) * ldg + i], G1[j * ldg + q + 1], r2);
        }
        if (q <= j) r = cfma(G2[q * ldg + i], G1[j * ldg + q], r);
        r.x += r2.x;
        r.y += r2.y;
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
