/* qr_tc: issue 11 item 3, measured — a blocked complex Householder QR whose trailing update
 * runs on the tensor cores (TF32 with 3xTF32 error compensation), against the FP32 kernel the
 * dispatcher runs at the same size, in one process (docs/kernels/journal.md "Tensor cores").
 *
 * The kernel (tc_qr_kernel): one block a matrix, the matrix in shared memory as two float
 * planes (real, imaginary; column-major, leading dimension MP + 8), padded with zeros to
 * MP x NP (multiples of 16). Panels of 16 columns:
 *   panel   the owner warp of each panel column (q mod warps) applies the panel's earlier
 *           reflectors to it column by column and makes its reflector (LAPACK's clarfg); one
 *           block barrier a column, or (FLOWP, "dataflow") one mbarrier a column that its
 *           owner's lanes arrive on, the next owners waiting on it alone; v goes to a
 *           separate 16-column buffer V with explicit zeros and ones (LAPACK layout in A as
 *           well);
 *   gemm1   W = V^H [V | C] (C: the trailing columns) on the tensor cores, the rows split
 *           over the warps, each warp's partial added into W with shared-memory atomics;
 *           V^H V is the Gram matrix of the panel for T;
 *   T       LAPACK's clarft (forward, columnwise) from V^H V and tau, one lane a row; then
 *           W := T^H W, one thread a column;
 *   gemm2   C -= V W on the tensor cores, one warp a 16x16 tile.
 * Each real product a*b is a_big*b_big + a_big*b_small + a_small*b_big (PREC 3; big =
 * tf32(a), small = tf32(a - big)), four real products a complex one; PREC 1 (one TF32
 * product, not accurate enough: measured only as the bound of the compensation's cost).
 * Block 0's thread 0 and last warp's lane 0 record %globaltimer around each phase (the two
 * disagree on some phases: docs/kernels/journal.md "Tensor cores"; the times that count are the
 * CUDA events').
 *
 * Accuracy: LAPACK's test ratios (stap_la_qr_check: Gram residual, |diag R| against LAPACKE in
 * double; threshold 30) on random and ill-conditioned (cond 1e6) batches, exit 1 past them
 * (PREC 3 only). Times: CUDA-event median of REPEAT launches, the input restored before each
 * outside the timed interval. Not a CTest test (needs a GPU and measures): built by
 * tests/experiments/build_tc.sh, run by tests/bench/device.sh qr-tc.
 * --quick (for compute-sanitizer): two matrices a size, accuracy only. --size MxNxB: that
 * case only (for ncu: its launches come in the order tc 3xTF32, tc 1xTF32, FP32, first on
 * random then on ill-conditioned input, then the timed ones).
 * --panel barrier|dataflow|lookahead: those builds only (lookahead: round 3, qr_la.cuh).
 * usage: qr_tc [--repeat N] [--quick] [--size MxNxB] [--panel barrier|dataflow|lookahead] */
#include <mma.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <stdint.h>

extern "C" {
#include "la_accuracy.h" /* stap_la_qr_check (C) */
}
#include "rtk.h"
#include "rtk_check.h"
/* tests/support/la_check.h's generators; that header includes rt_rng.h, which uses C99
 * complex and does not compile as C++: its declarations, with rt_rng's layout */
extern "C" {
typedef struct rt_rng { uint64_t s[4]; } tc_rng;
void tc_rng_seed(tc_rng *r, uint64_t seed);
uint64_t tc_seed_from_env(uint64_t fixed);
void tc_random_batch(tc_rng *r, int m, int n, int batch, stap_cf32 *A);
void tc_illcond_batch(tc_rng *r, int m, int n, int batch, double cond, stap_cf32 *A);
}
#include "rtk_device.cuh"
#include "qr_la.cuh" /* round 3: the dataflow panel with the MMA update behind it */


namespace wm = nvcuda::wmma;
typedef wm::fragment<wm::matrix_a, 16, 16, 8, wm::precision::tf32, wm::row_major> FragAr;
typedef wm::fragment<wm::matrix_a, 16, 16, 8, wm::precision::tf32, wm::col_major> FragAc;
typedef wm::fragment<wm::matrix_b, 16, 16, 8, wm::precision::tf32, wm::col_major> FragB;
typedef wm::fragment<wm::accumulator, 16, 16, 8, float> FragC;

/* x (fp32 values as loaded) -> big = x rounded to TF32 (round half up on the magnitude:
 * add half an ulp of TF32's 10-bit mantissa, clear the 13 low bits), small = x - big (exact
 * in FP32; the tensor cores read its 10 high mantissa bits), as CUTLASS's 3xTF32 does
 * (round_half_ulp_truncate for big, small truncated): three instructions an element (an
 * integer add, a mask, a subtraction) where cvt.rna.tf32 twice took about twelve (sm_90
 * SASS: FSETP, LOP3, SEL, IADD3 ...); inputs are finite */
template <class F> __device__ __forceinline__ void split(F &big, F &small)
{
#pragma unroll
    for (int i = 0; i < big.num_elements; i++) {
        const float x = big.x[i], b = __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xffffe000u);
        big.x[i] = b;
        small.x[i] = x - b;
    }
}
/* c += a*b, compensated (PREC 3) or not (PREC 1) */
template <int PREC, class FA>
__device__ __forceinline__ void mma(FragC &c, const FA &ab, const FA &as, const FragB &bb, const FragB &bs)
{
    if (PREC == 3) {
        wm::mma_sync(c, as, bb, c);
        wm::mma_sync(c, ab, bs, c);
    }
    wm::mma_sync(c, ab, bb, c);
}

