/* qr_reg.cuh: the register-resident batched Householder QR (template; instantiated by
 * qr_small.cu and qr_onchip.cu), optionally fused with the MVDR weight solves.
 *
 * Layout: a matrix belongs to NT = TR x TC threads; thread (tr, tc) holds rows
 * tr + TR*p (p < RPT) of columns tc + TC*q (q < CPT) in registers: a 2-D cyclic
 * distribution, so the shrinking trailing matrix stays spread over all threads. The TR
 * threads of one column slot are consecutive lanes of one warp, so every column
 * reduction is a butterfly of shuffles inside a warp. Capacity TR*RPT x TC*CPT; smaller
 * matrices are zero-padded (padding rows stay zero, padding columns are skipped).
 *
 * One Householder step j (LAPACK cgeqr2 order, H_j = I - tau v v^H, A := H_j^H A):
 *   barrier; every thread reads v_j (its RPT rows) and tau_j from shared memory;
 *   w_c = v_j^H A(:, c) for its columns c > j (register FMAs + butterfly);
 *   lookahead: the TR owners of column j+1 update it first, form reflector j+1
 *   (norm by butterfly, clarfg) and publish v_{j+1} to the other shared buffer;
 *   everyone updates its remaining columns: A(:, c) -= v_j conj(tau_j) w_c.
 * One barrier per column: v is double-buffered, and the owners of column j+1 are the
 * threads that just updated it, so the next norm needs no barrier of its own.
 * VREG = false re-reads v from shared memory in the update instead of keeping RPT
 * values live (for the largest shapes, to stay clear of register spills).
 * MATS > 1 puts MATS independent one-warp matrices in a block (NT must be 32; the
 * barrier is then __syncwarp). */
#ifndef RTK_QR_REG_CUH
#define RTK_QR_REG_CUH

#include "rtk_device.cuh"

namespace rtk {

template <int TR, int TC, int RPT, int CPT, int MATS>
struct RegShape {
    static constexpr int NT = TR * TC;                 /* threads per matrix        */
    static constexpr int THREADS = NT * MATS;          /* threads per block         */
    static constexpr int MCAP = TR * RPT, NCAP = TC * CPT;
    static constexpr int TCW = TR >= 32 ? 1 : 32 / TR; /* column slots per warp     */
    static constexpr int QR_F2 = 2 * MCAP + 2;         /* v[2][MCAP], tau[2]        */
    static constexpr int W_F2 = solve_smem_f2(NCAP);   /* fused solve               */
    static_assert(TR <= 32 && (32 % TR) == 0, "a column slot must sit inside one warp");
    static_assert(NT % 32 == 0, "whole warps per matrix");
    static_assert(MATS == 1 || NT == 32, "several matrices per block only one warp each");
    static int smem_bytes(bool weights)
    {
        return MATS * (QR_F2 + (weights ? W_F2 : 0)) * (int)sizeof(float2);
    }
};

template <int MATS>
__device__ __forceinline__ void group_sync()
{
    if (MATS > 1)
        __syncwarp();
    else
        __syncthreads();
}

/* Owners of column j (slot Q of threads with tc == j % TC): form reflector j from the
 * column in registers, publish v (all MCAP rows: 0 above j, 1 at j) and tau, and put
 * beta on the diagonal. All TR lanes of the slot call this together. */
template <int TR, int RPT, int CPT, int Q>
__device__ __forceinline__ void make_reflector(float2 (&a)[RPT][CPT], int j, int tr,
                                               float2 *vout, float2 *tauout)
{
    float sigma = 0.f, ar = 0.f, ai = 0.f;
#pragma unroll
    for (int p = 0; p < RPT; p++) {
        const int row = tr + TR * p;
        const float2 x = a[p][Q];
        if (row > j) sigma = fmaf(x.x, x.x, fmaf(x.y, x.y, sigma));
        if (row == j) {
            ar = x.x;
            ai = x.y;
        }
    }
    const unsigned mask = group_mask<TR>();
#pragma unroll
    for (int o = TR / 2; o > 0; o >>= 1) {
        sigma += __shfl_xor_sync(mask, sigma, o, TR);
        ar += __shfl_xor_sync(mask, ar, o, TR);
        ai += __shfl_xor_sync(mask, ai, o, TR);
    }
    float2 beta, tau, scale;
    clarfg(ar, ai, sigma, &beta, &tau, &scale);
#pragma unroll
    for (int p = 0; p < RPT; p++) {
        const int row = tr + TR * p;
        float2 v = row > j ? cmul(a[p][Q], scale) : make_float2(row == j ? 1.f : 0.f, 0.f);
        vout[row] = v;
        if (row == j) a[p][Q] = beta;
    }
    if (tr == 0) *tauout = tau;
}

/* v_j(row) from shared memory, as a volatile load: variants that do not keep v in
 * registers (VREG = false) re-read it in the update instead of holding RPT values. */
__device__ __forceinline__ float2 ld_shared_f2(const float2 *p)
{
    float2 r;
    asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];"
                 : "=f"(r.x), "=f"(r.y)
                 : "r"((unsigned)__cvta_generic_to_shared(p)));
    return r;
}

