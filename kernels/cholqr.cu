/* cholqr.cu: batched CholeskyQR2 (R only) on the GPU, issue 47: one block of 512 threads a
 * matrix, the whole matrix in shared memory, the m n^2 products on the tensor cores.
 *
 *     G1 = T^H T,  R1 = chol(G1),  Q1 = T R1^-1,  G2 = Q1^H Q1,  R2 = chol(G2),  R = R2 R1
 *
 * (linalg/cholqr_cpu.c has the CPU's copy and the references.) The steps (docs/benchmarks.md
 * "GPU: CholeskyQR2, the fourth kernel" has each one's cycles):
 * - the Gram products on the tensor cores, 3xTF32 (rtk_mma.cuh: FP32-accurate), complex as
 *   four real products: warp items of two 16 x 8 complex tiles of the upper triangle (one
 *   split of the A fragment for both; one tile an item where two do not fit, n > ~118), the
 *   rows split into S slices so that every warp works (items held in registers); the
 *   slices' partial sums are added in slice order (deterministic: no atomics);
 * - the Cholesky factorizations blocked by panels of CQ_NB = 8 columns, three block barriers
 *   a panel (cq_chol): warp 0 factors the panel's diagonal block in registers by shuffles
 *   (straight-line code, rsqrtf), then inverts it by rows; the row panel R_KJ = R_KK^-H G_KJ
 *   on the tensor cores (the inverse the B operand), the trailing update
 *   G_JJ -= R_KJ^H R_KJ (2 x 2 blocks) on the CUDA cores over the whole block;
 * - Q1 = T R1^-1 on the tensor cores (3xTF32), in place, by the blocked forward substitution
 *   Q1 R1 = T: a warp 16 rows, panels of CQ_NB columns from the left, Y = T_J - Q1_<J R1_<J,J
 *   then Q1_J = Y R1_JJ^-1 with the diagonal blocks' inverses: no block barrier;
 * - G2 takes Q1's place (m >= n), so shared memory holds ldx n + ldg n complex values and n
 *   floats (1 / R_ii of the last factor), ldx = m rounded up to 16, then to 4 mod 16 (the MMA
 *   fragments' loads free of bank conflicts), ldg = n | 1 (odd): 240 x 66 (hard)
 *   164 KB, 192 x 96 (medium) 225 KB;
 * - R = R2 R1 on the tensor cores (3xTF32, a warp a 16 x 8 tile of R's upper triangle),
 *   written to the upper triangle of A (real positive diagonal). Everything else of A is
 *   left as it was.
 * A matrix whose Cholesky breaks down (a pivot not > 0 or not finite) or whose R has
 * min|R_ii| / max|R_ii| < min_ratio is not written: its index goes to fail_list (the
 * caller refactors it by Householder, linalg/gpu_dispatch.cu).
 * Only the CQ_NB x CQ_NB diagonal blocks are inverted (by rows in registers, |X R_KK - I| a
 * small multiple of u |X| |R_KK|); the rest is substitution (test_gpu_qr: the LAPACK ratios
 * at cond 1e2 to 1e6). */
#include "rtk_device.cuh"
#include "rtk_mma.cuh"
#include "cholqr_common.cuh"