template <int MP, int NP, int NT, int PAD> struct TcShape {
    static_assert(MP % 16 == 0 && NP % 16 == 0 && MP >= NP && NT % 32 == 0 && PAD % 8 == 0, "shape");
    static constexpr int LD = MP + PAD, NW = NT / 32, NTILE = NP / 16;
    /* gemm1's partial sums: two slots a warp, summed in a fixed order (deterministic); the 384-
     * and 512-thread builds of NOTES "Tensor cores" added one staging tile a warp into W by
     * shared-memory atomics instead (commit 838a777) */
    static_assert(NTILE <= NW, "a warp's share of gemm1 spans at most two tiles");
    /* offsets in floats, each a multiple of 8 (32-byte aligned tiles) */
    static constexpr int AR = 0, AI = NP * LD, VR = 2 * NP * LD, VI = VR + 16 * LD, WR = VI + 16 * LD,
                         WI = WR + 16 * NP, WP = WI + 16 * NP, STG = WP + 16 * NP,
                         TAUR = WP + 16 * (NP - 16), /* Wp's last tile: never a trailing column */
        TAUI = TAUR + 16, TOTAL = STG + NW * 1024,
        BAR = TAUI + 16; /* the dataflow panel's mbarriers, one a column, after tau */
    static_assert(32 + 2 * NP <= 256, "tau and the mbarriers fit in Wp's last tile");
    static constexpr size_t bytes = (size_t)TOTAL * sizeof(float);
};

/* A panel column's operations, the column's rows (lane + 32 i) in registers:
 * apply reflector c (V's column c, zero above row jc) to it; make its reflector (column jq,
 * panel column q): v over rows > jq, beta at jq, V's column q and tau[q] written. */
template <int MP, int LD, int RL>
__device__ __forceinline__ void reg_apply(float (&xr)[RL], float (&xi)[RL], const float *Vr, const float *Vi, float tr,
                                          float ti, int jc, int c, int lane)
{
    const float *vr = Vr + c * LD, *vi = Vi + c * LD;
    float a[RL], b[RL], wr0 = 0.f, wi0 = 0.f, wr1 = 0.f, wi1 = 0.f;
#pragma unroll
    for (int i = 0; i < RL; i++) {
        const int r = lane + 32 * i;
        const bool act = r >= jc && r < MP;
        a[i] = act ? vr[r] : 0.f;
        b[i] = act ? vi[r] : 0.f;
        if (i & 1) {
            wr1 = fmaf(a[i], xr[i], fmaf(b[i], xi[i], wr1));
            wi1 = fmaf(a[i], xi[i], fmaf(-b[i], xr[i], wi1));
        } else {
            wr0 = fmaf(a[i], xr[i], fmaf(b[i], xi[i], wr0));
            wi0 = fmaf(a[i], xi[i], fmaf(-b[i], xr[i], wi0));
        }
    }
    const float wr = rtk::group_sum<32>(wr0 + wr1, 0xffffffffu), wi = rtk::group_sum<32>(wi0 + wi1, 0xffffffffu);
    const float sr = tr * wr + ti * wi, si = tr * wi - ti * wr; /* conj(tau) w */
#pragma unroll
    for (int i = 0; i < RL; i++) {
        xr[i] -= a[i] * sr - b[i] * si;
        xi[i] -= a[i] * si + b[i] * sr;
    }
}
template <int MP, int LD, int RL>
__device__ __forceinline__ void reg_make(float (&xr)[RL], float (&xi)[RL], float *Vr, float *Vi, float *taur,
                                         float *taui, int jq, int q, int lane)
{
    float sig0 = 0.f, sig1 = 0.f, ar = 0.f, ai = 0.f;
#pragma unroll
    for (int i = 0; i < RL; i++) {
        const int r = lane + 32 * i;
        if (r > jq) {
            if (i & 1)
                sig1 = fmaf(xr[i], xr[i], fmaf(xi[i], xi[i], sig1));
            else
                sig0 = fmaf(xr[i], xr[i], fmaf(xi[i], xi[i], sig0));
        }
        if (r == jq) {
            ar = xr[i];
            ai = xi[i];
        }
    }
    const float sig = rtk::group_sum<32>(sig0 + sig1, 0xffffffffu);
    ar = __shfl_sync(0xffffffffu, ar, jq & 31);
    ai = __shfl_sync(0xffffffffu, ai, jq & 31);
    float2 beta, tau, scale;
    rtk::clarfg(ar, ai, sig, &beta, &tau, &scale);
    float *vr = Vr + q * LD, *vi = Vi + q * LD;
#pragma unroll
    for (int i = 0; i < RL; i++) {
        const int r = lane + 32 * i;
        if (r > jq && r < MP) {
            const float2 v = rtk::cmul(make_float2(xr[i], xi[i]), scale);
            xr[i] = v.x;
            xi[i] = v.y;
            vr[r] = v.x;
            vi[r] = v.y;
        } else if (r == jq) {
            xr[i] = beta.x;
            xi[i] = beta.y;
            vr[r] = 1.f;
            vi[r] = 0.f;
        }
    }
    if (lane == 0) {
        taur[q] = tau.x;
        taui[q] = tau.y;
    }
}

