/* rtk_solve.cuh: the triangular MVDR solvers, R^H R z = v, w = z / (v^H z): by lanes, by
 * warp, blocked, and the solver warp of the fused kernels (part of rtk_device.cuh). */
#ifndef RTK_SOLVE_CUH
#define RTK_SOLVE_CUH

#include <cuda_runtime.h>

#include "rtk_math.cuh"
#include "rtk_sync.cuh"

namespace rtk {

/* ---- MVDR solves: R^H R z = v, w = z / (v^H z) ---------------------------------------
 * R(i, l) = R[i*rs + l*cs] (upper triangle only is read), dinv[i] = 1 / R(i, i). */

/* One lane per beam, the whole vector in registers (n <= NC, NC <= 16): no shuffles, R
 * read through broadcasts; measured faster than the warp solver for n = 16 (docs/kernels/design.md).
 * Lanes lane0, lane0 + nlanes, ... take the beams. */
template <int NC, bool NORM_Y = true>
__device__ __forceinline__ void solve_beams_lanes(const float2 *R, int rs, int cs,
                                                  const float2 *dinv, int n, int nbeams,
                                                  const float2 *V, float2 *Wk, int lane0,
                                                  int nlanes)
{
    for (int b = lane0; b < nbeams; b += nlanes) {
        const float2 *v = V + (size_t)b * n;
        float2 y[NC];
#pragma unroll
        for (int i = 0; i < NC; i++) y[i] = i < n ? v[i] : c0();
#pragma unroll
        for (int i = 0; i < NC; i++) { /* forward: R^H y = v */
            if (i < n) {
                y[i] = cmul(y[i], cconj(dinv[i]));
#pragma unroll
                for (int l = i + 1; l < NC; l++)
                    if (l < n) y[l] = cjfms(R[i * rs + l * cs], y[i], y[l]);
            }
        }
        /* v^H z = y^H R R^-1 y = ||y||^2: no second read of v (NORM_Y; else v^H z) */
        float ny = 0.f;
        if constexpr (NORM_Y) {
#pragma unroll
            for (int i = 0; i < NC; i++)
                if (i < n) ny = fmaf(y[i].x, y[i].x, fmaf(y[i].y, y[i].y, ny));
        }
#pragma unroll
        for (int j = NC - 1; j >= 0; j--) { /* back: R z = y */
            if (j < n) {
                y[j] = cmul(y[j], dinv[j]);
#pragma unroll
                for (int i = 0; i < j; i++) y[i] = cfms(R[i * rs + j * cs], y[j], y[i]);
            }
        }
        float2 is;
        if constexpr (NORM_Y) {
            is = make_float2(1.f / ny, 0.f);
        } else {
            float2 s = c0();
#pragma unroll
            for (int i = 0; i < NC; i++)
                if (i < n) s = cjfma(v[i], y[i], s);
            is = crecip(s);
        }
        float2 *w = Wk + (size_t)b * n;
#pragma unroll
        for (int i = 0; i < NC; i++)
            if (i < n) w[i] = cmul(y[i], is);
    }
}

/* One warp per group of NB beams, lanes over the rows (n <= 32*RR): column-oriented
 * substitutions, y_i broadcast by a shuffle per step, the NB beams' chains interleaved
 * (instruction-level parallelism on a latency-bound chain of 2n steps). The step loops
 * stay rolled so that the code stays in the instruction cache. Called by whole warps;
 * warp `wid` of `nw` takes beam groups wid, wid + nw, ... DOT_FWD: the forward
 * substitution as dot products over columns of R (for R read in place from global
 * memory, column-major: coalesced). */
template <int RR, int NB, bool DOT_FWD = false>
__device__ __forceinline__ void solve_beams_warp(const float2 *R, int rs, int cs,
                                                 const float2 *dinv, int n, int nbeams,
                                                 const float2 *V, float2 *Wk, int wid, int nw)
{
    const int lane = threadIdx.x & 31;
    for (int b0 = NB * wid; b0 < nbeams; b0 += NB * nw) {
        float2 y[NB][RR];
#pragma unroll
        for (int nb = 0; nb < NB; nb++) {
            const float2 *v = V + (size_t)min(b0 + nb, nbeams - 1) * n;
#pragma unroll
            for (int r = 0; r < RR; r++) {
                const int l = lane + 32 * r;
                y[nb][r] = l < n ? v[l] : c0();
            }
        }
        if constexpr (DOT_FWD) {
            /* forward as dot products: y_l = (v_l - sum_{i<l} conj(R(i, l)) y_i) /
             * conj(R_ll). Column l of R is contiguous when R is column-major in global
             * memory (rs = 1), so the warp's loads coalesce; the column sweep below reads
             * row i of R, 32 scattered sectors per load in that layout. */
#pragma unroll 1
            for (int l = 0; l < n; l++) {
                const int rl = l >> 5;
                float2 part[NB];
#pragma unroll
                for (int nb = 0; nb < NB; nb++) part[nb] = c0();
#pragma unroll
                for (int r = 0; r < RR; r++) {
                    const int i = lane + 32 * r;
                    if (r <= rl && i < l) {
                        const float2 e = R[i * rs + l * cs];
#pragma unroll
                        for (int nb = 0; nb < NB; nb++) part[nb] = cjfma(e, y[nb][r], part[nb]);
                    }
                }
#pragma unroll
                for (int nb = 0; nb < NB; nb++) part[nb] = group_sum2<32>(part[nb], 0xffffffffu);
                const float2 d = cconj(dinv[l]);
#pragma unroll
                for (int r = 0; r < RR; r++)
                    if (r == rl && lane == (l & 31)) {
#pragma unroll
                        for (int nb = 0; nb < NB; nb++)
                            y[nb][r] = cmul(make_float2(y[nb][r].x - part[nb].x,
                                                        y[nb][r].y - part[nb].y), d);
                    }
            }
        } else {
        /* forward: y_i = y_i / conj(R_ii), then y_l -= conj(R(i, l)) y_i for l > i */
#pragma unroll
        for (int r = 0; r < RR; r++) {
            const int cnt = min(32, n - 32 * r);
#pragma unroll 1
            for (int ii = 0; ii < cnt; ii++) {
                const int i = 32 * r + ii;
                const float2 d = cconj(dinv[i]);
                float2 t[NB];
#pragma unroll
                for (int nb = 0; nb < NB; nb++) t[nb] = shfl2(cmul(y[nb][r], d), ii);
                if (lane == ii) {
#pragma unroll
                    for (int nb = 0; nb < NB; nb++) y[nb][r] = t[nb];
                }
#pragma unroll
                for (int r2 = r; r2 < RR; r2++) {
                    const int l = lane + 32 * r2;
                    if (l > i && l < n) {
                        const float2 e = R[i * rs + l * cs];
#pragma unroll
                        for (int nb = 0; nb < NB; nb++) y[nb][r2] = cjfms(e, t[nb], y[nb][r2]);
                    }
                }
            }
        }
        }
        /* back: z_j = y_j / R_jj, then y_i -= R(i, j) z_j for i < j */
#pragma unroll
        for (int r = RR - 1; r >= 0; r--) {
            const int cnt = min(32, n - 32 * r);
#pragma unroll 1
            for (int jj = cnt - 1; jj >= 0; jj--) {
                const int j = 32 * r + jj;
                const float2 d = dinv[j];
                float2 t[NB];
#pragma unroll
                for (int nb = 0; nb < NB; nb++) t[nb] = shfl2(cmul(y[nb][r], d), jj);
                if (lane == jj) {
#pragma unroll
                    for (int nb = 0; nb < NB; nb++) y[nb][r] = t[nb];
                }
#pragma unroll
                for (int r2 = 0; r2 <= r; r2++) {
                    const int i = lane + 32 * r2;
                    if (i < j) {
                        const float2 e = R[i * rs + j * cs];
#pragma unroll
                        for (int nb = 0; nb < NB; nb++) y[nb][r2] = cfms(e, t[nb], y[nb][r2]);
                    }
                }
            }
        }
        /* w = z / (v^H z) */
        float2 s[NB];
#pragma unroll
        for (int nb = 0; nb < NB; nb++) {
            const float2 *v = V + (size_t)min(b0 + nb, nbeams - 1) * n;
            s[nb] = c0();
#pragma unroll
            for (int r = 0; r < RR; r++) {
                const int l = lane + 32 * r;
                if (l < n) s[nb] = cjfma(v[l], y[nb][r], s[nb]);
            }
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
#pragma unroll
            for (int nb = 0; nb < NB; nb++) {
                s[nb].x += __shfl_xor_sync(0xffffffffu, s[nb].x, o);
                s[nb].y += __shfl_xor_sync(0xffffffffu, s[nb].y, o);
            }
#pragma unroll
        for (int nb = 0; nb < NB; nb++) {
            if (b0 + nb >= nbeams) break;
            const float2 is = crecip(s[nb]);
            float2 *w = Wk + (size_t)(b0 + nb) * n;
#pragma unroll
            for (int r = 0; r < RR; r++) {
                const int l = lane + 32 * r;
                if (l < n) w[l] = cmul(y[nb][r], is);
            }
        }
    }
}

/* Blocked MVDR solves for one matrix by its whole thread block (NT threads,
 * __syncthreads; docs/kernels/journal.md "Blocked substitutions"). The substitutions' chain of 2n
 * dependent steps (shuffle, scale, update: ~300 cycles a step in solve_beams_warp) becomes
 * 2(NBLK - 1) block steps of BS-term dot products, NBLK = ceil(n / BS):
 *   X_B = R_BB^-1 for every diagonal block (a column a thread, in parallel);
 *   P_CB = R_CB X_BB (C < B) into R's free lower triangle, Q_BC = X_BB R_BC (B < C) in place
 *   of R_BC; then for each chunk of NBC beams
 *   forward  R^H y = v:  y = blockdiag(X)^H v, then for B = 0, 1, ...: y_C -= P_BC^H y_B (C > B)
 *   backward R z = y:    z = blockdiag(X) y,   then for C = NBLK-1, ...: z_B -= Q_BC z_C (B < C)
 *   w = z / (v^H z),
 * one barrier a block step (the rows below (above) a finished block are updated by all
 * threads at once, an output (row, beam) a thread). The first chunk's v is loaded into
 * registers before the setup and staged in shared memory after it (its latency hidden).
 * R: row-major R(i, l) = R[i * ld + l] (the upper triangle is read, then overwritten; the
 * strict lower triangle is written), dinv[i] = 1 / R_ii (finite and nonzero: checked
 * before). scratch: BlockedSolve::scratch_f2(NC) words (the dataflow kernels' reflector
 * buffers, free after the factorization). Variants measured and dropped (docs/kernels/design.md): P's and
 * Q's output loops rolled; z_B and w_C merged into the block steps (fewer phases). */
template <int BS, int NBC>
struct BlockedSolve {
    static constexpr int YS = NBC + 1; /* Y/Z row stride: odd, bank-conflict free by row */
    static __host__ __device__ constexpr int scratch_f2(int nc) { return nc * BS + 3 * nc * YS; }
};

template <int BS, int NBC, int NT, int NC, bool INL = false>
__device__ __forceinline__ void solve_beams_blocked(float2 *R, int ld, const float2 *dinv, int n,
                                                    int nbeams, const float2 *V, float2 *Wk,
                                                    int t, float2 *scratch, float2 *yin = nullptr)
{
    constexpr int YS = BlockedSolve<BS, NBC>::YS, VPT = (NC * NBC + NT - 1) / NT;
    const int nblk = (n + BS - 1) / BS;
    /* INL: the first chunk's y was made by the solver warp during the factorization
     * (blk_forward_warp) in its own buffer, yin; P serves only the chunks after it */
    float2 *X = scratch;          /* X[(B*BS + j)*BS + i] = (R_BB^-1)(i, j), columns j < n */
    float2 *Y = INL ? yin : X + NC * BS; /* Y[l*YS + b]: beam b0 + b, row l                */
    float2 *Z = X + NC * BS + NC * YS;
    float2 *Vs = Z + NC * YS;     /* the chunk's v, Vs[l*YS + b]                           */
    float2 vp[VPT];               /* the first chunk's v, in flight during the setup       */
#pragma unroll
    for (int u = 0; u < VPT; u++) {
        const int e = t + u * NT, b = e / n, l = e - b * n;
        vp[u] = (e < n * NBC && b < nbeams) ? __ldg(V + (size_t)b * n + l) : c0();
    }
    /* X_B: column j of the inverse of an upper-triangular block, bottom-up in place
     * (i = j - 1 .. 0; a rolled loop: cold code, docs/kernels/design.md); entries below the diagonal are 0
     * (R's entries past n are never read) */
    for (int task = t; task < nblk * BS; task += NT) {
        const int c0b = (task / BS) * BS, j = task % BS, cj = c0b + j;
        if (cj >= n) continue;
        float2 *x = X + cj * BS;
#pragma unroll 1
        for (int i = BS - 1; i > j; i--) x[i] = c0();
        x[j] = dinv[cj];
#pragma unroll 1
        for (int i = j - 1; i >= 0; i--) {
            float2 s = c0();
#pragma unroll
            for (int k = 1; k < BS; k++)
                if (i + k <= j) s = cfma(R[(c0b + i) * ld + c0b + i + k], x[i + k], s);
            x[i] = cmul(make_float2(-s.x, -s.y), dinv[c0b + i]);
        }
    }
    __syncthreads();
    /* P_il = sum_{k <= l'} R(i, cB + k) X_C(k, l'), l = cB + l', for rows i above block C:
     * into R(l, i) (the lower triangle) */
    for (int task = t; (!INL || nbeams > NBC) && task < nblk * n; task += NT) {
        const int C = task / n, i = task - C * n, cb = C * BS, nb = min(BS, n - cb);
        if (i >= cb) continue;
        float2 r[BS];
#pragma unroll
        for (int k = 0; k < BS; k++) r[k] = k < nb ? R[i * ld + cb + k] : c0();
#pragma unroll
        for (int l = 0; l < BS; l++) {
            if (l < nb) {
                float2 p = c0();
#pragma unroll
                for (int k = 0; k <= l; k++) p = cfma(r[k], X[(cb + l) * BS + k], p);
                R[(cb + l) * ld + i] = p;
            }
        }
    }
#pragma unroll
    for (int u = 0; u < VPT; u++) {
        const int e = t + u * NT, b = e / n, l = e - b * n;
        if (e < n * NBC) Vs[l * YS + b] = vp[u];
    }
    __syncthreads();
    /* Q_il = sum_{k >= i'} X_B(i', k) R(bB + k, l), i = bB + i', for columns l right of block
     * B: in place (a thread reads its whole column segment first) */
    for (int task = t; task < nblk * n; task += NT) {
        const int B = task / n, l = task - B * n, bb = B * BS;
        if (l < bb + BS) continue; /* also every l of the last block */
        float2 r[BS];
#pragma unroll
        for (int k = 0; k < BS; k++) r[k] = R[(bb + k) * ld + l]; /* a full block: B < nblk - 1 */
#pragma unroll
        for (int i = 0; i < BS; i++) {
            float2 q = c0();
#pragma unroll
            for (int k = i; k < BS; k++) q = cfma(X[(bb + k) * BS + i], r[k], q);
            R[(bb + i) * ld + l] = q;
        }
    }
    for (int b0 = 0; b0 < nbeams; b0 += NBC) {
        if (b0 > 0) { /* later chunks' v, once the previous chunk's w = z / (v^H z) read Vs */
            __syncthreads();
            for (int e = t; e < n * NBC; e += NT) {
                const int b = e / n, l = e - b * n;
                Vs[l * YS + b] = b0 + b < nbeams ? __ldg(V + (size_t)(b0 + b) * n + l) : c0();
            }
        }
        __syncthreads(); /* Vs; R's Q; the previous chunk's Z read */
        if (!INL || b0 > 0) { /* INL: the first chunk's y is the solver warp's */
            /* y = blockdiag(X)^H v: y_l = sum_{k in l's block, k <= l} conj(X(k, l)) v_k */
            for (int e = t; e < n * NBC; e += NT) {
                const int l = e / NBC, b = e % NBC, lb = (l / BS) * BS;
                float2 acc = c0();
#pragma unroll
                for (int k = 0; k < BS; k++)
                    if (lb + k <= l) acc = cjfma(X[l * BS + k], Vs[(lb + k) * YS + b], acc);
                Y[l * YS + b] = acc;
            }
            __syncthreads();
            for (int B = 0; B + 1 < nblk; B++) { /* y_l -= sum_{i in B} conj(P_il) y_i, l past B */
                const int bb = B * BS, l0 = bb + BS;
                for (int e = t; e < (n - l0) * NBC; e += NT) {
                    const int l = l0 + e / NBC, b = e % NBC;
                    float2 acc = Y[l * YS + b];
#pragma unroll
                    for (int i = 0; i < BS; i++) acc = cjfms(R[l * ld + bb + i], Y[(bb + i) * YS + b], acc);
                    Y[l * YS + b] = acc;
                }
                __syncthreads();
            }
        }
        /* z = blockdiag(X) y: z_i = sum_{k in i's block, k >= i} X(i, k) y_k */
        for (int e = t; e < n * NBC; e += NT) {
            const int i = e / NBC, b = e % NBC, ib = (i / BS) * BS, ie = min(ib + BS, n);
            float2 acc = c0();
#pragma unroll
            for (int k = 0; k < BS; k++)
                if (ib + k >= i && ib + k < ie) acc = cfma(X[(ib + k) * BS + i - ib], Y[(ib + k) * YS + b], acc);
            Z[i * YS + b] = acc;
        }
        __syncthreads();
        for (int C = nblk - 1; C >= 1; C--) { /* z_i -= sum_{l in C} Q_il z_l, i before C */
            const int cb = C * BS, nb = min(BS, n - cb);
            for (int e = t; e < cb * NBC; e += NT) {
                const int i = e / NBC, b = e % NBC;
                float2 acc = Z[i * YS + b];
#pragma unroll
                for (int l = 0; l < BS; l++)
                    if (l < nb) acc = cfms(R[i * ld + cb + l], Z[(cb + l) * YS + b], acc);
                Z[i * YS + b] = acc;
            }
            __syncthreads();
        }
        /* w = z / (v^H z): a warp a beam */
        const int lane = t & 31;
        for (int b = t / 32; b < NBC && b0 + b < nbeams; b += NT / 32) {
            float2 s = c0();
            for (int l = lane; l < n; l += 32) s = cjfma(Vs[l * YS + b], Z[l * YS + b], s);
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) {
                s.x += __shfl_xor_sync(0xffffffffu, s.x, o);
                s.y += __shfl_xor_sync(0xffffffffu, s.y, o);
            }
            const float2 is = crecip(s);
            float2 *w = Wk + (size_t)(b0 + b) * n;
            for (int l = lane; l < n; l += 32) w[l] = cmul(Z[l * YS + b], is);
        }
    }
}

/* The solver warp of the fused dataflow kernels (qr_reg.cuh, FLOW & 2048; docs/kernels/journal.md "A solver
 * warp"): while the other warps factor the matrix it follows the columns of R as their owners
 * store them (rbar[k] completes when column k, rows <= k, is in R) and does the first NBC
 * beams' forward substitution then,
 *   y_k = (v_k - sum_{i<k} conj(R_ik) y_i) / conj(R_kk)   (lane b + 16h: beam b, i = h mod 2),
 * into Y (Y[k*(NBC+1) + b]), so that solve_beams_blocked<..., INL = true> starts that chunk at
 * the backward half. The blocked setup (X, Q; P beyond NBC beams) stays there: done here as
 * well the warp fell behind the factorization (docs/kernels/design.md). */
template <int NBC>
__device__ __forceinline__ void blk_forward_warp(const float2 *R, int ld, unsigned long long *rbar, int n,
                                                 int nbeams, const float2 *V, float2 *Y, int lane)
{
    static_assert(NBC == 16, "the solver warp: 16 beams, two lanes a beam");
    constexpr int YS = NBC + 1;
    const int b = lane & 15, h = lane >> 4;
    const bool on = b < nbeams;
    float2 vk = on ? __ldg(V + (size_t)b * n) : c0();
#pragma unroll 1
    for (int k = 0; k < n; k++) {
        const float2 vnext = on && k + 1 < n ? __ldg(V + (size_t)b * n + k + 1) : c0();
        mbar_wait0(rbar + k);
        float2 s0 = c0(), s1 = c0(), s2 = c0(), s3 = c0();
        int i = h;
#pragma unroll 1
        for (; i + 6 < k; i += 8) { /* four chains, the loads ahead */
            s0 = cjfma(R[i * ld + k], Y[i * YS + b], s0);
            s1 = cjfma(R[(i + 2) * ld + k], Y[(i + 2) * YS + b], s1);
            s2 = cjfma(R[(i + 4) * ld + k], Y[(i + 4) * YS + b], s2);
            s3 = cjfma(R[(i + 6) * ld + k], Y[(i + 6) * YS + b], s3);
        }
#pragma unroll 1
        for (; i < k; i += 2) s0 = cjfma(R[i * ld + k], Y[i * YS + b], s0);
        float2 sum = make_float2((s0.x + s1.x) + (s2.x + s3.x), (s0.y + s1.y) + (s2.y + s3.y));
        sum.x += __shfl_xor_sync(0xffffffffu, sum.x, 16);
        sum.y += __shfl_xor_sync(0xffffffffu, sum.y, 16);
        if (h == 0) Y[k * YS + b] = cmul(make_float2(vk.x - sum.x, vk.y - sum.y), crecip(cconj(R[k * ld + k])));
        vk = vnext;
        __syncwarp(); /* y_k before the next column reads it */
    }
}

/* the solver shape for n <= NC: rows per lane, beams per warp */
template <int NC>
struct SolveShape {
    static constexpr int RR = (NC + 31) / 32;
    static constexpr int NB = RR == 1 ? 4 : (RR <= 4 ? 2 : 1);
    static constexpr bool DOT_FWD = NC > 256; /* R too large to stage: read in place */
};

/* Shared-memory words a fused weight solve needs for n <= NC: R (NC rows, odd leading
 * dimension so that column reads are bank-conflict free), 1/diag, one flag. */
__host__ __device__ constexpr int solve_ld(int nc) { return nc | 1; }
__host__ __device__ constexpr int solve_smem_f2(int nc) { return nc * solve_ld(nc) + nc + 1; }

} // namespace rtk

#endif