namespace rtk {

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
/* a k step's partial sums (real and imaginary parts) before the rounded add. Four
 * accumulators (the four real products apart, interleaved so that consecutive MMAs are
 * independent) measured the same at 240 x 66 (G1 38.5 k cycles, Q1 33 k; 2026-12-04) */
struct CqAcc {
    float r[4], i[4];
};
__device__ __forceinline__ void cq_acc0(CqAcc &t)
{
#pragma unroll
    for (int q = 0; q < 4; q++) t.r[q] = t.i[q] = 0.f;
}
/* t += A B over one k step (3xTF32, complex as four real products, chained on the tensor
 * core's accumulator): conj_a: conj(A) B (the Grams, E), else A B */
__device__ __forceinline__ void cq_mma(CqAcc &t, const CqFrag4 &a, const CqFrag2 &b, bool conj_a)
{
    unsigned nb[2], ns[2];
    float(&tr)[4] = t.r, (&ti)[4] = t.i;
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
__device__ __forceinline__ void cq_flush(float (&re)[4], float (&im)[4], CqAcc &t)
{
#pragma unroll
    for (int q = 0; q < 4; q++) {
        re[q] = __fadd_rn(re[q], t.r[q]);
        im[q] = __fadd_rn(im[q], t.i[q]);
    }
    cq_acc0(t);
}

#ifndef RTK_CQ_GW /* the Gram's n-tiles of 8 columns an item (1 or 2), sharing the A fragment's split */
#define RTK_CQ_GW 2
#endif
static_assert(RTK_CQ_GW == 1 || RTK_CQ_GW == 2, "one or two n-tiles an item");
/* the row block bi's groups of CQ_GW n-tiles (nt n-tiles in all) */
__device__ __forceinline__ int cq_groups(int nt, int bi, int gw)
{
    return nt - 2 * bi > 0 ? (nt - 2 * bi + gw - 1) / gw : 0;
}
/* G (upper triangle, ld ldg) = X^H X for X mp x n (ld ldx, rows m..mp-1 zero), on the
 * tensor cores: items of CQ_GW n-tiles (16 x 8 CQ_GW, the A fragment split once for them) of
 * the upper triangle times S slices of the rows. G may overlap X (G2 over Q1): every read is
 * done before the first write. */
template <int CQ_GW>
__device__ void cq_gram_t(const float2 *X, int ldx, int mp, int n, float2 *G, int ldg)
{
    constexpr int CQ_GITEMS = CQ_GW == 1 ? CQ_ITEMS : 2; /* 3 spilled (124 registers at 2) */
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, c = lane & 3;
    const int mt = (n + 15) >> 4, nt = (n + 7) >> 3, ks = mp >> 3;
    int ngroups = 0; /* row block bi: the n-tiles 2 bi .. nt - 1 in groups of CQ_GW */
    for (int bi = 0; bi < mt; bi++) ngroups += cq_groups(nt, bi, CQ_GW);
    int S = 1, best = 1 << 30; /* slices: the fewest k steps on the busiest warp */
    for (int s = 1; s <= 8 && s <= ks; s++) {
        const int per = (ngroups * s + CQ_WARPS - 1) / CQ_WARPS;
        if (per > CQ_GITEMS) break;
        const int cost = per * ((ks + s - 1) / s);
        if (cost < best) best = cost, S = s;
    }
    float re[CQ_GITEMS][CQ_GW][4], im[CQ_GITEMS][CQ_GW][4];
    int ti0[CQ_GITEMS], tj0[CQ_GITEMS], tsl[CQ_GITEMS];
#pragma unroll
    for (int r = 0; r < CQ_GITEMS; r++) {
#pragma unroll
        for (int w = 0; w < CQ_GW; w++)
#pragma unroll
            for (int q = 0; q < 4; q++) re[r][w][q] = im[r][w][q] = 0.f;
        const int item = warp + CQ_WARPS * r;
        tsl[r] = -1;
        ti0[r] = tj0[r] = 0;
        if (item >= ngroups * S) continue;
        int grp = item / S, bi = 0;
        tsl[r] = item - grp * S;
        while (grp >= cq_groups(nt, bi, CQ_GW)) {
            grp -= cq_groups(nt, bi, CQ_GW);
            bi++;
        }
        ti0[r] = 16 * bi;
        tj0[r] = 8 * (2 * bi + CQ_GW * grp);
        const int nw = nt - (2 * bi + CQ_GW * grp) < CQ_GW ? nt - (2 * bi + CQ_GW * grp) : CQ_GW; /* n-tiles here */
        const int ia = ti0[r] + g, ib = ia + 8;
        const float2 *pa = X + (size_t)(ia < n ? ia : 0) * ldx, *pb = X + (size_t)(ib < n ? ib : 0) * ldx;
        const bool va = ia < n, vb = ib < n;
        const float2 *pj[CQ_GW];
        bool vj[CQ_GW];
#pragma unroll
        for (int w = 0; w < CQ_GW; w++) {
            const int jb = tj0[r] + 8 * w + g;
            vj[w] = jb < n;
            pj[w] = X + (size_t)(jb < n ? jb : 0) * ldx;
        }
        const int k0 = tsl[r] * ks / S, k1 = (tsl[r] + 1) * ks / S;
        CqAcc acc[CQ_GW];
#pragma unroll
        for (int w = 0; w < CQ_GW; w++) cq_acc0(acc[w]);
        for (int k = k0; k < k1; k++) {
            const int t = 8 * k + c;
            const float2 av[4] = {va ? pa[t] : c0(), vb ? pb[t] : c0(), va ? pa[t + 4] : c0(),
                                  vb ? pb[t + 4] : c0()};
            CqFrag4 fa;
            cq_split4(av, fa);
#pragma unroll
            for (int w = 0; w < CQ_GW; w++) {
                if (w >= nw) break; /* warp-uniform */
                const float2 bv[2] = {vj[w] ? pj[w][t] : c0(), vj[w] ? pj[w][t + 4] : c0()};
                CqFrag2 fb;
                cq_split2(bv, fb);
                cq_mma(acc[w], fa, fb, true);
            }
            if ((k - k0) % CQ_KC == CQ_KC - 1)
#pragma unroll
                for (int w = 0; w < CQ_GW; w++) cq_flush(re[r][w], im[r][w], acc[w]);
        }
#pragma unroll
        for (int w = 0; w < CQ_GW; w++) cq_flush(re[r][w], im[r][w], acc[w]);
    }
    __syncthreads(); /* X read in full: G may take its place */
    for (int s = 0; s < S; s++) { /* the slices' sums in slice order */
#pragma unroll
        for (int r = 0; r < CQ_GITEMS; r++) {
            if (tsl[r] != s) continue;
#pragma unroll
            for (int w = 0; w < CQ_GW; w++)
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    const int i = ti0[r] + g + (q >> 1) * 8, j = tj0[r] + 8 * w + 2 * c + (q & 1);
                    if (i < n && j < n && i <= j) {
                        float2 *p = G + (size_t)j * ldg + i;
                        *p = s == 0 ? make_float2(re[r][w][q], im[r][w][q])
                                    : make_float2(__fadd_rn(p->x, re[r][w][q]), __fadd_rn(p->y, im[r][w][q]));
                    }
                }
        }
        __syncthreads();
    }
}

/* the Gram by items of two n-tiles where they fit the registers' items (n <= 118 or so), else one */
__device__ void cq_gram(const float2 *X, int ldx, int mp, int n, float2 *G, int ldg)
{
    const int mt = (n + 15) >> 4, nt = (n + 7) >> 3;
    int ng = 0;
    for (int bi = 0; bi < mt; bi++) ng += cq_groups(nt, bi, RTK_CQ_GW);
    if (RTK_CQ_GW == 2 && ng <= 2 * CQ_WARPS) cq_gram_t<RTK_CQ_GW>(X, ldx, mp, n, G, ldg);
    else cq_gram_t<1>(X, ldx, mp, n, G, ldg);
}

/* In place: G (upper, ld ldg) = R^H R, R upper with a real positive diagonal, blocked by
 * panels of CQ_NB columns (k0 = CQ_NB p), three barriers a panel instead of one a column:
 * A. warp 0 factors the diagonal block G_KK = R_KK^H R_KK in registers (lane j holds column
 *    j; step k's row of R is passed by shuffles, no barrier; 1 / R_kk by rsqrtf, kept in
 *    dinv), then inverts it by rows (X = R_KK^-1, lane i row i: X_iq = (d_iq - sum_{l<q}
 *    X_il R_lq) / R_qq, R_KK from shared memory); R_KK goes to the upper triangle, X's
 *    strict upper triangle to the block's strict lower one (X_ij at G[(k0 + i) ldg + k0 + j],
 *    i < j; X_jj = dinv[k0 + j]). The factor and the inverse in one sweep by shuffles cost
 *    34 k cycles a factorization at 240 x 66, this 19-21 k (2026-12-04);
 * C. the row panel R_KJ = X^H G_KJ (J: the columns right of the block) on the tensor cores,
 *    a warp 16 columns, in place (its loads before its stores);
 * E. the trailing triangle G_JJ -= R_KJ^H R_KJ by 2 x 2 blocks over the block's threads
 *    (RTK_CQ_EMMA: on the tensor cores, slower).
 * Returns false (every thread alike) when a pivot is not > 0 or not finite. */
#ifndef RTK_CQ_EMMA /* the trailing update E on the tensor cores (1: 15.7 k cycles a factorization at 240 x 66,
                        against 11.5 k on the CUDA cores, 2026-12-04) or the CUDA cores (0) */