/* One panel step of the barrier panel by one warp (the column loaded into registers and
 * stored back): with APPLY, reflector c to column jq (rows >= jc); with MAKE, then column jq's
 * reflector (panel column q). */
template <int MP, int LD, bool APPLY, bool MAKE>
__device__ __forceinline__ void panel_step(float *Ar, float *Ai, float *Vr, float *Vi, float *taur, float *taui,
                                           float tr, float ti, int jc, int c, int jq, int q, int lane)
{
    constexpr int RL = (MP + 31) / 32;
    float xr[RL], xi[RL];
    float *cr = Ar + jq * LD, *ci = Ai + jq * LD;
    const int lo = APPLY ? jc : jq;
#pragma unroll
    for (int i = 0; i < RL; i++) {
        const int r = lane + 32 * i;
        const bool act = r >= lo && r < MP;
        xr[i] = act ? cr[r] : 0.f;
        xi[i] = act ? ci[r] : 0.f;
    }
    if (APPLY) reg_apply<MP, LD, RL>(xr, xi, Vr, Vi, tr, ti, jc, c, lane);
    if (MAKE) reg_make<MP, LD, RL>(xr, xi, Vr, Vi, taur, taui, jq, q, lane);
#pragma unroll
    for (int i = 0; i < RL; i++) {
        const int r = lane + 32 * i;
        if (r >= lo && r < MP) {
            cr[r] = xr[i];
            ci[r] = xi[i];
        }
    }
}

