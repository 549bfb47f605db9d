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
 *   lookahead, first: the TR owners of column j+1 apply H_j to it (dot, butterfly,
 *   axpy), form reflector j+1 (norm by butterfly, clarfg) and publish v_{j+1} to the
 *   other shared buffer — the critical path of the factorization;
 *   then everyone updates its columns c > j+1: w_c = v_j^H A(:, c) (register FMAs,
 *   the butterflies of all slots interleaved), A(:, c) -= v_j conj(tau_j) w_c.
 * Synchronization (FLOW, docs/kernels/journal.md "Dataflow"). FLOW = 0: one barrier per
 * column (__syncwarp for the one-warp matrices): v is double-buffered, and the owners of
 * column j+1 are the threads that just updated it, so the next norm needs no barrier of
 * its own. FLOW & 1, dataflow: every reflector keeps its own shared-memory buffer
 * (MCAP x NCAP in all) and one-shot mbarrier, which its TR owner lanes arrive on after
 * publishing it; a warp waits for v_j alone (no block barrier), so the owner of column j+2
 * starts as soon as v_{j+1} is out while slower warps still update with older reflectors.
 * FLOW & 16: the TCW column slots of a warp are strided by the matrix's warps (slot
 * w + NW*h for its h-th lane group), so consecutive columns — whose owner steps follow one
 * another on the critical path — belong to different warps, and a warp's own trailing
 * update never stands between two owner steps. FLOW & 2: deferred updates (qr_step).
 * FLOW & 32, clusters (sm_90): matrix k's rows are spread over the P CTAs of cluster k, each
 * holding a TR*RPT-row tile of every column with this same code; every column reduction
 * (the owner's dot and its norm, the trailing dots) is summed per CTA and exchanged through
 * distributed shared memory (ClusterCtx below), so the chain has two cluster hops a column.
 * Slot rotation: the columns of group g (g*TC .. g*TC+TC-1) sit in register slot 0
 * while they are factored; when a group is done its R is stored and the slots shift
 * down (a[p][q] = a[p][q+1]), so the step body exists once in the code with the next
 * column always in slot 0 (compile-time register indices, no local memory). An
 * instantiation per column slot multiplied the code by CPT (110-250 KB per kernel),
 * and a second lookahead variant for slot 1 pushed the 240x66 kernel into spills.
 * FLOW & 2048, fused with n > 16: a solver warp beside the matrix's warps does the first 16
 * beams' forward substitution while the matrix is factored (its owners store each column of
 * R as it becomes final), so that only the backward half of the weights is left after it
 * (docs/kernels/journal.md "A solver warp"; kept for the 240x66 row only, where it pays).
 * FLOW & 64 and FLOW & 128 are bounds for measurement only (tests/bench/gpu/qr_bounds.cu; never in
 * a dispatch list, their results are not a factorization): 64 = the chain alone (the owner
 * steps and their waits, no trailing update), 128 = the trailing update alone (no owner step,
 * no wait: every warp applies n - 1 reflectors from a buffer of fixed values).
 * VREG = false re-reads v from shared memory in the update instead of keeping RPT
 * values live (for the largest shapes, to stay clear of register spills).
 * MATS > 1 puts MATS independent one-warp matrices in a block (NT must be 32; the
 * barrier is then __syncwarp). */
#ifndef RTK_QR_REG_CUH
#define RTK_QR_REG_CUH

#include "rtk_device.cuh"