#define RTK_CQ_EMMA 0
#endif
/* the panel width: one MMA k step (C's B operand is the 8 x 8 X); 16 measured slower at
 * 1502ed9 (docs/benchmarks.md) */
constexpr int CQ_NB = 8, CQ_NT = CQ_NB / 8; /* CQ_NT: n-tiles of 8 a panel (cq_q1) */
__device__ bool cq_chol(float2 *G, int ldg, int n, float *dinv, int *fail, int sub = 9)
{
    const int tid = threadIdx.x, lane = tid & 31;
#ifdef RTK_CQ_STAMPS
    long long tsub = clock64();
#endif
    (void)sub;
    for (int k0 = 0; k0 < n; k0 += CQ_NB) {
        const int kb = n - k0 < CQ_NB ? n - k0 : CQ_NB, k1 = k0 + kb;
        if (tid < 32) { /* A: the diagonal block, warp 0: the factor, then its inverse. Straight-line
                           code: a short last block (kb < CQ_NB) padded by the identity, a pivot
                           not > 0 or not finite noted and the sweep carried on (NaN is harmless) */
            const int j = lane;
            float2 g[CQ_NB];
#pragma unroll
            for (int i = 0; i < CQ_NB; i++)
                g[i] = j < kb ? (i <= j ? G[(size_t)(k0 + j) * ldg + k0 + i] : c0())
                              : make_float2(i == j ? 1.f : 0.f, 0.f);
            bool bad = false;
            float myir = 0.f;
#pragma unroll
            for (int k = 0; k < CQ_NB; k++) { /* Cholesky step k: lane j holds column j */
                const float d = __shfl_sync(0xffffffffu, g[k].x, k);
                bad |= !(d > 0.f) || !isfinite(d); /* the same in every lane */
                float ir = rsqrtf(d); /* 2 ulp; one Newton step to about 1 (1 x 1's diag ratio 12.2 -> 8) */
                ir = ir * fmaf(-0.5f * d * ir, ir, 1.5f);
                const float rk = d * ir;
                if (j > k) g[k] = make_float2(g[k].x * ir, g[k].y * ir);
                else if (j == k) g[k] = make_float2(rk, 0.f), myir = ir;
#pragma unroll
                for (int i = k + 1; i < CQ_NB; i++) { /* G_ij -= conj(R_ki) R_kj, i <= j */
                    const float2 rki = make_float2(__shfl_sync(0xffffffffu, g[k].x, i),
                                                   __shfl_sync(0xffffffffu, g[k].y, i));
                    if (j >= i) g[i] = cjfms(rki, g[k], g[i]);
                }
            }
            if (j < kb) {
#pragma unroll
                for (int i = 0; i < CQ_NB; i++)
                    if (i <= j) G[(size_t)(k0 + j) * ldg + k0 + i] = g[i];
                dinv[k0 + j] = myir;
            }
            __syncwarp();
            { /* X = R_KK^-1 by rows, lane i row i: X_iq = (d_iq - sum_{l<q} X_il R_lq) / R_qq */
                const int i = lane;
                float2 x[CQ_NB];
#pragma unroll
                for (int q = 0; q < CQ_NB; q++) {
                    const bool in = q < kb;
                    float2 acc = make_float2(q == i ? 1.f : 0.f, 0.f);
#pragma unroll
                    for (int l = 0; l < q; l++) /* x[l] = 0 for l < i */
                        acc = cfms(x[l], in ? G[(size_t)(k0 + q) * ldg + k0 + l] : c0(), acc);
                    const float iq = in ? dinv[k0 + q] : 1.f;
                    x[q] = q >= i ? make_float2(acc.x * iq, acc.y * iq) : c0();
                }
                if (i < kb) {
#pragma unroll
                    for (int q = 0; q < CQ_NB; q++)
                        if (i < q && q < kb) G[(size_t)(k0 + i) * ldg + k0 + q] = x[q];
                }
            }
            if (lane == 0) *fail = bad;
        }
        __syncthreads();
        CQ_SUB(tsub, sub);
        if (*fail) return false;
        if (k1 < n) {
            { /* C on the tensor cores: conj(R_KJ)^T = G_KJ^H X, a warp 16 columns q (A rows), X the
                 B operand (X_li, l <= i; 1 / R_ii on the diagonal); read, then written in place */
                const int warp = tid >> 5, g = lane >> 2, c = lane & 3;
                for (int q0 = k1 + 16 * warp; q0 < n; q0 += 16 * CQ_WARPS) {
                    const int qa = q0 + g, qb = qa + 8;
                    const float2 *pa = G + (size_t)(qa < n ? qa : 0) * ldg + k0,
                                 *pb = G + (size_t)(qb < n ? qb : 0) * ldg + k0;
                    const bool va = qa < n, vb = qb < n;
                    const float2 av[4] = {va ? pa[c] : c0(), vb ? pb[c] : c0(), va ? pa[c + 4] : c0(),
                                          vb ? pb[c + 4] : c0()};
                    const int ib = g; /* B[l][ib] = X_l,ib, l = c, c + 4 */
                    const float2 bv[2] = {c < ib ? G[(size_t)(k0 + c) * ldg + k0 + ib]
                                                 : c == ib ? make_float2(dinv[k0 + ib], 0.f) : c0(),
                                          c + 4 < ib ? G[(size_t)(k0 + c + 4) * ldg + k0 + ib]
                                                     : c + 4 == ib ? make_float2(dinv[k0 + ib], 0.f) : c0()};
                    CqFrag4 fa;
                    CqFrag2 fb;
                    cq_split4(av, fa);
                    cq_split2(bv, fb);
                    CqAcc t;
                    cq_acc0(t);
                    cq_mma(t, fa, fb, true);
                    __syncwarp(); /* the columns read: write R_KJ over them */
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const int q = q0 + g + (e >> 1) * 8, i = 2 * c + (e & 1);
                        if (q < n) G[(size_t)q * ldg + k0 + i] = make_float2(t.r[e], -t.i[e]);
                    }
                }
            }
            __syncthreads();
            CQ_SUB(tsub, sub + 1);
#if RTK_CQ_EMMA
            { /* E on the tensor cores: G_JJ -= R_KJ^H R_KJ by 16 x 8 tiles of the trailing upper
                 triangle, a warp a tile (round robin), kb / 8 k steps; rows K read, rows J written */
                const int warp = tid >> 5, g = lane >> 2, c = lane & 3;
                const int np = n - k1, mte = (np + 15) >> 4, nte = (np + 7) >> 3;
                int tile = 0;
                for (int bi = 0; bi < mte; bi++)
                    for (int tj = 2 * bi; tj < nte; tj++, tile++) {
                        if (tile % CQ_WARPS != warp) continue;
                        const int i0 = k1 + 16 * bi, j0 = k1 + 8 * tj, ia = i0 + g, ib = ia + 8, jb = j0 + g;
                        const bool va = ia < n, vb = ib < n, vj = jb < n;
                        const float2 *pa = G + (size_t)(va ? ia : 0) * ldg + k0,
                                     *pb = G + (size_t)(vb ? ib : 0) * ldg + k0,
                                     *pj = G + (size_t)(vj ? jb : 0) * ldg + k0;
                        CqAcc t;
                        cq_acc0(t);
                        for (int kk = 0; kk < kb; kk += 8) { /* kb a multiple of 8 here (k1 < n) */
                            const float2 av[4] = {va ? pa[kk + c] : c0(), vb ? pb[kk + c] : c0(),
                                                  va ? pa[kk + c + 4] : c0(), vb ? pb[kk + c + 4] : c0()};
                            const float2 bv[2] = {vj ? pj[kk + c] : c0(), vj ? pj[kk + c + 4] : c0()};
                            CqFrag4 fa;
                            CqFrag2 fb;
                            cq_split4(av, fa);
                            cq_split2(bv, fb);
                            cq_mma(t, fa, fb, true);
                        }
#pragma unroll
                        for (int e = 0; e < 4; e++) {
                            const int i = i0 + g + (e >> 1) * 8, j = j0 + 2 * c + (e & 1);
                            if (i <= j && j < n) {
                                float2 *p = G + (size_t)j * ldg + i;
                                *p = make_float2(p->x - (t.r[e]), p->y - (t.i[e]));
                            }
                        }
                    }
            }
#else
            /* E: G_iq -= sum_l conj(R_li) R_lq, k1 <= i <= q, by 2 x 2 blocks */
            const int mb = (n - k1 + 1) >> 1, eb = mb * (mb + 1) / 2;
            for (int e = tid; e < eb; e += CQ_THREADS) {
                const float v = 8.f * (float)e + 1.f; /* an approximate root: corrected below */
                int bj = (int)((v * rsqrtf(v) - 1.f) * 0.5f);
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
#endif
        }
        __syncthreads();
        CQ_SUB(tsub, sub + 2);
    }
    return true;
}