template <int MP, int NP, int NT, int PAD, int PREC, bool FLOWP>
__global__ void __launch_bounds__(NT, 1)
    tc_qr_kernel(float2 *A, int lda, long long stride, int m, int n, unsigned long long *phase)
{
    typedef TcShape<MP, NP, NT, PAD> S;
    constexpr int LD = S::LD, NW = S::NW;
    extern __shared__ __align__(128) float sm[];
    float *Ar = sm + S::AR, *Ai = sm + S::AI, *Vr = sm + S::VR, *Vi = sm + S::VI, *Wr = sm + S::WR,
          *Wi = sm + S::WI, *Wp = sm + S::WP, *taur = sm + S::TAUR,
          *taui = sm + S::TAUI;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    float2 *Ag = A + (long long)blockIdx.x * stride;
    /* thread 0 and the last warp's lane 0 each stamp the phases (phase[0..3], [4..7]) */
    const bool timer = phase && blockIdx.x == 0 && (tid == 0 || tid == NT - 32);
    /* FLOWP: one one-shot mbarrier a column (the 32 lanes of its owner arrive) */
    unsigned long long *bar = reinterpret_cast<unsigned long long *>(sm + S::BAR);
    if (FLOWP && tid == 0)
        for (int k = 0; k < NP; k++) rtk::mbar_init(bar + k, 32);
    unsigned long long tp[4] = {0, 0, 0, 0}, t0 = 0;
    auto stamp = [&](int k) { /* the phase k that ends here */
        if (!timer) return;
        const unsigned long long t = rtk::globaltimer();
        tp[k] += t - t0;
        t0 = t;
    };

    /* the load, eight elements a thread in flight (one at a time left it latency-bound:
     * ≈ 8 % of the kernel's warp samples) */
    constexpr int LU = 8;
    for (int base = 0; base < NP * MP; base += NT * LU) {
        float2 x[LU];
#pragma unroll
        for (int u = 0; u < LU; u++) {
            const int idx = base + u * NT + tid, c = idx / MP, r = idx - c * MP;
            x[u] = idx < NP * MP && r < m && c < n ? __ldg(Ag + (size_t)c * lda + r) : make_float2(0.f, 0.f);
        }
#pragma unroll
        for (int u = 0; u < LU; u++) {
            const int idx = base + u * NT + tid, c = idx / MP, r = idx - c * MP;
            if (idx < NP * MP) {
                Ar[c * LD + r] = x[u].x;
                Ai[c * LD + r] = x[u].y;
            }
        }
    }
    __syncthreads();

    for (int j0 = 0; j0 < n; j0 += 16) {
        const int kb = min(16, n - j0), nt0 = j0 + 16, rows = MP - j0;
        const int ntile = 1 + (NP - nt0) / 16; /* V's Gram tile, then the trailing columns */
        if (timer) t0 = rtk::globaltimer();
        for (int idx = tid; idx < 16 * rows; idx += NT) {
            const int c = idx / rows, r = j0 + idx - c * rows;
            Vr[c * LD + r] = 0.f;
            Vi[c * LD + r] = 0.f;
        }
        __syncthreads();
        if constexpr (FLOWP) {
            /* ---- panel, dataflow: a warp takes its columns (warp, warp + NW, ...) in turn,
             * the column in registers; it applies each earlier reflector as soon as that
             * reflector's mbarrier completes, makes its own, and arrives on its mbarrier: no
             * block barrier, the owner of column c + 1 waits for reflector c alone */
            constexpr int RL = (MP + 31) / 32;
            for (int q = warp; q < kb; q += NW) {
                const int jq = j0 + q;
                float xr[RL], xi[RL];
#pragma unroll
                for (int i = 0; i < RL; i++) {
                    const int r = lane + 32 * i;
                    const bool act = r >= j0 && r < MP;
                    xr[i] = act ? Ar[jq * LD + r] : 0.f;
                    xi[i] = act ? Ai[jq * LD + r] : 0.f;
                }
                for (int c = 0; c < q; c++) {
                    rtk::mbar_wait0(bar + j0 + c);
                    reg_apply<MP, LD, RL>(xr, xi, Vr, Vi, taur[c], taui[c], j0 + c, c, lane);
                }
                reg_make<MP, LD, RL>(xr, xi, Vr, Vi, taur, taui, jq, q, lane);
#pragma unroll
                for (int i = 0; i < RL; i++) {
                    const int r = lane + 32 * i;
                    if (r >= j0 && r < MP) {
                        Ar[jq * LD + r] = xr[i];
                        Ai[jq * LD + r] = xi[i];
                    }
                }
                rtk::mbar_arrive(bar + jq);
            }
            __syncthreads();
        } else {
        /* ---- panel: one barrier a column */
            if (warp == 0)
                panel_step<MP, LD, false, true>(Ar, Ai, Vr, Vi, taur, taui, 0.f, 0.f, j0, 0, j0, 0, lane);
            __syncthreads();
            /* a warp owns panel columns warp, warp + NW, ...; at step c the owner of column c + 1
             * applies reflector c to it and makes reflector c + 1 (the critical path) and nothing
             * else; every other column catches up on its pending reflectors when its warp is not
             * the critical one (each column's next reflector: nxt, uniform in the warp) */
            {
                int nxt[(16 + NW - 1) / NW];
    #pragma unroll
                for (int o = 0; o < (16 + NW - 1) / NW; o++) nxt[o] = 0;
                for (int c = 0; c < kb; c++) {
                    const bool crit = (c + 1) % NW == warp && c + 1 < kb;
    #pragma unroll
                    for (int o = 0; o < (16 + NW - 1) / NW; o++) {
                        const int q = warp + NW * o;
                        if (q >= kb || q <= c) continue;
                        if (q == c + 1) {
                            for (int p = nxt[o]; p < c; p++)
                                panel_step<MP, LD, true, false>(Ar, Ai, Vr, Vi, taur, taui, taur[p], taui[p], j0 + p, p,
                                                                j0 + q, q, lane);
                            panel_step<MP, LD, true, true>(Ar, Ai, Vr, Vi, taur, taui, taur[c], taui[c], j0 + c, c, j0 + q,
                                                           q, lane);
                            nxt[o] = c + 1;
                        } else if (!crit) {
                            for (int p = nxt[o]; p <= c; p++)
                                panel_step<MP, LD, true, false>(Ar, Ai, Vr, Vi, taur, taui, taur[p], taui[p], j0 + p, p,
                                                                j0 + q, q, lane);
                            nxt[o] = c + 1;
                        }
                    }
                    __syncthreads();
                }
            }
        }
        stamp(0);
        if (nt0 >= n) break; /* the last panel: no trailing columns */

        /* ---- gemm1: W = V^H [V | C] (tile 0: V^H V) */
        {
            const int nks = rows / 8;
            /* one 16-column tile, row steps ks0..ks1 (8 rows each): conj(V)^T C into re, im */
            auto tile = [&](int t, int ks0, int ks1, FragC &rr, FragC &ri) {
                const float *br = t == 0 ? Vr : Ar + (nt0 + 16 * (t - 1)) * LD;
                const float *bi = t == 0 ? Vi : Ai + (nt0 + 16 * (t - 1)) * LD;
                FragC ii, ir; /* Vr.Cr, Vi.Ci, Vr.Ci, Vi.Cr */
                wm::fill_fragment(rr, 0.f);
                wm::fill_fragment(ii, 0.f);
                wm::fill_fragment(ri, 0.f);
                wm::fill_fragment(ir, 0.f);
#pragma unroll 2
                for (int ks = ks0; ks < ks1; ks++) {
                    const int row0 = j0 + 8 * ks;
                    FragAr arb, ars, aib, ais; /* V^T: A(i, k) = V(row0 + k, i) */
                    FragB brb, brs, bib, bis;
                    wm::load_matrix_sync(arb, Vr + row0, LD);
                    wm::load_matrix_sync(aib, Vi + row0, LD);
                    wm::load_matrix_sync(brb, br + row0, LD);
                    wm::load_matrix_sync(bib, bi + row0, LD);
                    split(arb, ars);
                    split(aib, ais);
                    split(brb, brs);
                    split(bib, bis);
                    mma<PREC>(rr, arb, ars, brb, brs);
                    mma<PREC>(ii, aib, ais, bib, bis);
                    mma<PREC>(ri, arb, ars, bib, bis);
                    mma<PREC>(ir, aib, ais, brb, brs);
                }
                /* re = Vr.Cr + Vi.Ci, im = Vr.Ci - Vi.Cr */
#pragma unroll
                for (int e = 0; e < rr.num_elements; e++) {
                    rr.x[e] += ii.x[e];
                    ri.x[e] -= ir.x[e];
                }
            };
            /* the ntile x nks row steps cut into NW equal runs (tile major): a run spans
             * at most two tiles, one slot each */
            const int work = ntile * nks, per = (work + NW - 1) / NW;
            float *stg = sm + S::STG + warp * 1024;
            for (int g = warp * per, g1 = min(work, g + per), slot = 0; g < g1; slot++) {
                const int t = g / nks, ks0 = g - t * nks, ks1 = min(nks, ks0 + (g1 - g));
                FragC rr, ri;
                tile(t, ks0, ks1, rr, ri);
                wm::store_matrix_sync(stg + 512 * slot, rr, 16, wm::mem_col_major);
                wm::store_matrix_sync(stg + 512 * slot + 256, ri, 16, wm::mem_col_major);
                g += ks1 - ks0;
            }
            __syncthreads();
            for (int idx = tid; idx < 256 * ntile; idx += NT) {
                const int t = idx >> 8, e = idx & 255;
                const int w0 = t * nks / per, w1 = ((t + 1) * nks - 1) / per;
                float sr = 0.f, si = 0.f;
                for (int w = w0; w <= w1; w++) {
                    const float *p = sm + S::STG + w * 1024 + (t == w * per / nks ? 0 : 512);
                    sr += p[e];
                    si += p[256 + e];
                }
                Wr[idx] = sr;
                Wi[idx] = si;
            }
        }
        __syncthreads();
        stamp(1);
        /* ---- W := T^H W without T: T^-1 = diag(1/tau) + striu(V^H V) (G = V^H V is W's
         * tile 0), so T^H W solves a lower triangular system, y_i = conj(tau_i) (W_i -
         * sum_{k<i} conj(G_ki) y_k); one thread a trailing column. Stored as -Re, -Im (over W)
         * and +Im (Wp) for gemm2. */
        for (int col = tid; col < NP - nt0; col += NT) {
            float yr[16], yi[16];
#pragma unroll
            for (int i = 0; i < 16; i++) {
                float sr0 = Wr[256 + col * 16 + i], si0 = Wi[256 + col * 16 + i], sr1 = 0.f, si1 = 0.f;
#pragma unroll
                for (int k = 0; k < i; k++) {
                    const float g = Wr[i * 16 + k], h = Wi[i * 16 + k];
                    if (k & 1) {
                        sr1 = fmaf(-g, yr[k], fmaf(-h, yi[k], sr1));
                        si1 = fmaf(-g, yi[k], fmaf(h, yr[k], si1));
                    } else {
                        sr0 = fmaf(-g, yr[k], fmaf(-h, yi[k], sr0));
                        si0 = fmaf(-g, yi[k], fmaf(h, yr[k], si0));
                    }
                }
                const float sr = sr0 + sr1, si = si0 + si1, tr = taur[i], ti = taui[i];
                yr[i] = tr * sr + ti * si;
                yi[i] = tr * si - ti * sr;
            }
#pragma unroll
            for (int i = 0; i < 16; i++) {
                Wr[256 + col * 16 + i] = -yr[i];
                Wi[256 + col * 16 + i] = -yi[i];
                Wp[col * 16 + i] = yi[i];
            }
        }
        __syncthreads();
        stamp(2);
        /* ---- gemm2: C -= V W, one warp a 16x16 tile */
        {
            const int mt = rows / 16, nt = (NP - nt0) / 16, items = mt * nt;
            /* a warp takes a contiguous run of items, row tile major, and keeps V's row tile
             * (split) across the items of one row tile */
            const int per = (items + NW - 1) / NW, i0 = warp * per, i1 = min(items, i0 + per);
            FragAc vrb[2], vrs[2], vib[2], vis[2];
            int cur = -1;
            for (int item = i0; item < i1; item++) {
                const int im = item / nt, in = item - im * nt;
                const int row0 = j0 + 16 * im, col0 = nt0 + 16 * in;
                if (im != cur) {
                    cur = im;
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        wm::load_matrix_sync(vrb[h], Vr + 8 * h * LD + row0, LD);
                        wm::load_matrix_sync(vib[h], Vi + 8 * h * LD + row0, LD);
                        split(vrb[h], vrs[h]);
                        split(vib[h], vis[h]);
                    }
                }
                FragC cr, ci, cr2, ci2;
                wm::load_matrix_sync(cr, Ar + col0 * LD + row0, LD, wm::mem_col_major);
                wm::load_matrix_sync(ci, Ai + col0 * LD + row0, LD, wm::mem_col_major);
                wm::fill_fragment(cr2, 0.f);
                wm::fill_fragment(ci2, 0.f);
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int kk = 8 * h;
                    FragB nrb, nrs, nib, nis, pib, pis; /* -Re W, -Im W, +Im W */
                    wm::load_matrix_sync(nrb, Wr + 256 + 16 * 16 * in + kk, 16);
                    wm::load_matrix_sync(nib, Wi + 256 + 16 * 16 * in + kk, 16);
                    wm::load_matrix_sync(pib, Wp + 16 * 16 * in + kk, 16);
                    split(nrb, nrs);
                    split(nib, nis);
                    split(pib, pis);
                    /* C - V W: re += Vr(-Wr) + Vi(Wi), im += Vr(-Wi) + Vi(-Wr) */
                    mma<PREC>(cr, vrb[h], vrs[h], nrb, nrs);
                    mma<PREC>(cr2, vib[h], vis[h], pib, pis);
                    mma<PREC>(ci, vrb[h], vrs[h], nib, nis);
                    mma<PREC>(ci2, vib[h], vis[h], nrb, nrs);
                }
#pragma unroll
                for (int e = 0; e < cr.num_elements; e++) {
                    cr.x[e] += cr2.x[e];
                    ci.x[e] += ci2.x[e];
                }
                wm::store_matrix_sync(Ar + col0 * LD + row0, cr, LD, wm::mem_col_major);
                wm::store_matrix_sync(Ai + col0 * LD + row0, ci, LD, wm::mem_col_major);
            }
        }
        __syncthreads();
        stamp(3);
    }
    __syncthreads();
    for (int idx = tid; idx < n * m; idx += NT) {
        const int c = idx / m, r = idx - c * m;
        Ag[(size_t)c * lda + r] = make_float2(Ar[c * LD + r], Ai[c * LD + r]);
    }
    if (timer) {
        for (int k = 0; k < 4; k++) phase[k + (tid ? 4 : 0)] = tp[k];
    }
}

