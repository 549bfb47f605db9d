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
 * - the Cholesky factorizations blocked by panels of CQ_NB = 8 columns, three block barriers
 *   a panel (cq_chol): warp 0 factors the panel's diagonal block in registers by shuffles
 *   and inverts it in the same sweep; the row panel R_KJ = R_KK^-H G_KJ and the trailing
 *   update G_JJ -= R_KJ^H R_KJ (2 x 2 blocks) on the CUDA cores over the whole block;
 * - Q1 = T R1^-1 on the tensor cores (3xTF32), in place, by the blocked forward substitution
 *   Q1 R1 = T: a warp 16 rows, panels of CQ_NB columns from the left, Y = T_J - Q1_<J R1_<J,J
 *   then Q1_J = Y R1_JJ^-1 with the diagonal blocks' inverses: no block barrier;
 * - G2 takes Q1's place (m >= n), so shared memory holds ldx n + ldg n complex values and n
 *   floats, ldx = m rounded up to 16, then to 4 mod 16 (the MMA fragments' loads free of
 *   bank conflicts), ldg = n | 1 (odd): 240 x 66 (hard)
 *   164 KB, 192 x 96 (medium) 225 KB;
 * - R = R2 R1, written to the upper triangle of A (real positive diagonal). Everything
 *   else of A is left as it was.
 * A matrix whose Cholesky breaks down (a pivot not > 0 or not finite) or whose R has
 * min|R_ii| / max|R_ii| < min_ratio is not written: its index goes to fail_list (the
 * caller refactors it by Householder, linalg/gpu_dispatch.cu).
 * Only the CQ_NB x CQ_NB diagonal blocks are inverted (right-looking by columns in
 * registers, |X R_KK - I| a small multiple of u |X| |R_KK|); the rest is substitution
 * (test_gpu_qr: the LAPACK ratios at cond 1e2 to 1e6). */
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

/* In place: G (upper, ld ldg) = R^H R, R upper with a real positive diagonal, blocked by
 * panels of CQ_NB columns (k0 = CQ_NB p), three barriers a panel instead of one a column:
 * A. warp 0 factors the diagonal block G_KK = R_KK^H R_KK in registers (lane j holds column
 *    j; step k's row of R is passed by shuffles, no barrier) and inverts it (X = R_KK^-1,
 *    column j = (e_j - sum_{l<j} X_:l R_lj) / R_jj, right-looking by shuffles); R_KK goes to
 *    the upper triangle, X's strict upper triangle to the block's strict lower one (X_ij at
 *    G[(k0 + i) ldg + k0 + j], i < j; X_jj = 1 / R_jj is not stored);
 * C. the row panel R_KJ = X^H G_KJ (J: the columns right of the block), 8 lanes a column,
 *    two rows a lane, in place (the group's loads before its stores);
 * E. the trailing triangle G_JJ -= R_KJ^H R_KJ by 2 x 2 blocks over the block's threads.
 * Returns false (every thread alike) when a pivot is not > 0 or not finite. */