/* one k step of a 16-row tile times a panel (8 CQ_NT columns): A from X (columns ka = k0 + c, kb = ka + 4,
 * zero at or past kend), B by bfn(k, j) (j = j0 + 8 b + g) */
template <class BF>
__device__ __forceinline__ void cq_q1_step(const float2 *X, int ldx, int t0, int k0, int kend, int j0, BF bfn,
                                           CqAcc (&t)[CQ_NT])
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
        cq_mma(t[b], fa, fb, false);
    }
}
/* In place: X (mp x n, ld ldx) = X R^-1 by the blocked forward substitution X R = T on the
 * tensor cores (3xTF32): R and its diagonal blocks' inverses from cq_chol. Warp w takes the
 * row tiles 16 w, 16 (w + 16), ...; in each, panels J of CQ_NB columns from the left:
 * Y = T_J - X_<J R_<J,J, then X_J = Y R_JJ^-1. A row of X needs only its own row of T:
 * no barrier of the block. */
__device__ void cq_q1(float2 *X, int ldx, int mp, int n, const float2 *G, int ldg, const float *dinv)
{
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, c = lane & 3;
    for (int t0 = 16 * warp; t0 < mp; t0 += 16 * CQ_WARPS) {
        for (int j0 = 0; j0 < n; j0 += CQ_NB) {
            const int jend = j0 + CQ_NB < n ? j0 + CQ_NB : n;
            float re[CQ_NT][4], im[CQ_NT][4];
            CqAcc acc[CQ_NT];
#pragma unroll
            for (int b = 0; b < CQ_NT; b++) cq_acc0(acc[b]);
#pragma unroll
            for (int b = 0; b < CQ_NT; b++)
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    const int t = t0 + g + (q >> 1) * 8, j = j0 + 8 * b + 2 * c + (q & 1);
                    const float2 v = j < n ? X[(size_t)j * ldx + t] : c0();
                    re[b][q] = v.x;
                    im[b][q] = v.y;
                }
            /* Y = T_J - X_<J R_<J,J (B = -R_kj, k < j0 <= j) */
            for (int k0 = 0; k0 < j0; k0 += 8) {
                cq_q1_step(X, ldx, t0, k0, j0, j0, [&](int k, int j) {
                    if (j >= n) return c0();
                    const float2 v = G[(size_t)j * ldg + k];
                    return make_float2(-v.x, -v.y);
                }, acc);
                if ((k0 >> 3) % CQ_KC == CQ_KC - 1)
#pragma unroll
                    for (int b = 0; b < CQ_NT; b++) cq_flush(re[b], im[b], acc[b]);
            }
#pragma unroll
            for (int b = 0; b < CQ_NT; b++) {
                cq_flush(re[b], im[b], acc[b]);
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
                    if (k == j) return make_float2(dinv[j], 0.f);
                    return G[(size_t)k * ldg + j];
                }, acc);
#pragma unroll
            for (int b = 0; b < CQ_NT; b++) cq_flush(re[b], im[b], acc[b]);
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

/* R (upper triangle of Ak, ld lda) = R2 R1 on the tensor cores (3xTF32): R2 and R1 the upper
 * triangles of G2 and G1 (ld ldg; what lies below them is masked), the tiles 16 x 8 of R's
 * upper triangle a warp each (round robin), the k steps q = 16 bi .. 8 tj + 7 only */
__device__ void cq_r2r1(const float2 *G2, const float2 *G1, int ldg, int n, float2 *Ak, int lda)
{
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, c = lane & 3;
    const int mt = (n + 15) >> 4, nt = (n + 7) >> 3;
    int tile = 0;
    for (int bi = 0; bi < mt; bi++)
        for (int tj = 2 * bi; tj < nt; tj++, tile++) {
            if (tile % CQ_WARPS != warp) continue;
            const int ia = 16 * bi + g, ib = ia + 8, jb = 8 * tj + g;
            float re[4] = {0.f, 0.f, 0.f, 0.f}, im[4] = {0.f, 0.f, 0.f, 0.f};
            CqAcc acc;
            cq_acc0(acc);
            for (int kk = 2 * bi; kk <= tj; kk++) {
                const int ka = 8 * kk + c, kb = ka + 4;
                const float2 av[4] = {ia <= ka && ka < n ? G2[(size_t)ka * ldg + ia] : c0(),
                                      ib <= ka && ka < n ? G2[(size_t)ka * ldg + ib] : c0(),
                                      ia <= kb && kb < n ? G2[(size_t)kb * ldg + ia] : c0(),
                                      ib <= kb && kb < n ? G2[(size_t)kb * ldg + ib] : c0()};
                const float2 bv[2] = {ka <= jb && jb < n ? G1[(size_t)jb * ldg + ka] : c0(),
                                      kb <= jb && jb < n ? G1[(size_t)jb * ldg + kb] : c0()};
                CqFrag4 fa;
                CqFrag2 fb;
                cq_split4(av, fa);
                cq_split2(bv, fb);
                cq_mma(acc, fa, fb, false);
                if ((kk - 2 * bi) % CQ_KC == CQ_KC - 1) cq_flush(re, im, acc);
            }
            cq_flush(re, im, acc);
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int i = 16 * bi + g + (q >> 1) * 8, j = 8 * tj + 2 * c + (q & 1);
                if (i <= j && j < n) Ak[(size_t)j * lda + i] = make_float2(re[q], im[q]);
            }
        }
}