namespace rtk {

/* the fused blocked solve's diagonal block and beams a pass (solve_beams_blocked) */
constexpr int BLK_BS = 8, BLK_NBC = 16;

/* column slots per warp: TR-lane groups in a warp */
constexpr int slots_per_warp(int tr) { return tr >= 32 ? 1 : 32 / tr; }

template <int TR, int TC, int RPT, int CPT, int MATS, int FLOW = 0>
struct RegShape {
    static constexpr int NT = TR * TC;                 /* threads per matrix        */
    static constexpr int THREADS = NT * MATS;          /* threads per block         */
    static constexpr int MCAP = TR * RPT, NCAP = TC * CPT;
    static constexpr int TCW = slots_per_warp(TR);     /* column slots per warp     */
    static constexpr int WS = (FLOW & 16) ? NT / 32 : 1; /* stride of a warp's slots */
    /* FLOW & 2048, the fused kernels with n > 16: one more warp, the solver warp
     * (blk_forward_warp: the first 16 beams' forward substitution while the matrix is
     * factored), and a second mbarrier a column (R's column k stored) */
    static constexpr bool SOLVER = (FLOW & 2048) != 0 && NCAP > 16;
    /* barrier-synchronized: v[2][MCAP], tau[2]; FLOW: tau[NCAP], one mbarrier per
     * reflector (NCAP x 8 bytes; FLOW & 2048: and one per column of R) here, every v
     * (MCAP x NCAP) after the fused solve's area */
    static constexpr int QR_F2 = FLOW ? (SOLVER ? 3 : 2) * NCAP : 2 * MCAP + 2;
    static constexpr int V_F2 = FLOW ? MCAP * NCAP : 0;
    static constexpr int W_F2 = solve_smem_f2(NCAP)    /* fused solve (+ the solver warp's y) */
        + (SOLVER ? NCAP * (BLK_NBC + 1) : 0);
    /* FLOW & 32, a cluster's CTAs share the rows: after v, the partial sums they exchange
     * (ClusterCtx), [(sigma, alpha) NCAP x PMAX float4][owner's w 2 x PMAX][trailing w
     * 2 x TC x PMAX x CPT2][mbarriers: NCAP + 2 + 2 x TC] */
    static constexpr bool CL = (FLOW & 32) != 0;
    static constexpr bool CHAIN_ONLY = (FLOW & 64) != 0, UPDATE_ONLY = (FLOW & 128) != 0;
    static constexpr int UPDATE_KB = (FLOW & 512) ? 4 : (FLOW & 256) ? 2 : 1; /* bounds only */
    static_assert(UPDATE_KB == 1 || (UPDATE_ONLY && !CL && !(FLOW & 2)),
                  "the blocked update bound: update-only dataflow rows without deferral");
    static constexpr int PMAX = 16;                    /* CTAs a cluster, at most      */
    static constexpr int CPT2 = (CPT + 1) & ~1;        /* a lane group's slots, paired  */
    static constexpr int CL_F2 = CL ? 2 * NCAP * PMAX + 2 * PMAX + 2 * TC * PMAX * CPT2 + NCAP + 2 + 2 * TC : 0;
    static_assert(TR <= 32 && (32 % TR) == 0, "a column slot must sit inside one warp");
    static_assert(NT % 32 == 0, "whole warps per matrix");
    static_assert(MATS == 1 || NT == 32, "several matrices per block only one warp each");
    static_assert(!FLOW || MATS == 1, "dataflow variants: one matrix per block");
    static_assert(!CL || ((FLOW & 1) && !(FLOW & 2) && NCAP <= MCAP),
                  "cluster variants: dataflow, no deferral, R within the first CTA's rows");
};

/* A block's threads: the matrices' and, fused with the solver warp (FLOW & 2048), one more warp */
template <int TR, int TC, int RPT, int CPT, int MATS, bool WEIGHTS, int FLOW>
constexpr int qr_reg_threads()
{
    return RegShape<TR, TC, RPT, CPT, MATS, FLOW>::THREADS +
           (WEIGHTS && RegShape<TR, TC, RPT, CPT, MATS, FLOW>::SOLVER ? 32 : 0);
}

/* FLOW & 32: where a cluster CTA's exchange buffers are, and which rows it holds. Every
 * reduction over a column (the owner's dot and norm, the trailing dots) is summed in each
 * CTA over its rows, sent to every CTA of the cluster (lane r of a lane group stores to
 * CTA r with st.async, completing its bytes on that CTA's mbarrier) and summed there in
 * CTA order: every CTA gets the same bits, so they all form the same reflector and none
 * has to send v. The trailing dots of a lane group's slots go out in pairs (st.async.v4)
 * on one barrier per lane group and step: half the messages and one wait a step instead of
 * one a column took 20-30 % off clusters of 4-16 CTAs (docs/kernels/journal.md "Clusters: fewer
 * messages", with the variants that did not pay).
 * Buffers written at step j are written again at step j + 2, only by a CTA that has
 * received this CTA's step-(j + 1) partial, which this CTA sends after the loads of step j
 * returned (their sums feed it). */
struct ClusterCtx {
    float4 *x2;                  /* [NCAP][PMAX]: sigma, Re alpha, Im alpha of column j */
    float2 *wo;                  /* [2][PMAX]: the owner's w_{j+1} at step j, in j & 1  */
    float2 *wt;                  /* [2][TC][PMAX][CPT2]: lane group tc's slot q from CTA r
                                    at step j in [j & 1][tc][r][q]                      */
    unsigned long long *bx2;     /* [NCAP], one phase                                  */
    unsigned long long *bwo;     /* [2], phase (j >> 1) & 1 at step j                  */
    unsigned long long *bwt;     /* [2][TC], the same                                  */
    int rank, size, r0;          /* this CTA, the cluster's CTAs, its first row        */
};

/* Send a partial sum to every CTA (lanes tr < size of the group: one each); lane 0 tells
 * this CTA's barrier how many bytes its phase waits for. A cluster of one CTA (m within
 * one tile) exchanges nothing: its partial sums are the sums (and compute-sanitizer
 * refuses distributed shared memory in a one-CTA cluster). */
template <class T>
__device__ __forceinline__ void cl_send(T part, T *slot, unsigned long long *bar, const ClusterCtx &c,
                                        int tr)
{
    if (c.size == 1) return;
    if (tr == 0) mbar_expect_tx(bar, (unsigned)(c.size * sizeof(T)));
    if (tr < c.size)
        st_async(cluster_addr(slot + c.rank, (unsigned)tr), part, cluster_addr(bar, (unsigned)tr));
}
/* Wait for the cluster's partial sums and add them in CTA order. A slot is written again
 * two steps later only by a CTA that has received this CTA's next partial, which this CTA
 * sends after the loads below have returned (their sum feeds it). */
__device__ __forceinline__ float2 cl_sum(float2 part, const float2 *slot, unsigned long long *bar,
                                         unsigned parity, int size)
{
    if (size == 1) return part;
    mbar_wait_parity(bar, parity);
    float2 s = slot[0];
    for (int r = 1; r < size; r++) s = make_float2(s.x + slot[r].x, s.y + slot[r].y);
    return s;
}
__device__ __forceinline__ float4 cl_sum(float4 part, const float4 *slot, unsigned long long *bar,
                                         int size)
{
    if (size == 1) return part;
    mbar_wait_parity(bar, 0);
    float4 s = slot[0];
    for (int r = 1; r < size; r++)
        s = make_float4(s.x + slot[r].x, s.y + slot[r].y, s.z + slot[r].z, 0.f);
    return s;
}

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
template <int TR, int RPT, int CPT, int Q, bool CL = false, int PMAX = 1>
__device__ __forceinline__ void make_reflector(float2 (&a)[RPT][CPT], int j, int tr,
                                               float2 *vout, float2 *tauout,
                                               const ClusterCtx *cl = nullptr)
{
    const int r0 = CL ? cl->r0 : 0; /* rows are r0 + tr + TR*p; v's buffer is the CTA's */
    float sig[2] = {0.f, 0.f}, ar = 0.f, ai = 0.f; /* two chains: this is the critical path */
#pragma unroll
    for (int p = 0; p < RPT; p++) {
        const int row = r0 + tr + TR * p;
        const float2 x = a[p][Q];
        if (row > j) sig[p & 1] = fmaf(x.x, x.x, fmaf(x.y, x.y, sig[p & 1]));
        if (row == j) {
            ar = x.x;
            ai = x.y;
        }
    }
    float sigma = sig[0] + sig[1];
    const unsigned mask = group_mask<TR>();
#pragma unroll
    for (int o = TR / 2; o > 0; o >>= 1) {
        sigma += __shfl_xor_sync(mask, sigma, o, TR);
        ar += __shfl_xor_sync(mask, ar, o, TR);
        ai += __shfl_xor_sync(mask, ai, o, TR);
    }
    if constexpr (CL) {
        const float4 part = make_float4(sigma, ar, ai, 0.f);
        cl_send(part, cl->x2 + j * PMAX, cl->bx2 + j, *cl, tr);
        const float4 s = cl_sum(part, cl->x2 + j * PMAX, cl->bx2 + j, cl->size);
        sigma = s.x;
        ar = s.y;
        ai = s.z;
    }
    float2 beta, tau, scale;
    clarfg(ar, ai, sigma, &beta, &tau, &scale);
#pragma unroll
    for (int p = 0; p < RPT; p++) {
        const int row = r0 + tr + TR * p;
        float2 v = row > j ? cmul(a[p][Q], scale) : make_float2(row == j ? 1.f : 0.f, 0.f);
        vout[tr + TR * p] = v;
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

/* Owners of column j+1 (slot Q): apply H_j, then form and publish reflector j+1. */
template <int TR, int RPT, int CPT, bool VREG, int Q, bool CL = false, int PMAX = 1>
__device__ __forceinline__ void owner_step(float2 (&a)[RPT][CPT], const float2 (&v)[RPT],
                                           const float2 *vj, float2 tau, int j1, int tr,
                                           float2 *vnext, float2 *taunext,
                                           const ClusterCtx *cl = nullptr)
{
    float2 wa[4] = {c0(), c0(), c0(), c0()}; /* four chains: this is the critical path */
#pragma unroll
    for (int p = 0; p < RPT; p++) {
        const float2 vp = VREG ? v[p] : ld_shared_f2(vj + TR * p);
        wa[p & 3] = cjfma(vp, a[p][Q], wa[p & 3]);
    }
    float2 w = group_sum2<TR>(make_float2((wa[0].x + wa[1].x) + (wa[2].x + wa[3].x),
                                          (wa[0].y + wa[1].y) + (wa[2].y + wa[3].y)),
                              group_mask<TR>());
    if constexpr (CL) { /* step j = j1 - 1's exchange of column j1 */
        const int b = (j1 - 1) & 1;
        cl_send(w, cl->wo + b * PMAX, cl->bwo + b, *cl, tr);
        w = cl_sum(w, cl->wo + b * PMAX, cl->bwo + b, ((j1 - 1) >> 1) & 1, cl->size);
    }
    const float2 s = cjmul(tau, w); /* conj(tau) w */
#pragma unroll
    for (int p = 0; p < RPT; p++) {
        const float2 vp = VREG ? v[p] : ld_shared_f2(vj + TR * p);
        a[p][Q] = cfms(vp, s, a[p][Q]);
    }
    make_reflector<TR, RPT, CPT, Q, CL, PMAX>(a, j1, tr, vnext, taunext, cl);
}

/* Apply H (v, tau: v_j's rows in registers, or at vj for VREG = false) to the columns
 * > j1 of slots Q0..Q1-1 (slot q holds column tc + TC*(g+q)); a slot is skipped by the
 * whole warp (a uniform branch) when none of the warp's columns in it needs the update. */
template <int TR, int TC, int RPT, int CPT, bool VREG, int Q0, int Q1, int WS, bool CL = false,
          int PMAX = 1>
__device__ __forceinline__ void apply_slots(float2 (&a)[RPT][CPT], const float2 (&v)[RPT],
                                            const float2 *vj, float2 tau, int j1, int g, int n,
                                            int tc, int wtc0, int tr = 0,
                                            const ClusterCtx *cl = nullptr)
{
    constexpr int TCW = slots_per_warp(TR);
    float2 w[CPT];
    bool act[CPT];
#pragma unroll
    for (int q = Q0; q < Q1; q++) {
        const int c0w = wtc0 + TC * (g + q); /* the warp's first column in slot q */
        act[q] = c0w + WS * (TCW - 1) > j1 && c0w < n;
        w[q] = c0();
        if (act[q]) {
            float2 w0 = c0(), w1 = c0();
#pragma unroll
            for (int p = 0; p < RPT; p++) {
                const float2 vp = VREG ? v[p] : ld_shared_f2(vj + TR * p);
                if (p & 1)
                    w1 = cjfma(vp, a[p][q], w1);
                else
                    w0 = cjfma(vp, a[p][q], w0);
            }
            w[q] = make_float2(w0.x + w1.x, w0.y + w1.y);
        }
    }
#pragma unroll
    for (int o = TR / 2; o > 0; o >>= 1) /* all slots' butterflies, interleaved */
#pragma unroll
        for (int q = Q0; q < Q1; q++) {
            w[q].x += __shfl_xor_sync(0xffffffffu, w[q].x, o, TR);
            w[q].y += __shfl_xor_sync(0xffffffffu, w[q].y, o, TR);
        }
    if constexpr (CL) { /* the lane group's partials in pairs, on one barrier */
        constexpr int CPT2 = (CPT + 1) & ~1;
        const int b = ((j1 - 1) & 1) * TC + tc;
        const unsigned par = ((j1 - 1) >> 1) & 1;
        bool on[CPT];
        int nact = 0;
#pragma unroll
        for (int q = 0; q < CPT; q++) {
            const int col = tc + TC * (g + q);
            on[q] = q >= Q0 && q < Q1 && act[q] && col > j1 && col < n;
            nact += on[q];
        }
        /* the active slots are consecutive and their count only falls with j, so the
         * barrier is used at every step from 0 until the group's last column: parity j/2 */
        if (nact > 0 && cl->size > 1) {
            if (tr == 0) mbar_expect_tx(cl->bwt + b, (unsigned)(cl->size * nact * sizeof(float2)));
            if (tr < cl->size) {
                const unsigned bar = cluster_addr(cl->bwt + b, (unsigned)tr);
                float2 *dst = cl->wt + ((size_t)b * PMAX + cl->rank) * CPT2;
#pragma unroll
                for (int q = 0; q < CPT; q += 2) {
                    if (q + 1 < CPT && on[q] && on[q + 1])
                        st_async(cluster_addr(dst + q, (unsigned)tr),
                                 make_float4(w[q].x, w[q].y, w[q + 1].x, w[q + 1].y), bar);
                    else if (on[q])
                        st_async(cluster_addr(dst + q, (unsigned)tr), w[q], bar);
                    else if (q + 1 < CPT && on[q + 1])
                        st_async(cluster_addr(dst + q + 1, (unsigned)tr), w[q + 1], bar);
                }
            }
            mbar_wait_parity(cl->bwt + b, par);
            const float2 *src = cl->wt + (size_t)b * PMAX * CPT2;
#pragma unroll
            for (int q = 0; q < CPT; q++)
                if (on[q]) {
                    float2 sum = src[q];
                    for (int r = 1; r < cl->size; r++)
                        sum = make_float2(sum.x + src[r * CPT2 + q].x, sum.y + src[r * CPT2 + q].y);
                    w[q] = sum;
                }
        }
    }
#pragma unroll
    for (int q = Q0; q < Q1; q++) {
        if (act[q] && tc + TC * (g + q) > j1 && (!CL || tc + TC * (g + q) < n)) {
            const float2 s = cjmul(tau, w[q]);
#pragma unroll
            for (int p = 0; p < RPT; p++) {
                const float2 vp = VREG ? v[p] : ld_shared_f2(vj + TR * p);
                a[p][q] = cfms(vp, s, a[p][q]);
            }
        }
    }
}

/* Bound builds only (FLOW & 128 with FLOW & 256 (KB = 2) or FLOW & 512 (KB = 4)): the
 * trailing update as it would run blocked, KB reflectors j .. j+KB-1 applied to the slots in
 * one pass (compact WY: w = V^H a in KB interleaved butterflies, s = T^H w with T's coupling
 * from shared memory, a -= V s), v re-read from shared memory. Only its time means anything
 * (qr_bounds: how much of the update alone is latency that blocking would hide). */
template <int TR, int KB>
__device__ __forceinline__ void load_v_kb(float2 (&vp)[KB], const float2 *vbuf, int mcap, int ncap, int j,
                                          int tr, int p)
{
#pragma unroll
    for (int r = 0; r < KB; r++) vp[r] = ld_shared_f2(vbuf + min(j + r, ncap - 1) * mcap + tr + TR * p);
}
template <int TR, int TC, int RPT, int CPT, int KB, int WS>
__device__ __forceinline__ void apply_slots_kb(float2 (&a)[RPT][CPT], const float2 *vbuf, int mcap, int ncap,
                                               const float2 *taub, int j, int g, int n, int tc,
                                               int wtc0, int tr)
{
    constexpr int TCW = slots_per_warp(TR);
    const int j1 = j + 1;
    float2 w[CPT][KB];
    bool act[CPT];
#pragma unroll
    for (int q = 0; q < CPT; q++) {
        const int c0w = wtc0 + TC * (g + q);
        act[q] = c0w + WS * (TCW - 1) > j1 && c0w < n;
#pragma unroll
        for (int r = 0; r < KB; r++) w[q][r] = c0();
    }
#pragma unroll
    for (int p = 0; p < RPT; p++) {
        float2 vp[KB];
        load_v_kb<TR, KB>(vp, vbuf, mcap, ncap, j, tr, p);
#pragma unroll
        for (int q = 0; q < CPT; q++)
            if (act[q])
#pragma unroll
                for (int r = 0; r < KB; r++) w[q][r] = cjfma(vp[r], a[p][q], w[q][r]);
    }
#pragma unroll
    for (int o = TR / 2; o > 0; o >>= 1)
#pragma unroll
        for (int q = 0; q < CPT; q++)
#pragma unroll
            for (int r = 0; r < KB; r++) {
                w[q][r].x += __shfl_xor_sync(0xffffffffu, w[q][r].x, o, TR);
                w[q][r].y += __shfl_xor_sync(0xffffffffu, w[q][r].y, o, TR);
            }
#pragma unroll
    for (int q = 0; q < CPT; q++)
#pragma unroll
        for (int r = 0; r < KB; r++) { /* s_r = conj(tau_r)(w_r - sum_{i<r} G_ri s_i) */
            float2 x = w[q][r];
#pragma unroll
            for (int i = 0; i < r; i++) x = cfms(taub[(j + i + r) % n], w[q][i], x);
            w[q][r] = cjmul(taub[min(j + r, ncap - 1)], x);
        }
#pragma unroll
    for (int p = 0; p < RPT; p++) {
        float2 vp[KB];
        load_v_kb<TR, KB>(vp, vbuf, mcap, ncap, j, tr, p);
#pragma unroll
        for (int q = 0; q < CPT; q++)
            if (act[q] && tc + TC * (g + q) > j1)
#pragma unroll
                for (int r = 0; r < KB; r++) a[p][q] = cfms(vp[r], w[q][r], a[p][q]);
    }
}

/* The solver warp's feed (FLOW & 2048, fused): the owners of column j store its rows <= j
 * (final now: R's column, beta on the diagonal) into R's shared copy, then arrive on rbar[j]. */
template <int TR, int RPT, int CPT, int LD>
__device__ __forceinline__ void feed_solver(const float2 (&a)[RPT][CPT], int j, int tr, float2 *Rs,
                                            unsigned long long *rbar)
{
#pragma unroll
    for (int p = 0; p < RPT; p++) {
        const int row = tr + TR * p;
        if (row <= j) Rs[row * LD + j] = a[p][0];
    }
    mbar_arrive(rbar + j);
}

/* Step j; slot 0 holds group g, which contains column j+1; see the file comment.
 * FLOW & 1: no block barrier; v_j sits in its own buffer (vbuf + j*MCAP) and is waited
 * for on its mbarrier (mbar[j]), so a warp waits only for the reflector it needs.
 * FLOW & 2, deferred updates: the warp that owns column j+2 (when that column is in slot 0)
 * applies H_j to slot 0 only, so that nothing but its owner step stands between v_{j+1}'s
 * arrival and v_{j+2}'s publication; its slots >= 1 catch up (reflectors lo..) in the
 * first step it does not own the next column. Nothing is owed at a group rotation: the
 * step before one never defers (column j+2 then starts the next group). */
template <int TR, int TC, int RPT, int CPT, int MATS, bool VREG, int FLOW>
__device__ __forceinline__ void qr_step(float2 (&a)[RPT][CPT], int j, int g, int n, int tr,
                                        int tc, int wtc0, float2 *vbuf, float2 *taub,
                                        unsigned long long *mbar, int &lo, const ClusterCtx *cl,
                                        float2 *Rfeed = nullptr)
{
    using S = RegShape<TR, TC, RPT, CPT, MATS, FLOW>;
    constexpr int WS = S::WS;
    const float2 *vj;
    float2 *vnext, *taunext;
    float2 tau;
    if constexpr (FLOW) {
        if constexpr (!S::UPDATE_ONLY) mbar_wait0(mbar + j);
        vj = vbuf + j * S::MCAP + tr;
        tau = taub[j];
        vnext = vbuf + (j + 1) * S::MCAP;
        taunext = taub + j + 1;
    } else {
        group_sync<MATS>();
        const int buf = j & 1;
        vj = vbuf + buf * S::MCAP + tr;
        tau = taub[buf];
        vnext = vbuf + (buf ^ 1) * S::MCAP;
        taunext = taub + (buf ^ 1);
    }
    float2 v[RPT]; /* VREG = false: unused, v is re-read from shared memory */
    if constexpr (VREG) {
#pragma unroll
        for (int p = 0; p < RPT; p++) v[p] = vj[TR * p];
    }
    const int j1 = j + 1;

    /* the critical path first: column j+1, always in slot 0 */
    if (!S::UPDATE_ONLY && j1 < n && tc == j1 % TC) {
        owner_step<TR, RPT, CPT, VREG, 0, S::CL, S::PMAX>(a, v, vj, tau, j1, tr, vnext, taunext, cl);
        if constexpr (FLOW) mbar_arrive(mbar + j1); /* each of the TR owner lanes */
        if constexpr (S::SOLVER)
            if (Rfeed) feed_solver<TR, RPT, CPT, solve_ld(S::NCAP)>(a, j1, tr, Rfeed, mbar + S::NCAP);
    }
    if constexpr (S::CHAIN_ONLY) return;
    if constexpr (S::UPDATE_KB > 1) { /* bound builds: the kernel loop steps KB columns */
        apply_slots_kb<TR, TC, RPT, CPT, S::UPDATE_KB, WS>(a, vbuf, S::MCAP, S::NCAP, taub, j, g, n, tc, wtc0, tr);
        return;
    }
    if constexpr ((FLOW & 2) && CPT > 1) {
        const int j2 = j + 2, s2 = j2 % TC - wtc0; /* warp-uniform */
        if (j2 < n && j2 % TC != 0 && s2 >= 0 && s2 % WS == 0 && s2 / WS < S::TCW) {
            apply_slots<TR, TC, RPT, CPT, VREG, 0, 1, WS>(a, v, vj, tau, j1, g, n, tc, wtc0);
            return; /* slots >= 1 owe H_j */
        }
        if (lo < j) {
#pragma unroll 1
            for (; lo < j; lo++) { /* H_lo, owed by slots >= 1 */
                const float2 *vl = vbuf + lo * S::MCAP + tr;
                float2 vv[RPT];
                if constexpr (VREG) {
#pragma unroll
                    for (int p = 0; p < RPT; p++) vv[p] = ld_shared_f2(vl + TR * p);
                }
                apply_slots<TR, TC, RPT, CPT, VREG, 1, CPT, WS>(a, vv, vl, taub[lo], lo + 1, g, n, tc, wtc0);
            }
            if constexpr (VREG) { /* re-read, so v was not held through the loop */
#pragma unroll
                for (int p = 0; p < RPT; p++) v[p] = ld_shared_f2(vj + TR * p);
            }
        }
        lo = j + 1;
    }
    apply_slots<TR, TC, RPT, CPT, VREG, 0, CPT, WS, S::CL, S::PMAX>(a, v, vj, tau, j1, g, n, tc,
                                                                    wtc0, tr, cl);
}

/* Store R's entries of slot Q (column tc + TC*(g+Q)): to global memory (Ak != NULL)
 * and, for the fused solves, row-major to shared memory (Rs != NULL). */
template <int TR, int TC, int RPT, int CPT, int Q>
__device__ __forceinline__ void store_slot(const float2 (&a)[RPT][CPT], int g, int n, int tr,
                                           int tc, float2 *Ak, int lda, float2 *Rs, int ldr)
{
    const int col = tc + TC * (g + Q);
    if (col >= n) return;
#pragma unroll
    for (int p = 0; p < RPT; p++) {
        const int row = tr + TR * p;
        if (row <= col) {
            if (Ak) Ak[(size_t)col * lda + row] = a[p][Q];
            if (Rs) Rs[row * ldr + col] = a[p][Q];
        }
    }
}

template <int TR, int TC, int RPT, int CPT, int Q>
__device__ __forceinline__ void store_slots(const float2 (&a)[RPT][CPT], int g, int n, int tr,
                                            int tc, float2 *Ak, int lda, float2 *Rs, int ldr)
{
    if constexpr (Q < CPT) {
        store_slot<TR, TC, RPT, CPT, Q>(a, g, n, tr, tc, Ak, lda, Rs, ldr);
        store_slots<TR, TC, RPT, CPT, Q + 1>(a, g, n, tr, tc, Ak, lda, Rs, ldr);
    }
}

template <int TR, int TC, int RPT, int CPT, int MATS, bool VREG, bool WEIGHTS, bool GATHER, int MINB,
          int FLOW>
__global__ void __launch_bounds__((qr_reg_threads<TR, TC, RPT, CPT, MATS, WEIGHTS, FLOW>()), MINB)
    qr_reg_kernel(const QrArgs args)
{
    using S = RegShape<TR, TC, RPT, CPT, MATS, FLOW>;
    /* the solver warp (FLOW & 2048, fused, n > 16): the block's last warp, no columns */
    constexpr bool SOLVER = WEIGHTS && S::SOLVER;
    static_assert(!S::SOLVER || (MATS == 1 && (FLOW & 1) && !S::CL), "the solver warp: dataflow rows");
    static_assert(!S::CL || (!WEIGHTS && !GATHER), "cluster variants: QR alone");
    extern __shared__ float2 smem[];
    const int g0 = MATS > 1 ? (int)threadIdx.x / S::NT : 0;
    const int t = MATS > 1 ? (int)threadIdx.x % S::NT : (int)threadIdx.x;
    const bool solver = SOLVER && t >= S::NT;
    /* FLOW & 32: matrix k's rows are spread over the CTAs of cluster k */
    const int crank = S::CL ? (int)cluster_rank() : 0, csize = S::CL ? (int)cluster_size() : 1;
    const int k = S::CL ? (int)blockIdx.x / csize : (int)blockIdx.x * MATS + g0;
    if (k >= args.batch) return; /* whole warps only (MATS > 1 means one warp each) */
    const bool timer = WEIGHTS && args.phase && k == 0 && t == 0;
    if (timer) args.phase[0] = globaltimer();

    /* shared memory, per matrix: barrier-synchronized [v 2 x MCAP][tau 2][solve];
     * FLOW: [tau NCAP][mbarriers NCAP][solve][v MCAP x NCAP] */
    float2 *const base = smem + g0 * (S::QR_F2 + (WEIGHTS ? S::W_F2 : 0));
    float2 *vbuf = FLOW ? base + S::QR_F2 + (WEIGHTS ? S::W_F2 : 0) : base;
    float2 *taub = FLOW ? base : base + 2 * S::MCAP;
    unsigned long long *mbar = FLOW ? reinterpret_cast<unsigned long long *>(base + S::NCAP) : nullptr;
    constexpr int LD = solve_ld(S::NCAP);
    float2 *Rs = WEIGHTS ? base + S::QR_F2 : nullptr;
    float2 *dinv = WEIGHTS ? Rs + S::NCAP * LD : nullptr;
    int *flag = WEIGHTS ? reinterpret_cast<int *>(dinv + S::NCAP) : nullptr;
    /* SOLVER: the solver warp's y (blk_forward_warp), and R's columns' mbarriers */
    float2 *yin = SOLVER ? dinv + S::NCAP + 1 : nullptr;
    unsigned long long *rbar = SOLVER ? mbar + S::NCAP : nullptr;
    if (WEIGHTS && t == 0) *flag = 0;
    if constexpr (FLOW) /* one per reflector (and R column): complete when its TR owner lanes arrive */
        for (int i = t; !solver && i < (SOLVER ? 2 : 1) * S::NCAP; i += S::NT) mbar_init(mbar + i, TR);
    ClusterCtx cl{};
    if constexpr (S::CL) { /* after v: the exchange buffers, then their barriers (one arrival,
                              the receiver's, and the bytes of every CTA's partial) */
        cl.x2 = reinterpret_cast<float4 *>(vbuf + S::MCAP * S::NCAP);
        cl.wo = vbuf + S::MCAP * S::NCAP + 2 * S::NCAP * S::PMAX;
        cl.wt = cl.wo + 2 * S::PMAX; /* 16-byte aligned: every offset before is even */
        cl.bx2 = reinterpret_cast<unsigned long long *>(cl.wt + 2 * TC * S::PMAX * S::CPT2);
        cl.bwo = cl.bx2 + S::NCAP;
        cl.bwt = cl.bwo + 2;
        cl.rank = crank;
        cl.size = csize;
        cl.r0 = crank * S::MCAP;
        for (int i = t; i < S::NCAP + 2 + 2 * TC; i += S::NT) mbar_init(cl.bx2 + i, 1); /* + bytes */
    }
    /* the warp's TCW column slots: wtc0 + WS*h for its h-th group of TR lanes (WS = 1:
     * consecutive slots; FLOW & 16: strided by the warps a matrix has, so that consecutive
     * columns, whose owner steps follow each other, belong to different warps) */
    const int tr = t % TR, wtc0 = S::WS == 1 ? (t & ~31) / TR : t / 32;
    const int tc = wtc0 + S::WS * ((t & 31) / TR);
    const int m = args.m, n = args.n, lda = args.lda;
    float2 *Ak = args.A + (long long)k * args.stride;
    /* a gathering kernel has no matrix in memory to write R back to */
    float2 *Aout = (!GATHER && !WEIGHTS && crank == 0) ? Ak : nullptr;
    const int r0 = S::CL ? crank * S::MCAP : 0; /* R's rows (< n <= MCAP) are in CTA 0 */

    /* Training rows straight from the Doppler cube (rtk_gather): the matrix's threads
     * gather it into shared memory (consecutive threads take consecutive rows, i.e. nearby
     * range cells: coalesced), then the one register load below reads it from there. A
     * second register load path in the same kernel cost registers (the 240x66 kernel
     * spilled), hence a separate instantiation. */
    const float2 *src = Ak;
    int lds = lda;
    if constexpr (GATHER) { /* FLOW: the stage is v's buffer, free once in registers */
        float2 *stage = FLOW ? vbuf : smem + MATS * (S::QR_F2 + (WEIGHTS ? S::W_F2 : 0)) + g0 * S::MCAP * S::NCAP;
        if (!solver) gather_to_smem<S::NT>(args, k, m, n, t, stage);
        group_sync<MATS>();
        src = stage;
        lds = m;
    }
    float2 a[RPT][CPT];
#pragma unroll
    for (int q = 0; q < CPT; q++) {
        const int col = tc + TC * q;
#pragma unroll
        for (int p = 0; p < RPT; p++) {
            const int row = r0 + tr + TR * p;
            a[p][q] = (!solver && row < m && col < n) ? src[(size_t)col * lds + row] : c0();
        }
    }
    /* FLOW: the mbarriers' initialization, and the gather stage read, before anyone
     * publishes a reflector */
    if constexpr (S::CL) { /* ... and, in every CTA of the cluster, before anyone sends */
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        cluster_sync();
    } else if constexpr (FLOW) {
        __syncthreads();
    }
    if (solver) { /* the block's last warp: no columns; y as R's columns come */
        blk_forward_warp<BLK_NBC>(Rs, LD, rbar, n, args.nbeams, args.V, yin, t - S::NT);
    } else {
    if constexpr (S::UPDATE_ONLY) { /* fixed, finite reflectors; read after the barrier */
        static_assert(FLOW & 1, "bounds: dataflow rows");
        for (int i = t; i < S::MCAP * S::NCAP; i += S::NT)
            vbuf[i] = make_float2(0.01f * (float)((i * 7) % 13), -0.005f);
        for (int i = t; i < S::NCAP; i += S::NT) taub[i] = make_float2(1.5f, 0.25f);
        if constexpr (S::CL) cluster_sync(); else __syncthreads();
    } else if (tc == 0) {
        make_reflector<TR, RPT, CPT, 0, S::CL, S::PMAX>(a, 0, tr, vbuf, taub, &cl);
        if constexpr (FLOW) mbar_arrive(mbar);
        if constexpr (SOLVER) feed_solver<TR, RPT, CPT, LD>(a, 0, tr, Rs, rbar);
    }
    /* slot 0 holds group g; at the last step of a group (column j+1 starts group g+1)
     * slot 0 is final — only columns > j change in step j — so it is stored and the
     * slots rotate before that step, and column j+1 is always in slot 0 */
    int g = 0, lo = 0; /* lo: (FLOW & 2) the first reflector the slots >= 1 still owe */
#pragma unroll 1
    for (int j = 0; j < n - 1; j += S::UPDATE_KB) { /* UPDATE_KB > 1: bound builds only */
        if (S::UPDATE_KB == 1 ? j + 1 == TC * (g + 1) : j + 1 >= TC * (g + 1)) {
            store_slot<TR, TC, RPT, CPT, 0>(a, g, n, tr, tc, Aout, lda, SOLVER ? nullptr : Rs, LD);
            /* a rotation without stores (SOLVER: R is fed per column) must stay a branch: the
             * compiler otherwise turns its moves into selects executed every step (+90 FSEL a
             * step, 16 % of the 240x66 factorization; docs/kernels/journal.md "A solver warp") */
            if constexpr (SOLVER) asm volatile("" ::: "memory");
#pragma unroll
            for (int q = 0; q + 1 < CPT; q++)
#pragma unroll
                for (int p = 0; p < RPT; p++) a[p][q] = a[p][q + 1];
#pragma unroll
            for (int p = 0; p < RPT; p++) a[p][CPT - 1] = c0();
            g++;
        }
        qr_step<TR, TC, RPT, CPT, MATS, VREG, FLOW>(a, j, g, n, tr, tc, wtc0, vbuf, taub, mbar, lo, &cl,
                                                    SOLVER ? Rs : nullptr);
    }
    /* SOLVER: R is in shared memory already, each column stored by its owners */
    store_slots<TR, TC, RPT, CPT, 0>(a, g, n, tr, tc, Aout, lda, SOLVER ? nullptr : Rs, LD);
    } /* !solver */
    if constexpr (S::CL) /* no CTA leaves while another may still write to its buffers */
        cluster_sync();

    if constexpr (WEIGHTS) {
        if (timer) args.phase[1] = globaltimer();
        group_sync<MATS>();
        for (int i = t; !solver && i < n; i += S::NT) {
            const float2 d = Rs[i * LD + i];
            if (!cfinite_nonzero(d)) *flag = 1;
            dinv[i] = crecip(d);
        }
        group_sync<MATS>();
        if (*flag) {
            if (t == 0) atomicMin(&args.flags->bad_item, k);
            return;
        }
        if (args.R) { /* R kept for later kernels (the adaptive detectors; one uniform branch
                         where not asked for), before a blocked solve overwrites Rs */
            const int nt = MATS > 1 ? S::NT : (int)blockDim.x;
            float2 *Rk = args.R + (long long)k * args.rstride;
            for (int i = t; i < n * n; i += nt) {
                const int col = i / n, row = i - col * n;
                if (row <= col) Rk[(size_t)col * n + row] = Rs[row * LD + col];
            }
            group_sync<MATS>();
        }
        static_assert(S::NT % 32 == 0, "whole warps per matrix");
        if (t < 32) diag_ratio_warp([&](int i) { return Rs[i * LD + i]; }, n, k, args.flags, t);
        float2 *Wk = args.W + (size_t)k * args.nbeams * n;
        using SS = SolveShape<S::NCAP>;
        if constexpr (S::NCAP <= 16) { /* measured faster for the small shapes (docs/kernels/design.md) */
            /* off warp 0, which reports the diagonal's ratio meanwhile, where there are others */
            constexpr int L0 = S::NT >= 64 ? 32 : 0;
            if (args.fused_subst)
                solve_beams_lanes<S::NCAP, false>(Rs, LD, 1, dinv, n, args.nbeams, args.V, Wk, t, S::NT);
            else if (t >= L0)
                solve_beams_lanes<S::NCAP>(Rs, LD, 1, dinv, n, args.nbeams, args.V, Wk, t - L0, S::NT - L0);
        } else if constexpr ((FLOW & 1) != 0) {
            /* blocked substitutions in the reflectors' buffer, free now (docs/kernels/journal.md "Blocked
             * substitutions") */
            static_assert(BlockedSolve<BLK_BS, BLK_NBC>::scratch_f2(S::NCAP) <= S::V_F2,
                          "blocked solve: scratch > v buffer");
            if constexpr (SOLVER) /* the first chunk's y is done: blocked only (fused_subst ignored) */
                solve_beams_blocked<BLK_BS, BLK_NBC, S::NT + 32, S::NCAP, true>(Rs, LD, dinv, n, args.nbeams,
                                                                           args.V, Wk, t, vbuf, yin);
            else if (!args.fused_subst)
                solve_beams_blocked<BLK_BS, BLK_NBC, S::NT, S::NCAP>(Rs, LD, dinv, n, args.nbeams, args.V,
                                                                    Wk, t, vbuf);
            else
                solve_beams_warp<SS::RR, SS::NB>(Rs, LD, 1, dinv, n, args.nbeams, args.V, Wk, t / 32,
                                                 S::NT / 32);
        } else {
            solve_beams_warp<SS::RR, SS::NB>(Rs, LD, 1, dinv, n, args.nbeams, args.V, Wk, t / 32,
                                             S::NT / 32);
        }
        if (timer) args.phase[2] = globaltimer();
    }
}

template <int TR, int TC, int RPT, int CPT, int MATS, bool WEIGHTS, bool GATHER, int FLOW>
constexpr int qr_reg_smem()
{
    using S = RegShape<TR, TC, RPT, CPT, MATS, FLOW>;
    return MATS * (S::QR_F2 + (WEIGHTS ? S::W_F2 : 0) + S::V_F2 + S::CL_F2) * (int)sizeof(float2) +
           (GATHER && !FLOW ? MATS * S::MCAP * S::NCAP * (int)sizeof(float2) : 0); /* gather stage */
}

/* The instantiation with its dynamic shared memory allowed (above 48 KB an opt-in). */
template <int TR, int TC, int RPT, int CPT, int MATS, bool VREG, bool WEIGHTS, bool GATHER, int MINB,
          int FLOW>
cudaError_t qr_reg_prepare(void (**kern)(const QrArgs), int *smem)
{
    *smem = qr_reg_smem<TR, TC, RPT, CPT, MATS, WEIGHTS, GATHER, FLOW>();
    *kern = qr_reg_kernel<TR, TC, RPT, CPT, MATS, VREG, WEIGHTS, GATHER, MINB, FLOW>;
    if (*smem > 48 * 1024)
        return cudaFuncSetAttribute(*kern, cudaFuncAttributeMaxDynamicSharedMemorySize, *smem);
    return cudaSuccess;
}

/* The CTAs of one matrix's cluster (FLOW & 32): its rows over tiles of MCAP; 0 when m is
 * more than PMAX tiles. */
template <int MCAP, int PMAX>
constexpr int cluster_ctas(int m)
{
    return m <= MCAP * PMAX ? (m + MCAP - 1) / MCAP : 0;
}

/* The launch configuration of a cluster variant: `blocks` CTAs in clusters of P. */
inline cudaLaunchConfig_t cluster_config(int blocks, int threads, int smem, int P,
                                         cudaLaunchAttribute *attr, cudaStream_t stream)
{
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3((unsigned)blocks);
    cfg.blockDim = dim3((unsigned)threads);
    cfg.dynamicSmemBytes = (size_t)smem;
    cfg.stream = stream;
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = (unsigned)P;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}

/* Clusters of more than 8 CTAs (H100: up to 16) are a non-portable size: opt in. */
template <class K>
cudaError_t cluster_prepare(K kern, int P)
{
    return P > 8 ? cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1)
                 : cudaSuccess;
}

/* rtk_qr_resources_get for one instantiation (m: the cluster variants' rows). */
template <int TR, int TC, int RPT, int CPT, int MATS, bool VREG, bool WEIGHTS, bool GATHER = false,
          int MINB = 1, int FLOW = 0>
cudaError_t qr_reg_resources(rtk_qr_resources *r, int m = 0)
{
    void (*kern)(const QrArgs) = nullptr;
    int smem = 0;
    cudaError_t e =
        qr_reg_prepare<TR, TC, RPT, CPT, MATS, VREG, WEIGHTS, GATHER, MINB, FLOW>(&kern, &smem);
    cudaFuncAttributes fa{};
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&fa, kern);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &r->blocks_per_sm, kern, qr_reg_threads<TR, TC, RPT, CPT, MATS, WEIGHTS, FLOW>(), smem);
    r->threads = qr_reg_threads<TR, TC, RPT, CPT, MATS, WEIGHTS, FLOW>();
    r->registers = fa.numRegs;
    r->local_bytes = (int)fa.localSizeBytes;
    r->smem_bytes = smem;
    r->cluster_ctas = 0;
    r->clusters = 0;
    using S = RegShape<TR, TC, RPT, CPT, MATS, FLOW>;
    if constexpr (S::CL) { /* how many clusters of this m's size the device holds at once */
        const int P = cluster_ctas<S::MCAP, S::PMAX>(m);
        r->cluster_ctas = P;
        if (e == cudaSuccess && P > 0) e = cluster_prepare(kern, P);
        if (e == cudaSuccess && P > 0) {
            cudaLaunchAttribute attr;
            cudaLaunchConfig_t cfg = cluster_config(P, S::THREADS, smem, P, &attr, 0);
            e = cudaOccupancyMaxActiveClusters(&r->clusters, kern, &cfg);
        }
    }
    return e;
}