#ifndef RTK_CQ_NB /* the panel width, 8 or 16 (a build-time experiment: -DRTK_CQ_NB=16) */
#define RTK_CQ_NB 8
#endif
constexpr int CQ_NB = RTK_CQ_NB, CQ_NT = CQ_NB / 8; /* CQ_NT: n-tiles of 8 a panel (cq_q1) */
static_assert(CQ_NB == 8 || CQ_NB == 16, "the panel is one or two MMA n-tiles");
__device__ bool cq_chol(float2 *G, int ldg, int n, int *fail)
{
    const int tid = threadIdx.x, lane = tid & 31;
    for (int k0 = 0; k0 < n; k0 += CQ_NB) {
        const int kb = n - k0 < CQ_NB ? n - k0 : CQ_NB, k1 = k0 + kb;
        if (tid < 32) { /* A: the diagonal block, warp 0 */
            const int j = lane;
            float2 g[CQ_NB], x[CQ_NB];
#pragma unroll
            for (int i = 0; i < CQ_NB; i++) {
                g[i] = j < kb && i <= j ? G[(size_t)(k0 + j) * ldg + k0 + i] : c0();
                x[i] = c0();
            }
            bool bad = false;
#pragma unroll
            for (int k = 0; k < CQ_NB; k++) { /* Cholesky step k, then the inverse's step k */
                if (k >= kb) break;
                const float d = __shfl_sync(0xffffffffu, g[k].x, k);
                if (!(d > 0.f) || !isfinite(d)) { bad = true; break; } /* the same in every lane */
                const float rk = sqrtf(d), ir = 1.f / rk;
                if (j > k) g[k] = make_float2(g[k].x * ir, g[k].y * ir);
                else if (j == k) g[k] = make_float2(rk, 0.f);
#pragma unroll
                for (int i = k + 1; i < CQ_NB; i++) { /* G_ij -= conj(R_ki) R_kj, i <= j */
                    const float2 rki = make_float2(__shfl_sync(0xffffffffu, g[k].x, i),
                                                   __shfl_sync(0xffffffffu, g[k].y, i));
                    if (j >= i) g[i] = cjfms(rki, g[k], g[i]);
                }
                /* row k of R is final: X_:k = (e_k - sum_{l<k} X_:l R_lk) / R_kk, then
                   X_:j += X_:k R_kj for j > k (independent of the next Cholesky step) */
                if (j == k) {
#pragma unroll
                    for (int i = 0; i <= k; i++)
                        x[i] = make_float2(((i == k ? 1.f : 0.f) - x[i].x) * ir, -x[i].y * ir);
                }
#pragma unroll
                for (int i = 0; i <= k; i++) {
                    const float2 xik = make_float2(__shfl_sync(0xffffffffu, x[i].x, k),
                                                   __shfl_sync(0xffffffffu, x[i].y, k));
                    if (j > k) x[i] = cfma(xik, g[k], x[i]);
                }
            }
            if (!bad) {
                if (j < kb) {
#pragma unroll
                    for (int i = 0; i < CQ_NB; i++) {
                        if (i <= j) G[(size_t)(k0 + j) * ldg + k0 + i] = g[i];
                        if (i < j) G[(size_t)(k0 + i) * ldg + k0 + j] = x[i];
                    }
                }
            }
            if (lane == 0) *fail = bad;
        }
        __syncthreads();
        if (*fail) return false;
        if (k1 < n) { /* C: R_iq = sum_{l <= i} conj(X_li) G_lq, rows K, columns q >= k1 */
            const int grp = tid >> 3, s = tid & 7;
            const unsigned mask = 0xffu << (lane & 24);
            for (int q = k1 + grp; q < n; q += CQ_THREADS / 8) {
                float2 gq[CQ_NB];
#pragma unroll
                for (int l = 0; l < CQ_NB; l++) gq[l] = l < kb ? G[(size_t)q * ldg + k0 + l] : c0();
                float2 r[CQ_NT];
#pragma unroll
                for (int h = 0; h < CQ_NT; h++) {
                    const int i = s + 8 * h;
                    float2 acc = c0();
                    if (i < kb) {
                        const float ri = 1.f / G[(size_t)(k0 + i) * ldg + k0 + i].x;
#pragma unroll
                        for (int l = 0; l < CQ_NB; l++) /* gq by constant index only (registers) */
                            if (l <= i)
                                acc = cjfma(l < i ? G[(size_t)(k0 + l) * ldg + k0 + i] : make_float2(ri, 0.f), gq[l],
                                            acc);
                    }
                    r[h] = acc;
                }
                __syncwarp(mask); /* the group's column read: write it */
#pragma unroll
                for (int h = 0; h < CQ_NT; h++)
                    if (s + 8 * h < kb) G[(size_t)q * ldg + k0 + s + 8 * h] = r[h];
            }
            __syncthreads();
            /* E: G_iq -= sum_l conj(R_li) R_lq, k1 <= i <= q, by 2 x 2 blocks */
            const int mb = (n - k1 + 1) >> 1, eb = mb * (mb + 1) / 2;
            for (int e = tid; e < eb; e += CQ_THREADS) {
                int bj = (int)((sqrtf(8.f * (float)e + 1.f) - 1.f) * 0.5f);
                if ((bj + 1) * (bj + 2) / 2 <= e) bj++;
                else if (bj * (bj + 1) / 2 > e) bj--;
                const int i0 = k1 + 2 * (e - bj * (bj + 1) / 2), q0 = k1 + 2 * bj;
                float2 acc[2][2];
#pragma unroll
                for (int y = 0; y < 2; y++)
#pragma unroll
                    for (int x = 0; x < 2; x++)
                        acc[y][x] = i0 + x < n && q0 + y < n ? G[(size_t)(q0 + y) * ldg + i0 + x] : c0();
                const float2 *ci0 = G + (size_t)i0 * ldg + k0, *ci1 = ci0 + (i0 + 1 < n ? ldg : 0);
                const float2 *cq0 = G + (size_t)q0 * ldg + k0, *cq1 = cq0 + (q0 + 1 < n ? ldg : 0);
#pragma unroll
                for (int l = 0; l < CQ_NB; l++) {
                    if (l >= kb) break;
                    const float2 a0 = ci0[l], a1 = ci1[l], b0 = cq0[l], b1 = cq1[l];
                    acc[0][0] = cjfms(a0, b0, acc[0][0]);
                    acc[0][1] = cjfms(a1, b0, acc[0][1]);
                    acc[1][0] = cjfms(a0, b1, acc[1][0]);
                    acc[1][1] = cjfms(a1, b1, acc[1][1]);
                }
#pragma unroll
                for (int y = 0; y < 2; y++)
#pragma unroll
                    for (int x = 0; x < 2; x++)
                        if (i0 + x < n && q0 + y < n && i0 + x <= q0 + y) G[(size_t)(q0 + y) * ldg + i0 + x] = acc[y][x];
            }
        }
        __syncthreads();
    }
    return true;
}

/* one k step of a 16-row tile times a panel (8 CQ_NT columns): A from X (columns ka = k0 + c, kb = ka + 4,
 * zero at or past kend), B by bfn(k, j) (j = j0 + 8 b + g) */