__global__ void __launch_bounds__(CQ_THREADS, 1) cholqr2_kernel(int m, int n, float2 *A, int lda,
                                                             long long stride, float min_ratio,
                                                             int *fail_list)
{
    extern __shared__ float2 sm[];
    const CqLayout L = cq_layout(m, n);
    const int ldx = L.ldx, ldg = L.ldg, mp = L.mp;
    float2 *Ts = sm, *G1 = Ts + (size_t)ldx * n, *G2 = Ts; /* G2 over Q1, dead once G2 is formed */
    float *dinv = (float *)(G1 + (size_t)ldg * n); /* 1 / R_ii of the factor last formed */
    __shared__ float ratio;
    __shared__ int fail;
    const int k = blockIdx.x;
    float2 *Ak = A + (long long)k * stride;
    CQ_STAMP(0);
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
    CQ_STAMP(1);
    cq_gram(Ts, ldx, mp, n, G1, ldg);
    CQ_STAMP(2);
    bool ok = cq_chol(G1, ldg, n, dinv, &fail, 9);
    CQ_STAMP(3);
    if (ok) {
        cq_q1(Ts, ldx, mp, n, G1, ldg, dinv);
        CQ_STAMP(4);
        cq_gram(Ts, ldx, mp, n, G2, ldg);
        CQ_STAMP(5);
        ok = cq_chol(G2, ldg, n, dinv, &fail, 12);
        CQ_STAMP(6);
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
        CQ_STAMP(7);
        ok = ratio >= min_ratio;
    }
    if (!ok) {
        if (threadIdx.x == 0) fail_list[1 + atomicAdd(fail_list, 1)] = k;
        return;
    }
    cq_r2r1(G2, G1, ldg, n, Ak, lda); /* R = R2 R1 */
#ifdef RTK_CQ_STAMPS
    __syncthreads();
    CQ_STAMP(8);
#endif
}

} // namespace rtk