/* Step j of the factorization; QJ = j / TC (compile-time), see the file comment. */
template <int TR, int TC, int RPT, int CPT, int MATS, bool VREG, int QJ>
__device__ __forceinline__ void qr_step(float2 (&a)[RPT][CPT], int j, int n, int tr, int tc,
                                        int wtc0, float2 *vbuf, float2 *taub)
{
    using S = RegShape<TR, TC, RPT, CPT, MATS>;
    group_sync<MATS>();
    const int buf = j & 1;
    const float2 *vj = vbuf + buf * S::MCAP + tr;
    float2 v[VREG ? RPT : 1];
    if constexpr (VREG) {
#pragma unroll
        for (int p = 0; p < RPT; p++) v[p] = vj[TR * p];
    }
    const float2 tau = taub[buf];

    /* w_c = v^H A(:, c) for the slots with a column > j somewhere in this warp; slots
     * left of j's slot hold finished columns only; rows < j have v = 0 */
    float2 s[CPT];
    if constexpr (VREG) {
#pragma unroll
        for (int q = 0; q < CPT; q++) {
            s[q] = c0();
            if (q < QJ) continue;
            const bool warp_active = wtc0 + S::TCW - 1 + TC * q > j && wtc0 + TC * q < n;
            if (warp_active) { /* warp-uniform: a real branch, skipped columns cost nothing */
                float2 w0 = c0(), w1 = c0();
#pragma unroll
                for (int p = 0; p < RPT; p += 2) {
                    if (TR * (p + 1) > j) w0 = cjfma(v[p], a[p][q], w0);
                    if (p + 1 < RPT && TR * (p + 2) > j) w1 = cjfma(v[p + 1], a[p + 1][q], w1);
                }
                float2 w = make_float2(w0.x + w1.x, w0.y + w1.y);
                w = group_sum2<TR>(w, 0xffffffffu);
                if (tc + TC * q > j) s[q] = cjmul(tau, w); /* conj(tau) w */
            }
        }
    } else {
        bool act[CPT];
        float2 w[CPT];
#pragma unroll
        for (int q = 0; q < CPT; q++) {
            act[q] = q >= QJ && wtc0 + S::TCW - 1 + TC * q > j && wtc0 + TC * q < n;
            w[q] = c0();
        }
#pragma unroll
        for (int p = 0; p < RPT; p++) {
            if (TR * (p + 1) > j) {
                const float2 vp = ld_shared_f2(vj + TR * p);
#pragma unroll
                for (int q = 0; q < CPT; q++)
                    if (act[q]) w[q] = cjfma(vp, a[p][q], w[q]);
            }
        }
#pragma unroll
        for (int q = 0; q < CPT; q++) {
            s[q] = c0();
            if (act[q]) {
                const float2 ws = group_sum2<TR>(w[q], 0xffffffffu);
                if (tc + TC * q > j) s[q] = cjmul(tau, ws);
            }
        }
    }

    /* lookahead: column j+1 first, then reflector j+1 into the other buffer */
    const int j1 = j + 1;
    if (j1 < n && tc == j1 % TC) {
        float2 *vnext = vbuf + (buf ^ 1) * S::MCAP;
        if (j1 / TC == QJ) {
#pragma unroll
            for (int p = 0; p < RPT; p++)
                a[p][QJ] = cfms(VREG ? v[VREG ? p : 0] : ld_shared_f2(vj + TR * p), s[QJ], a[p][QJ]);
            make_reflector<TR, RPT, CPT, QJ>(a, j1, tr, vnext, taub + (buf ^ 1));
        } else if constexpr (QJ + 1 < CPT) {
#pragma unroll
            for (int p = 0; p < RPT; p++)
                a[p][QJ + 1] = cfms(VREG ? v[VREG ? p : 0] : ld_shared_f2(vj + TR * p), s[QJ + 1],
                                    a[p][QJ + 1]);
            make_reflector<TR, RPT, CPT, QJ + 1>(a, j1, tr, vnext, taub + (buf ^ 1));
        }
    }

    /* the remaining columns c > j + 1 */
    if constexpr (VREG) {
#pragma unroll
        for (int q = 0; q < CPT; q++) {
            if (q < QJ) continue;
            const bool warp_active = wtc0 + S::TCW - 1 + TC * q > j1 && wtc0 + TC * q < n;
            if (warp_active && tc + TC * q > j1) {
#pragma unroll
                for (int p = 0; p < RPT; p++)
                    if (TR * (p + 1) > j) a[p][q] = cfms(v[p], s[q], a[p][q]);
            }
        }
    } else {
        bool upd[CPT];
#pragma unroll
        for (int q = 0; q < CPT; q++) upd[q] = q >= QJ && tc + TC * q > j1;
#pragma unroll
        for (int p = 0; p < RPT; p++) {
            if (TR * (p + 1) > j) {
                const float2 vp = ld_shared_f2(vj + TR * p);
#pragma unroll
                for (int q = 0; q < CPT; q++)
                    if (upd[q]) a[p][q] = cfms(vp, s[q], a[p][q]);
            }
        }
    }
}