template <class BF>
__device__ __forceinline__ void cq_q1_step(const float2 *X, int ldx, int t0, int k0, int kend, int j0, BF bfn,
                                           float (&tr)[CQ_NT][4], float (&ti)[CQ_NT][4])
{
    const int lane = threadIdx.x & 31, g = lane >> 2, c = lane & 3;
    const int ka = k0 + c, kb = ka + 4;
    const float2 *xa = X + (size_t)(ka < kend ? ka : 0) * ldx + t0 + g;
    const float2 *xb = X + (size_t)(kb < kend ? kb : 0) * ldx + t0 + g;
    const float2 av[4] = {ka < kend ? xa[0] : c0(), ka < kend ? xa[8] : c0(), kb < kend ? xb[0] : c0(),
                          kb < kend ? xb[8] : c0()};
    CqFrag4 fa;
    cq_split4(av, fa);
#pragma unroll
    for (int b = 0; b < CQ_NT; b++) {
        const int j = j0 + 8 * b + g;
        const float2 bv[2] = {bfn(ka, j), bfn(kb, j)};
        CqFrag2 fb;
        cq_split2(bv, fb);
        cq_mma(tr[b], ti[b], fa, fb, false);
    }
}
/* In place: X (mp x n, ld ldx) = X R^-1 by the blocked forward substitution X R = T on the
 * tensor cores (3xTF32): R and its diagonal blocks' inverses from cq_chol. Warp w takes the
 * row tiles 16 w, 16 (w + 16), ...; in each, panels J of CQ_NB columns from the left:
 * Y = T_J - X_<J R_<J,J, then X_J = Y R_JJ^-1. A row of X needs only its own row of T:
 * no barrier of the block. */
__device__ void cq_q1(float2 *X, int ldx, int mp, int n, const float2 *G, int ldg)
{
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, c = lane & 3;
    for (int t0 = 16 * warp; t0 < mp; t0 += 16 * CQ_WARPS) {
        for (int j0 = 0; j0 < n; j0 += CQ_NB) {
            const int jend = j0 + CQ_NB < n ? j0 + CQ_NB : n;
            float re[CQ_NT][4], im[CQ_NT][4], tr[CQ_NT][4], ti[CQ_NT][4];
#pragma unroll
            for (int b = 0; b < CQ_NT; b++)
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    const int t = t0 + g + (q >> 1) * 8, j = j0 + 8 * b + 2 * c + (q & 1);
                    const float2 v = j < n ? X[(size_t)j * ldx + t] : c0();
                    re[b][q] = v.x;
                    im[b][q] = v.y;
                    tr[b][q] = ti[b][q] = 0.f;
                }
            /* Y = T_J - X_<J R_<J,J (B = -R_kj, k < j0 <= j) */
            for (int k0 = 0; k0 < j0; k0 += 8) {
                cq_q1_step(X, ldx, t0, k0, j0, j0, [&](int k, int j) {
                    if (j >= n) return c0();
                    const float2 v = G[(size_t)j * ldg + k];
                    return make_float2(-v.x, -v.y);
                }, tr, ti);
                if ((k0 >> 3) % CQ_KC == CQ_KC - 1)
#pragma unroll
                    for (int b = 0; b < CQ_NT; b++) cq_flush(re[b], im[b], tr[b], ti[b]);
            }
#pragma unroll
            for (int b = 0; b < CQ_NT; b++) {
                cq_flush(re[b], im[b], tr[b], ti[b]);
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    const int t = t0 + g + (q >> 1) * 8, j = j0 + 8 * b + 2 * c + (q & 1);
                    if (j < n) X[(size_t)j * ldx + t] = make_float2(re[b][q], im[b][q]);
                    re[b][q] = im[b][q] = 0.f;
                }
            }
            __syncwarp(); /* Y in X_J: the next products read other lanes' rows of it */
            /* X_J = Y R_JJ^-1 (B = R_JJ^-1_kj: X_kj at G[k ldg + j], k < j; 1 / R_jj) */
            for (int k0 = j0; k0 < jend; k0 += 8)
                cq_q1_step(X, ldx, t0, k0, jend, j0, [&](int k, int j) {
                    if (j >= n || k > j) return c0();
                    if (k == j) return make_float2(1.f / G[(size_t)j * ldg + j].x, 0.f);
                    return G[(size_t)k * ldg + j];
                }, tr, ti);
#pragma unroll
            for (int b = 0; b < CQ_NT; b++) cq_flush(re[b], im[b], tr[b], ti[b]);
            __syncwarp(); /* Y read: write X_J */
#pragma unroll
            for (int b = 0; b < CQ_NT; b++)
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
    __shared__ float ratio;
    __shared__ int fail;
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
    bool ok = cq_chol(G1, ldg, n, &fail);
    if (ok) {
        cq_q1(Ts, ldx, mp, n, G1, ldg);
        cq_gram(Ts, ldx, mp, n, G2, ldg);
        ok = cq_chol(G2, ldg, n, &fail);
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