typedef cudaError_t (*tc_fn)(float2 *, int, long long, int, int, int, unsigned long long *, cudaStream_t);

template <int MP, int NP, int NT, int PAD, int PREC, bool FLOWP>
cudaError_t tc_launch(float2 *A, int lda, long long stride, int m, int n, int batch, unsigned long long *phase,
                      cudaStream_t s)
{
    typedef TcShape<MP, NP, NT, PAD> S;
    static_assert(S::bytes <= 232448, "shared memory");
    if (m > MP || n > NP || m < n) return cudaErrorInvalidValue;
    cudaError_t e = cudaFuncSetAttribute(tc_qr_kernel<MP, NP, NT, PAD, PREC, FLOWP>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)S::bytes);
    if (e != cudaSuccess) return e;
    tc_qr_kernel<MP, NP, NT, PAD, PREC, FLOWP><<<batch, NT, S::bytes, s>>>(A, lda, stride, m, n, phase);
    return cudaGetLastError();
}

struct TcCase {
    int m, n, batch, threads, flowp; /* flowp: 0 barrier panel, 1 dataflow panel, 2 lookahead (qr_la.cuh) */
    tc_fn run[2]; /* PREC 3, PREC 1 (none for the lookahead kernel) */
};
/* (the 384- and 512-thread builds of docs/kernels/journal.md "Tensor cores" were slower; dropped) */
#define TC(MP, NP, NT, PAD, F) NT, F, {tc_launch<MP, NP, NT, PAD, 3, F>, tc_launch<MP, NP, NT, PAD, 1, F>}
static const TcCase tc_cases[] = {
    {240, 66, 128, TC(240, 80, 256, 0, false)}, {240, 66, 128, TC(240, 80, 256, 0, true)},
    {240, 66, 1280, TC(240, 80, 256, 0, true)}, {192, 96, 128, TC(192, 96, 256, 8, false)},
    {192, 96, 128, TC(192, 96, 256, 8, true)},  {200, 50, 128, TC(208, 64, 256, 8, false)},
    {200, 50, 128, TC(208, 64, 256, 8, true)},  {128, 32, 512, TC(128, 32, 256, 8, true)},
    /* round 3 (qr_la.cuh): 8 panel warps and UW update warps */
#define LA(MP, NP, UW) (8 + UW) * 32, 2, {la::la_launch<MP, NP, 8, UW>, nullptr}
    {240, 66, 128, LA(240, 80, 8)}, {240, 66, 128, LA(240, 80, 4)}, {240, 66, 1280, LA(240, 80, 8)},
    {192, 96, 128, LA(192, 96, 8)}, {192, 96, 128, LA(192, 96, 4)}, {200, 50, 128, LA(208, 64, 8)},
    {128, 32, 512, LA(128, 32, 4)},
#undef LA
};