/* Steps j = QJ*TC ... for slot QJ, then the next slot (compile-time recursion). */
template <int TR, int TC, int RPT, int CPT, int MATS, bool VREG, int QJ>
__device__ __forceinline__ void qr_steps(float2 (&a)[RPT][CPT], int n, int tr, int tc,
                                         int wtc0, float2 *vbuf, float2 *taub)
{
    if constexpr (QJ < CPT) {
        const int jend = min(n - 1, (QJ + 1) * TC); /* steps j < n-1 update something */
        for (int j = QJ * TC; j < jend; j++)
            qr_step<TR, TC, RPT, CPT, MATS, VREG, QJ>(a, j, n, tr, tc, wtc0, vbuf, taub);
        qr_steps<TR, TC, RPT, CPT, MATS, VREG, QJ + 1>(a, n, tr, tc, wtc0, vbuf, taub);
    }
}

template <int TR, int TC, int RPT, int CPT, int MATS, bool VREG, bool WEIGHTS>
__global__ void __launch_bounds__(TR *TC *MATS, 1) qr_reg_kernel(const QrArgs args)
{
    using S = RegShape<TR, TC, RPT, CPT, MATS>;
    extern __shared__ float2 smem[];
    const int g = MATS > 1 ? (int)threadIdx.x / S::NT : 0;
    const int t = MATS > 1 ? (int)threadIdx.x % S::NT : (int)threadIdx.x;
    const int k = (int)blockIdx.x * MATS + g;
    if (k >= args.batch) return; /* whole warps only (MATS > 1 means one warp each) */
    const bool timer = WEIGHTS && args.phase && k == 0 && t == 0;
    if (timer) args.phase[0] = globaltimer();

    float2 *vbuf = smem + g * (S::QR_F2 + (WEIGHTS ? S::W_F2 : 0));
    float2 *taub = vbuf + 2 * S::MCAP;
    const int tr = t % TR, tc = t / TR;
    const int wtc0 = (t & ~31) / TR; /* first column slot of this warp */
    const int m = args.m, n = args.n, lda = args.lda;
    float2 *Ak = args.A + (long long)k * args.stride;

    float2 a[RPT][CPT];
#pragma unroll
    for (int q = 0; q < CPT; q++) {
        const int col = tc + TC * q;
#pragma unroll
        for (int p = 0; p < RPT; p++) {
            const int row = tr + TR * p;
            a[p][q] = (row < m && col < n) ? Ak[(size_t)col * lda + row] : c0();
        }
    }
    if (tc == 0) make_reflector<TR, RPT, CPT, 0>(a, 0, tr, vbuf, taub);
    qr_steps<TR, TC, RPT, CPT, MATS, VREG, 0>(a, n, tr, tc, wtc0, vbuf, taub);

    if (!WEIGHTS || args.write_r) {
#pragma unroll
        for (int q = 0; q < CPT; q++) {
            const int col = tc + TC * q;
#pragma unroll
            for (int p = 0; p < RPT; p++) {
                const int row = tr + TR * p;
                if (row <= col && col < n) Ak[(size_t)col * lda + row] = a[p][q];
            }
        }
    }
    if constexpr (WEIGHTS) {
        constexpr int LD = solve_ld(S::NCAP);
        float2 *Rs = taub + 2;
        float2 *dinv = Rs + S::NCAP * LD;
        int *flag = reinterpret_cast<int *>(dinv + S::NCAP);
        if (t == 0) *flag = 0;
        if (timer) args.phase[1] = globaltimer();
#pragma unroll
        for (int q = 0; q < CPT; q++) {
            const int col = tc + TC * q;
#pragma unroll
            for (int p = 0; p < RPT; p++) {
                const int row = tr + TR * p;
                if (row <= col && col < n) Rs[row * LD + col] = a[p][q];
            }
        }
        group_sync<MATS>();
        for (int i = t; i < n; i += S::NT) {
            const float2 d = Rs[i * LD + i];
            if (!cfinite_nonzero(d)) *flag = 1;
            dinv[i] = crecip(d);
        }
        group_sync<MATS>();
        if (*flag) {
            if (t == 0) atomicMin(args.bad, k);
            return;
        }
        float2 *Wk = args.W + (size_t)k * args.nbeams * n;
        if constexpr (S::NCAP <= 32)
            solve_beams_lanes<S::NCAP>(Rs, LD, 1, dinv, n, args.nbeams, args.V, Wk, t, S::NT);
        else
            solve_beams_warp<(S::NCAP + 31) / 32>(Rs, LD, 1, dinv, n, args.nbeams, args.V, Wk,
                                                  t / 32, S::NT / 32);
        if (timer) args.phase[2] = globaltimer();
    }
}

/* Launch helper for one instantiation. */
template <int TR, int TC, int RPT, int CPT, int MATS, bool VREG, bool WEIGHTS>
cudaError_t qr_reg_launch(const QrArgs &args, cudaStream_t stream)
{
    using S = RegShape<TR, TC, RPT, CPT, MATS>;
    const int smem = S::smem_bytes(WEIGHTS);
    auto kern = qr_reg_kernel<TR, TC, RPT, CPT, MATS, VREG, WEIGHTS>;
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        if (e != cudaSuccess) return e;
    }
    const int blocks = (args.batch + MATS - 1) / MATS;
    kern<<<blocks, S::THREADS, smem, stream>>>(args);
    return cudaGetLastError();
}

} // namespace rtk

#endif