/* Launch helper for one instantiation (GATHER: args.gX is set). */
template <int TR, int TC, int RPT, int CPT, int MATS, bool VREG, bool WEIGHTS, bool GATHER = false,
          int MINB = 1, int FLOW = 0>
cudaError_t qr_reg_launch(const QrArgs &args, cudaStream_t stream)
{
    using S = RegShape<TR, TC, RPT, CPT, MATS, FLOW>;
    void (*kern)(const QrArgs) = nullptr;
    int smem = 0;
    cudaError_t e =
        qr_reg_prepare<TR, TC, RPT, CPT, MATS, VREG, WEIGHTS, GATHER, MINB, FLOW>(&kern, &smem);
    if (e != cudaSuccess) return e;
    if constexpr (S::CL) {
        const int P = cluster_ctas<S::MCAP, S::PMAX>(args.m);
        if (P < 1 || args.n > S::NCAP) return cudaErrorInvalidValue;
        e = cluster_prepare(kern, P);
        if (e != cudaSuccess) return e;
        cudaLaunchAttribute attr;
        cudaLaunchConfig_t cfg = cluster_config(args.batch * P, S::THREADS, smem, P, &attr, stream);
        return cudaLaunchKernelEx(&cfg, kern, args);
    }
    const int blocks = (args.batch + MATS - 1) / MATS;
    kern<<<blocks, qr_reg_threads<TR, TC, RPT, CPT, MATS, WEIGHTS, FLOW>(), smem, stream>>>(args);
    return cudaGetLastError();
}

} // namespace rtk

#endif