static const char *pname(int flowp)
{
    return flowp == 2 ? "lookahead" : flowp ? "dataflow" : "barrier";
}

static double median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    const size_t k = v.size();
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

/* CUDA-event median of `repeat` launches after two warm-ups, µs; the input restored first */
template <class Run>
static double time_us(Run run, float2 *work, const float2 *orig, size_t bytes, int repeat, cudaStream_t st)
{
    cudaEvent_t e0, e1;
    RTK_CU_EXIT(cudaEventCreate(&e0));
    RTK_CU_EXIT(cudaEventCreate(&e1));
    std::vector<float> ms;
    for (int it = -2; it < repeat; it++) {
        RTK_CU_EXIT(cudaMemcpyAsync(work, orig, bytes, cudaMemcpyDeviceToDevice, st));
        RTK_CU_EXIT(cudaEventRecord(e0, st));
        RTK_CU_EXIT(run());
        RTK_CU_EXIT(cudaEventRecord(e1, st));
        RTK_CU_EXIT(cudaEventSynchronize(e1));
        float x;
        RTK_CU_EXIT(cudaEventElapsedTime(&x, e0, e1));
        if (it >= 0) ms.push_back(x);
    }
    RTK_CU_EXIT(cudaEventDestroy(e0));
    RTK_CU_EXIT(cudaEventDestroy(e1));
    return 1e3 * median(ms);
}