using namespace rtk;

static size_t cq_smem(int m, int n)
{
    const CqLayout L = cq_layout(m, n);
    return cq_bytes(L.ldx, L.ldg, n);
}

extern "C" int rtk_cholqr2_fits(int m, int n, int passes, int smem_limit)
{
    if (passes == 1) return rtk_cholqr1_fits(m, n, smem_limit);
    return m >= n && n >= 1 && n <= RTK_CHOLQR2_MAX_N && cq_smem(m, n) <= (size_t)smem_limit;
}

extern "C" int rtk_cholqr2_launch(int m, int n, int batch, void *A, int lda, long long stride, int passes,
                                  float min_ratio, int *fail_list, void *stream)
{
    if (batch <= 0) return cudaSuccess;
    if (passes == 1) return rtk_cholqr1_launch(m, n, batch, A, lda, stride, min_ratio, fail_list, stream);
    if (passes != 2) return cudaErrorInvalidValue;
    const size_t smem = cq_smem(m, n);
    cudaError_t e = cudaFuncSetAttribute(cholqr2_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)smem);
    if (e != cudaSuccess) return e;
    cholqr2_kernel<<<batch, CQ_THREADS, smem, (cudaStream_t)stream>>>(m, n, (float2 *)A, lda, stride,
                                                                     min_ratio, fail_list);
    return cudaGetLastError();
}