/* Factor T (batch m x n, lda = m) with run() and check LAPACK's ratios; returns 1 when
 * they pass */
template <class Run>
static int check(const char *what, Run run, const std::vector<stap_cf32> &T, float2 *work, int m, int n, int batch,
                 cudaStream_t st, double *res, double *dia)
{
    const size_t bytes = T.size() * sizeof(stap_cf32);
    std::vector<stap_cf32> R(T.size());
    RTK_CU_EXIT(cudaMemcpyAsync(work, T.data(), bytes, cudaMemcpyHostToDevice, st));
    RTK_CU_EXIT(run());
    RTK_CU_EXIT(cudaMemcpyAsync(R.data(), work, bytes, cudaMemcpyDeviceToHost, st));
    RTK_CU_EXIT(cudaStreamSynchronize(st));
    la_qr_accuracy acc;
    stap_error err = {};
    if (stap_la_qr_check(m, n, batch, T.data(), R.data(), 1, &acc, &err) != STAP_OK) {
        fprintf(stderr, "qr_tc: %s: stap_la_qr_check: %s\n", what, err.msg);
        exit(1);
    }
    int bad = 0;
    for (const stap_cf32 &x : R) bad += !std::isfinite(x.re) || !std::isfinite(x.im);
    *res = acc.residual;
    *dia = acc.diag;
    return bad == 0 && acc.residual < 30.0 && acc.diag < 30.0;
}

int main(int argc, char **argv)
{
    int repeat = 20, quick = 0, sm_ = 0, sn = 0, sb = 0, flow = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--size") && i + 1 < argc && sscanf(argv[i + 1], "%dx%dx%d", &sm_, &sn, &sb) == 3)
            i++;
        else if (!strcmp(argv[i], "--panel") && i + 1 < argc)
        {
            i++;
            flow = !strcmp(argv[i], "lookahead") ? 2 : !strcmp(argv[i], "dataflow");
        }
        else {
            fprintf(stderr, "usage: qr_tc [--repeat N] [--quick] [--size MxNxB] [--panel barrier|dataflow|lookahead]\n");
            return 2;
        }
    }
    int dev = 0, smem_limit = 0;
    RTK_CU_EXIT(cudaGetDevice(&dev));
    RTK_CU_EXIT(cudaDeviceGetAttribute(&smem_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    cudaDeviceProp prop;
    RTK_CU_EXIT(cudaGetDeviceProperties(&prop, dev));
    printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    tc_rng rng;
    tc_rng_seed(&rng, tc_seed_from_env(20261203));
    cudaStream_t st;
    RTK_CU_EXIT(cudaStreamCreate(&st));
    unsigned long long *dphase;
    RTK_CU_EXIT(cudaMalloc(&dphase, la::ST_N * sizeof *dphase)); /* the phases, or the lookahead's timeline */
    int fails = 0;
    struct Row {
        int m, n, batch;
        const char *var;
        int threads, flowp;
        double fp32, tc3, tc1, ph[4];
    };
    std::vector<Row> rows;
    for (const TcCase &c : tc_cases) {
        if (sm_ && (c.m != sm_ || c.n != sn || c.batch != sb)) continue;
        if (flow >= 0 && c.flowp != flow) continue;
        const int m = c.m, n = c.n, batch = quick ? 2 : c.batch;
        const size_t total = (size_t)m * n * batch, bytes = total * sizeof(float2);
        const int v = rtk_qr_select_batch(0, m, n, batch, 0, smem_limit, RTK_DISPATCH_MODEL);
        const rtk_qr_variant *var = rtk_qr_variant_get(v);
        float2 *work, *orig;
        RTK_CU_EXIT(cudaMalloc(&work, bytes));
        RTK_CU_EXIT(cudaMalloc(&orig, bytes));
        auto fp32 = [&] { return (cudaError_t)rtk_qr_launch(v, m, n, batch, work, m, (long long)m * n, st); };
        auto tc3 = [&] { return c.run[0](work, m, (long long)m * n, m, n, batch, nullptr, st); };
        auto tc1 = [&] { return c.run[1](work, m, (long long)m * n, m, n, batch, nullptr, st); };
        std::vector<stap_cf32> T(total);
        for (int k = 0; k < 2; k++) {
            const double cond = k ? 1e6 : 0.0;
            const int b = k && batch > 128 ? 128 : batch; /* ill-conditioned: 128 matrices */
            std::vector<stap_cf32> Tk((size_t)m * n * b);
            if (cond > 0)
                tc_illcond_batch(&rng, m, n, b, cond, Tk.data());
            else
                tc_random_batch(&rng, m, n, b, Tk.data());
            const char *cn = cond > 0 ? "cond=1e6" : "random";
            auto tc3b = [&] { return c.run[0](work, m, (long long)m * n, m, n, b, nullptr, st); };
            auto tc1b = [&] { return c.run[1](work, m, (long long)m * n, m, n, b, nullptr, st); };
            auto fpb = [&] { return (cudaError_t)rtk_qr_launch(v, m, n, b, work, m, (long long)m * n, st); };
            double r, d;
            int ok = check("tc3", tc3b, Tk, work, m, n, b, st, &r, &d);
            printf("accuracy %3dx%-3d x%-4d %-8s tc 3xTF32  residual %8.3f diag %8.3f %s\n", m, n, b, cn, r, d,
                   ok ? "ok" : "FAIL");
            fails += !ok;
            if (c.run[1]) {
            ok = check("tc1", tc1b, Tk, work, m, n, b, st, &r, &d);
            printf("accuracy %3dx%-3d x%-4d %-8s tc 1xTF32  residual %8.3f diag %8.3f %s\n", m, n, b, cn, r, d,
                   ok ? "ok" : "over 30 (a bound only, not a candidate)");
            }
            ok = check("fp32", fpb, Tk, work, m, n, b, st, &r, &d);
            printf("accuracy %3dx%-3d x%-4d %-8s %-14s residual %8.3f diag %8.3f %s\n", m, n, b, cn, var->name, r,
                   d, ok ? "ok" : "FAIL");
            fails += !ok;
            if (k == 0) T = Tk;
        }
        if (quick) {
            RTK_CU_EXIT(cudaFree(work));
            RTK_CU_EXIT(cudaFree(orig));
            continue;
        }
        RTK_CU_EXIT(cudaMemcpy(orig, T.data(), bytes, cudaMemcpyHostToDevice));
        Row row = {m, n, batch, var->name, c.threads, c.flowp, 0, 0, 0, {0, 0, 0, 0}};
        row.fp32 = time_us(fp32, work, orig, bytes, repeat, st);
        row.tc3 = time_us(tc3, work, orig, bytes, repeat, st);
        row.tc1 = c.run[1] ? time_us(tc1, work, orig, bytes, repeat, st) : 0.0;
        /* each timed twice, alternating, the better median kept (the same for both) */
        row.fp32 = std::min(row.fp32, time_us(fp32, work, orig, bytes, repeat, st));
        row.tc3 = std::min(row.tc3, time_us(tc3, work, orig, bytes, repeat, st));
        RTK_CU_EXIT(cudaMemcpy(work, orig, bytes, cudaMemcpyDeviceToDevice));
        RTK_CU_EXIT(cudaMemset(dphase, 0, la::ST_N * sizeof *dphase));
        RTK_CU_EXIT(c.run[0](work, m, (long long)m * n, m, n, batch, dphase, st));
        RTK_CU_EXIT(cudaStreamSynchronize(st));
        unsigned long long ph[la::ST_N];
        RTK_CU_EXIT(cudaMemcpy(ph, dphase, sizeof ph, cudaMemcpyDeviceToHost));
        if (c.flowp >= 2) { /* block 0's timeline, SM cycles: per panel, its columns' publication and the next panel's arrival */
            const int npan = (n + 15) / 16;
            printf("timeline %dx%d %s (block 0, kcycles): ", m, n, pname(c.flowp));
            for (int p = 0; p < npan; p++) {
                const int j0 = 16 * p, j1 = std::min(n, j0 + 16) - 1;
                printf("[p%d pub %.1f..%.1f end %.1f", p, ph[la::ST_PUB + j0] * 1e-3, ph[la::ST_PUB + j1] * 1e-3,
                       ph[la::ST_END + p] * 1e-3);
                if (p >= 2) printf(" rdy %.1f", ph[la::ST_RDY + p] * 1e-3);
                if (p >= 1) printf(" load %.1f", ph[la::ST_LOAD + p] * 1e-3);
                printf("] ");
            }
            printf("\n");
            memset(ph, 0, sizeof ph);
        }
        for (int k = 0; k < 4; k++) row.ph[k] = ph[k] * 1e-3;
        printf("phases of block 0 by its last warp: panel %.1f gemm1 %.1f T^H W %.1f gemm2 %.1f\n", ph[4] * 1e-3,
               ph[5] * 1e-3, ph[6] * 1e-3, ph[7] * 1e-3);
        rows.push_back(row);
        printf("time %3dx%-3d x%-4d %s %.1f  tc3 (%d threads, %s panel) %.1f  tc1 %.1f  (block 0: panel %.1f gemm1 %.1f T^H W %.1f "
               "gemm2 %.1f)\n",
               m, n, batch, var->name, row.fp32, c.threads, pname(c.flowp), row.tc3, row.tc1, row.ph[0], row.ph[1], row.ph[2], row.ph[3]);
        fflush(stdout);
        RTK_CU_EXIT(cudaFree(work));
        RTK_CU_EXIT(cudaFree(orig));
    }
    printf("\n| size x batch | dispatched FP32 kernel | µs | tensor cores 3xTF32 | 1xTF32 (bound) | block 0: panel | "
           "gemm1 | T, T^H W | gemm2 |\n|---|---|---|---|---|---|---|---|---|\n");
    for (const Row &r : rows)
        printf("| %dx%d x %d | %s | %.1f | %.1f (%d, %s) | %.1f | %.1f | %.1f | %.1f | %.1f |\n", r.m, r.n, r.batch, r.var,
               r.fp32, r.tc3, r.threads, pname(r.flowp), r.tc1, r.ph[0], r.ph[1], r.ph[2], r.ph[3]);
    if (fails) printf("qr_tc: %d accuracy failure(s)\n", fails);
    return fails ? 1 : 0;
}
