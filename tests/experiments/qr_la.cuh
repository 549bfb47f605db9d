/* qr_la.cuh: issue 34 item 3, the QR's round 3 — a blocked complex Householder QR whose
 * panel is a dataflow chain in FP32 registers and whose trailing update runs on the tensor
 * cores behind it (lookahead). Included by qr_tc.cu, which measures it against the
 * dispatched FP32 kernel and the tensor-core kernel without lookahead (docs/kernels/journal.md
 * "Round 3").
 *
 * One block a matrix, the matrix in shared memory as two float planes (real, imaginary;
 * column-major, leading dimension LD = MP + pad with LD = 4 mod 32, so that the MMA
 * fragment loads of V^T and of C meet no bank conflict), panels of 16 columns. The block's
 * warps have two roles:
 *
 *   PW panel warps hold a window of two panels in registers: the current panel p, which
 *      they factor, and the next panel p + 1, to which they apply each of panel p's
 *      reflectors in FP32 as soon as it exists. Column q of a panel belongs to panel warp
 *      q mod 8 (slot q / 8; slots 2 and 3 the next panel's), one lane a row in each group
 *      of 32 rows. Each reflector has a one-shot mbarrier its owner's 32 lanes arrive on
 *      after publishing it (v in the matrix's own column with explicit zeros and one,
 *      R's diagonal block aside in Rd): the owner of column j + 1 waits for reflector j
 *      alone, applies it, makes reflector j + 1 and publishes it before it applies j to its
 *      other columns — the FP32 dataflow kernels' chain (qr_reg.cuh). The next panel's
 *      columns are loaded as soon as the update warps have brought them up to date with
 *      the panels before p (mbarrier rdy[p + 1], tested without blocking at each step),
 *      then catch up with panel p's reflectors published so far.
 *   UW update warps apply panel p's block reflector, I - V T V^H, to the columns of
 *      panels p + 2 and beyond as soon as panel p's last reflector is out, while the
 *      panel warps factor panel p + 1:
 *        gemm1  W = V^H [V | C] (tile 0: the Gram matrix), the rows cut in two halves,
 *               each (16-column tile, half) a warp's unit, partial sums in two buffers;
 *        T^H W  by the UT transform (T^-1 = diag(1/tau) + striu(V^H V)), one thread a
 *               column, the two partials added first;
 *        gemm2  C -= V (T^H W), (16-row, 16-column) tiles;
 *      in two passes: the Gram matrix and panel p + 2's columns first, after which each
 *      update thread arrives on rdy[p + 2], then the other columns — of which panel p + 3's
 *      gemm2 at once and the rest's after panel p + 1's first pass (a depth-2 lookahead for
 *      the update warps: the first pass of each panel waits only for the panel).
 *      They synchronize among themselves with a named barrier, never with the panel warps.
 *
 * Every real product on the tensor cores is 3xTF32 (mma.sync m16n8k8: small*big + big*small
 * + big*big, rtk_mma.cuh), each k step's MMAs from zero and added to the accumulator by a
 * rounded FP32 add (the apply kernel's accuracy fix: chained on the running sum, the tensor
 * cores' truncated sums cost 13-17 dB there). The panel is FP32 throughout. */
#ifndef QR_LA_CUH
#define QR_LA_CUH

#include "rtk_device.cuh"
#include "rtk_mma.cuh"

namespace la {

/* LD = MP + pad with LD = 4 (mod 32): the fragment loads (8 columns x 4 rows of a warp) hit 32 banks */
__host__ __device__ constexpr int ld_for(int mp) { return mp + (((4 - mp) % 32) + 32) % 32; }

template <int MP, int NP, int PW, int UW> struct LaShape {
    static_assert(MP % 16 == 0 && NP % 16 == 0 && MP >= NP, "shape: multiples of 16, MP >= NP");
    static_assert(PW == 8, "panel warps: one per pair of panel columns (q, q + 8)");
    static_assert(UW >= 1, "update warps");
    static constexpr int LD = ld_for(MP), NPAN = NP / 16, RL = (MP + 31) / 32, NT = (PW + UW) * 32;
    static constexpr int YLD = 20; /* W's and Y's columns (16 values, padded: conflict-free B loads) */
    /* offsets in floats */
    static constexpr int AR = 0, AI = NP * LD, RD = 2 * NP * LD, /* Rd: [NP][16] float2 */
        WP = RD + 32 * NP,                                      /* [2 halves][2 planes][NP][YLD] */
        G = WP + 4 * NP * YLD,                                  /* [2 planes][16][16]: Gram, summed */
        TAU = G + 512,                                          /* [NP] float2 */
        BAR = TAU + 2 * NP,                                     /* [NP + NPAN] mbarriers */
        TOTAL = BAR + 2 * (NP + NPAN);
    static constexpr size_t bytes = (size_t)TOTAL * sizeof(float);
};

__device__ __forceinline__ bool mbar_test0(unsigned long long *b)
{
    unsigned done;
    asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], 0; "
                 "selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(rtk::smem_addr(b))
                 : "memory");
    return done != 0;
}

/* the update warps' wait for a panel: polled with a 400 ns sleep between tests, so that
 * the waiting warps leave the issue slots to the panel warps (100 ns: the polls were 11 % of
 * the kernel's instructions at 192x96) */
__device__ __forceinline__ void mbar_wait_sleep(unsigned long long *b)
{
    while (!mbar_test0(b)) __nanosleep(400);
}

template <int UW> __device__ __forceinline__ void update_sync()
{
    asm volatile("bar.sync 1, %0;" ::"n"(UW * 32) : "memory");
}

/* ---- panel warps ------------------------------------------------------------------- */

template <int MP, int LD, int RL, int S>
__device__ __forceinline__ void load_slot(float (&xr)[4][RL], float (&xi)[4][RL], const float *Ar,
                                          const float *Ai, int col, int n, int lane)
{
#pragma unroll
    for (int i = 0; i < RL; i++) {
        const int r = lane + 32 * i;
        const bool act = col < n && r < MP;
        xr[S][i] = act ? Ar[col * LD + r] : 0.f;
        xi[S][i] = act ? Ai[col * LD + r] : 0.f;
    }
}

/* v_j's rows (zero above j) and tau_j */
template <int MP, int LD, int RL>
__device__ __forceinline__ void load_v(float (&vr)[RL], float (&vi)[RL], const float *Ar, const float *Ai, int j,
                                       int lane)
{
#pragma unroll
    for (int i = 0; i < RL; i++) {
        const int r = lane + 32 * i;
        const bool act = r >= j && r < MP;
        vr[i] = act ? Ar[j * LD + r] : 0.f;
        vi[i] = act ? Ai[j * LD + r] : 0.f;
    }
}

/* Apply H_j = I - tau v v^H (x := H^H x) to the slots whose act flag is set: every slot's
 * dot and butterfly, branch-free, the update scaled by 0 where a slot is not active (the
 * flags are warp-uniform, but a branch a slot cost a convergence barrier (BSSY/BSYNC) a
 * shuffle: half of the panel's warp samples in the first build) */
template <int RL, int S0 = 0, int S1 = 4>
__device__ __forceinline__ void apply_slots(float (&xr)[4][RL], float (&xi)[4][RL], const float (&vr)[RL],
                                            const float (&vi)[RL], float2 tau, const bool (&act)[4])
{
    float wr[4], wi[4];
#pragma unroll
    for (int s = S0; s < S1; s++) {
        float r0 = 0.f, r1 = 0.f, i0 = 0.f, i1 = 0.f;
#pragma unroll
        for (int i = 0; i < RL; i++) { /* conj(v) x */
            if (i & 1) {
                r1 = fmaf(vr[i], xr[s][i], fmaf(vi[i], xi[s][i], r1));
                i1 = fmaf(vr[i], xi[s][i], fmaf(-vi[i], xr[s][i], i1));
            } else {
                r0 = fmaf(vr[i], xr[s][i], fmaf(vi[i], xi[s][i], r0));
                i0 = fmaf(vr[i], xi[s][i], fmaf(-vi[i], xr[s][i], i0));
            }
        }
        wr[s] = r0 + r1;
        wi[s] = i0 + i1;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
#pragma unroll
        for (int s = S0; s < S1; s++) {
            wr[s] += __shfl_xor_sync(0xffffffffu, wr[s], o);
            wi[s] += __shfl_xor_sync(0xffffffffu, wi[s], o);
        }
#pragma unroll
    for (int s = S0; s < S1; s++) {
        const float f = act[s] ? 1.f : 0.f;
        const float sr = f * (tau.x * wr[s] + tau.y * wi[s]), si = f * (tau.x * wi[s] - tau.y * wr[s]); /* conj(tau) w */
#pragma unroll
        for (int i = 0; i < RL; i++) {
            xr[s][i] -= vr[i] * sr - vi[i] * si;
            xi[s][i] -= vr[i] * si + vi[i] * sr;
        }
    }
}
/* the slots from lo (0: both of the current panel's, 1: the second, 2: none) and the next
 * panel's when nx: the variant with no dead slots (a uniform branch a step, not a slot) */
template <int RL>
__device__ __forceinline__ void apply_live(float (&xr)[4][RL], float (&xi)[4][RL], const float (&vr)[RL],
                                           const float (&vi)[RL], float2 tau, const bool (&act)[4], int lo, bool nx)
{
    if (nx) {
        if (lo == 0)
            apply_slots<RL, 0, 4>(xr, xi, vr, vi, tau, act);
        else if (lo == 1)
            apply_slots<RL, 1, 4>(xr, xi, vr, vi, tau, act);
        else
            apply_slots<RL, 2, 4>(xr, xi, vr, vi, tau, act);
    } else {
        if (lo == 0)
            apply_slots<RL, 0, 2>(xr, xi, vr, vi, tau, act);
        else if (lo == 1)
            apply_slots<RL, 1, 2>(xr, xi, vr, vi, tau, act);
    }
}
/* the same for slot S alone (the owner's column: the critical path) */
template <int RL, int S>
__device__ __forceinline__ void apply_one(float (&xr)[4][RL], float (&xi)[4][RL], const float (&vr)[RL],
                                          const float (&vi)[RL], float2 tau)
{
    float r[4] = {0.f, 0.f, 0.f, 0.f}, im[4] = {0.f, 0.f, 0.f, 0.f}; /* four chains */
#pragma unroll
    for (int i = 0; i < RL; i++) {
        r[i & 3] = fmaf(vr[i], xr[S][i], fmaf(vi[i], xi[S][i], r[i & 3]));
        im[i & 3] = fmaf(vr[i], xi[S][i], fmaf(-vi[i], xr[S][i], im[i & 3]));
    }
    float wr = (r[0] + r[1]) + (r[2] + r[3]), wi = (im[0] + im[1]) + (im[2] + im[3]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        wr += __shfl_xor_sync(0xffffffffu, wr, o);
        wi += __shfl_xor_sync(0xffffffffu, wi, o);
    }
    const float sr = tau.x * wr + tau.y * wi, si = tau.x * wi - tau.y * wr;
#pragma unroll
    for (int i = 0; i < RL; i++) {
        xr[S][i] -= vr[i] * sr - vi[i] * si;
        xi[S][i] -= vr[i] * si + vi[i] * sr;
    }
}

/* Make reflector j (panel p's column, panel start j0) from slot S, which has every earlier
 * reflector applied, and publish it: rows < j0 back to the matrix (R's rows of earlier
 * panels, changed by panel p - 1's reflectors), rows j0 .. j of R to Rd (beta at j) with
 * explicit zeros and a one in the matrix, v below; tau_j. Selects and predicated stores,
 * no branches. */
template <int MP, int LD, int RL, int S>
__device__ __forceinline__ void make(float (&xr)[4][RL], float (&xi)[4][RL], int j, int j0, int lane, float *Ar,
                                     float *Ai, float2 *Rd, float2 *tau)
{
    float sg[2] = {0.f, 0.f}, ar = 0.f, ai = 0.f;
#pragma unroll
    for (int i = 0; i < RL; i++) {
        const int r = lane + 32 * i;
        const float x = r > j ? xr[S][i] : 0.f, y = r > j ? xi[S][i] : 0.f; /* rows >= MP hold zeros */
        sg[i & 1] = fmaf(x, x, fmaf(y, y, sg[i & 1]));
        ar = r == j ? xr[S][i] : ar;
        ai = r == j ? xi[S][i] : ai;
    }
    const float sig = rtk::group_sum<32>(sg[0] + sg[1], 0xffffffffu);
    ar = __shfl_sync(0xffffffffu, ar, j & 31);
    ai = __shfl_sync(0xffffffffu, ai, j & 31);
    float2 beta, t, scale;
    rtk::clarfg(ar, ai, sig, &beta, &t, &scale);
#pragma unroll
    for (int i = 0; i < RL; i++) {
        const int r = lane + 32 * i;
        const float x = xr[S][i], y = xi[S][i];
        const float vr = x * scale.x - y * scale.y, vi = x * scale.y + y * scale.x;
        const bool below = r > j, above = r < j0;
        const float ox = below ? vr : above ? x : (r == j ? 1.f : 0.f), oy = below ? vi : above ? y : 0.f;
        if (r < MP) {
            Ar[j * LD + r] = ox;
            Ai[j * LD + r] = oy;
        }
        if (r >= j0 && r <= j) Rd[j * 16 + r - j0] = r == j ? beta : make_float2(x, y);
    }
    if (lane == 0) tau[j] = t;
}

/* the next panel's columns into slots 2 and 3, then panel j0's reflectors j0 .. j0+c-1 applied */
template <int MP, int LD, int RL>
__device__ __forceinline__ void load_next(float (&xr)[4][RL], float (&xi)[4][RL], const float *Ar, const float *Ai,
                                          const float2 *tau, int j0, int c, int n, int w, int lane)
{
    const int c0 = j0 + 16 + w;
    load_slot<MP, LD, RL, 2>(xr, xi, Ar, Ai, c0, n, lane);
    load_slot<MP, LD, RL, 3>(xr, xi, Ar, Ai, c0 + 8, n, lane);
    const bool act[4] = {false, false, c0 < n, c0 + 8 < n};
    for (int cc = 0; cc < c; cc++) {
        float vr[RL], vi[RL];
        load_v<MP, LD, RL>(vr, vi, Ar, Ai, j0 + cc, lane);
        apply_slots<RL, 2, 4>(xr, xi, vr, vi, tau[j0 + cc], act);
    }
}

/* Block 0's timeline (qr_tc prints it), SM clock cycles from the start of the factorization:
 * ST_PUB + j reflector j published; ST_RDY + q rdy[q] arrived (update warps); ST_LOAD + q panel q
 * in the panel warps' registers (warp 0); ST_END + p warp 0 done with panel p's steps */
constexpr int ST_PUB = 1, ST_RDY = 129, ST_LOAD = 161, ST_END = 193, ST_N = 225;
__device__ __forceinline__ void stamp(long long *st, int k)
{
    if (st) st[k] = clock64() - st[0];
}

template <int MP, int LD, int RL>
__device__ void panel_warp(float *Ar, float *Ai, float2 *Rd, float2 *tau, unsigned long long *bar,
                           unsigned long long *rdy, int n, int w, int lane, long long *st)
{
    const int npan = (n + 15) / 16;
    float xr[4][RL], xi[4][RL];
    load_slot<MP, LD, RL, 0>(xr, xi, Ar, Ai, w, n, lane);
    load_slot<MP, LD, RL, 1>(xr, xi, Ar, Ai, w + 8, n, lane);
    load_slot<MP, LD, RL, 2>(xr, xi, Ar, Ai, 16 + w, n, lane);
    load_slot<MP, LD, RL, 3>(xr, xi, Ar, Ai, 24 + w, n, lane);
    bool nxt = true; /* panel 1's columns need no update warp: nothing before panel 0 */
    for (int p = 0; p < npan; p++) {
        const int j0 = 16 * p, kb = min(16, n - j0);
        if (w == 0) {
            make<MP, LD, RL, 0>(xr, xi, j0, j0, lane, Ar, Ai, Rd, tau);
            rtk::mbar_arrive(bar + j0);
            if (lane == 0) stamp(st, ST_PUB + j0);
        }
        for (int c = 0; c < kb; c++) {
            const int j = j0 + c;
            if (!nxt && p + 1 < npan) { /* the next panel, once the update warps are done with it */
                const bool ready = __shfl_sync(0xffffffffu, (int)mbar_test0(rdy + p + 1), 0) != 0;
                if (ready) {
                    rtk::mbar_wait0(rdy + p + 1); /* each lane's acquire */
                    load_next<MP, LD, RL>(xr, xi, Ar, Ai, tau, j0, c, n, w, lane);
                    nxt = true;
                    if (w == 0 && lane == 0) stamp(st, ST_LOAD + p + 1);
                }
            }
            rtk::mbar_wait0(bar + j);
            float vr[RL], vi[RL];
            load_v<MP, LD, RL>(vr, vi, Ar, Ai, j, lane);
            const float2 t = tau[j];
            const int q1 = c + 1;
            const bool own = q1 < kb && (q1 & 7) == w;
            if (own) { /* the critical path: column j + 1 and its reflector */
                if (q1 < 8) {
                    apply_one<RL, 0>(xr, xi, vr, vi, t);
                    make<MP, LD, RL, 0>(xr, xi, j + 1, j0, lane, Ar, Ai, Rd, tau);
                } else {
                    apply_one<RL, 1>(xr, xi, vr, vi, t);
                    make<MP, LD, RL, 1>(xr, xi, j + 1, j0, lane, Ar, Ai, Rd, tau);
                }
                rtk::mbar_arrive(bar + j + 1);
                if (lane == 0) stamp(st, ST_PUB + j + 1);
            }
            const bool nx2 = nxt && p + 1 < npan && j0 + 16 + w < n, nx3 = nxt && p + 1 < npan && j0 + 24 + w < n;
            const bool act[4] = {w > c && w < kb && !(own && q1 == w), w + 8 > c && w + 8 < kb && !(own && q1 == w + 8),
                                 nx2, nx3};
            apply_live<RL>(xr, xi, vr, vi, t, act, c >= w + 8 ? 2 : c >= w ? 1 : 0, nx2 || nx3);
        }
        if (w == 0 && lane == 0) stamp(st, ST_END + p);
        if (p + 1 < npan) {
            if (!nxt) {
                rtk::mbar_wait0(rdy + p + 1);
                load_next<MP, LD, RL>(xr, xi, Ar, Ai, tau, j0, kb, n, w, lane);
                if (w == 0 && lane == 0) stamp(st, ST_LOAD + p + 1);
            }
#pragma unroll
            for (int i = 0; i < RL; i++) {
                xr[0][i] = xr[2][i];
                xi[0][i] = xi[2][i];
                xr[1][i] = xr[3][i];
                xi[1][i] = xi[3][i];
            }
            nxt = false;
        }
    }
}

/* ---- update warps ------------------------------------------------------------------ */

__device__ __forceinline__ void split4(const float (&x)[4], unsigned (&b)[4], unsigned (&s)[4])
{
#pragma unroll
    for (int e = 0; e < 4; e++) rtk::tf32_split(x[e], b[e], s[e]);
}
__device__ __forceinline__ void split2(float x0, float x1, unsigned (&b)[2], unsigned (&s)[2])
{
    rtk::tf32_split(x0, b[0], s[0]);
    rtk::tf32_split(x1, b[1], s[1]);
}
template <int N> __device__ __forceinline__ void neg(const unsigned (&x)[N], unsigned (&y)[N])
{
#pragma unroll
    for (int e = 0; e < N; e++) y[e] = x[e] ^ 0x80000000u;
}
__device__ __forceinline__ void add4(float (&acc)[4], const float (&t)[4])
{
#pragma unroll
    for (int e = 0; e < 4; e++) acc[e] = __fadd_rn(acc[e], t[e]);
}

/* gemm1, one unit: W(:, col0 .. col0+15) = V^H C over the k steps k0 .. k1-1 (8 rows each
 * from row j0), into the partial buffer Wh ([2 planes][NP][YLD]) */
template <int LD, int NP, int YLD>
__device__ __forceinline__ void gemm1_unit(const float *Ar, const float *Ai, float *Wh, int j0, int col0, int k0,
                                           int k1, int lane)
{
    const int g = lane >> 2, t = lane & 3;
    float accR[2][4] = {}, accI[2][4] = {};
    for (int ks = k0; ks < k1; ks++) {
        const int r0 = j0 + 8 * ks;
        /* A = V^T (m = panel column, k = row): a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4) */
        const int a00 = (j0 + g) * LD + r0 + t, a10 = a00 + 8 * LD;
        const float var[4] = {Ar[a00], Ar[a10], Ar[a00 + 4], Ar[a10 + 4]};
        const float vai[4] = {Ai[a00], Ai[a10], Ai[a00 + 4], Ai[a10 + 4]};
        unsigned vrb[4], vrs[4], vib[4], vis[4], nib[4], nis[4];
        split4(var, vrb, vrs);
        split4(vai, vib, vis);
        neg<4>(vib, nib);
        neg<4>(vis, nis);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            /* B = C (k = row, n = column): b0 (t, g), b1 (t + 4, g) */
            const int b0 = (col0 + 8 * h + g) * LD + r0 + t;
            unsigned crb[2], crs[2], cib[2], cis[2];
            split2(Ar[b0], Ar[b0 + 4], crb, crs);
            split2(Ai[b0], Ai[b0 + 4], cib, cis);
            float tr[4] = {0.f, 0.f, 0.f, 0.f}, ti[4] = {0.f, 0.f, 0.f, 0.f};
            rtk::mma3(tr, vrb, vrs, crb, crs); /* Re: Vr.Cr + Vi.Ci */
            rtk::mma3(ti, vrb, vrs, cib, cis); /* Im: Vr.Ci - Vi.Cr */
            rtk::mma3(tr, vib, vis, cib, cis);
            rtk::mma3(ti, nib, nis, crb, crs);
            add4(accR[h], tr);
            add4(accI[h], ti);
        }
    }
    /* c0 (g, 2t), c1 (g, 2t + 1), c2 (g + 8, 2t), c3 (g + 8, 2t + 1): W(i, col) at [col][i] */
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int col = col0 + 8 * h + 2 * t;
        float *wr = Wh + col * YLD, *wi = Wh + NP * YLD + col * YLD;
        wr[g] = accR[h][0];
        wr[YLD + g] = accR[h][1];
        wr[g + 8] = accR[h][2];
        wr[YLD + g + 8] = accR[h][3];
        wi[g] = accI[h][0];
        wi[YLD + g] = accI[h][1];
        wi[g + 8] = accI[h][2];
        wi[YLD + g + 8] = accI[h][3];
    }
}

/* gemm2, one unit: C(r0 .. r0+15, col0 .. col0+15) -= V Y (Y = T^H W at [col][i] in Y) */
template <int LD, int NP, int YLD>
__device__ __forceinline__ void gemm2_unit(float *Ar, float *Ai, const float *Y, int j0, int r0, int col0, int lane)
{
    const int g = lane >> 2, t = lane & 3;
    float cr[2][4], ci[2][4];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int c00 = (col0 + 8 * h + 2 * t) * LD + r0 + g;
        cr[h][0] = Ar[c00];
        cr[h][1] = Ar[c00 + LD];
        cr[h][2] = Ar[c00 + 8];
        cr[h][3] = Ar[c00 + LD + 8];
        ci[h][0] = Ai[c00];
        ci[h][1] = Ai[c00 + LD];
        ci[h][2] = Ai[c00 + 8];
        ci[h][3] = Ai[c00 + LD + 8];
    }
#pragma unroll
    for (int kk = 0; kk < 16; kk += 8) {
        /* A = V (m = row, k = panel column): a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4) */
        const int a00 = (j0 + kk + t) * LD + r0 + g, a01 = a00 + 4 * LD;
        const float var[4] = {Ar[a00], Ar[a00 + 8], Ar[a01], Ar[a01 + 8]};
        const float vai[4] = {Ai[a00], Ai[a00 + 8], Ai[a01], Ai[a01 + 8]};
        unsigned vrb[4], vrs[4], vib[4], vis[4];
        split4(var, vrb, vrs);
        split4(vai, vib, vis);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            /* B = Y (k = panel column, n = column): b0 (t, g), b1 (t + 4, g) */
            const int b0 = (col0 + 8 * h + g) * YLD + kk + t;
            unsigned yrb[2], yrs[2], yib[2], yis[2], nrb[2], nrs[2], nib[2], nis[2];
            split2(Y[b0], Y[b0 + 4], yrb, yrs);
            split2(Y[NP * YLD + b0], Y[NP * YLD + b0 + 4], yib, yis);
            neg<2>(yrb, nrb);
            neg<2>(yrs, nrs);
            neg<2>(yib, nib);
            neg<2>(yis, nis);
            float tr[4] = {0.f, 0.f, 0.f, 0.f}, ti[4] = {0.f, 0.f, 0.f, 0.f};
            rtk::mma3(tr, vrb, vrs, nrb, nrs); /* Re: -(Vr.Yr - Vi.Yi) */
            rtk::mma3(ti, vrb, vrs, nib, nis); /* Im: -(Vr.Yi + Vi.Yr) */
            rtk::mma3(tr, vib, vis, yib, yis);
            rtk::mma3(ti, vib, vis, nrb, nrs);
            add4(cr[h], tr);
            add4(ci[h], ti);
        }
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int c00 = (col0 + 8 * h + 2 * t) * LD + r0 + g;
        Ar[c00] = cr[h][0];
        Ar[c00 + LD] = cr[h][1];
        Ar[c00 + 8] = cr[h][2];
        Ar[c00 + LD + 8] = cr[h][3];
        Ai[c00] = ci[h][0];
        Ai[c00 + LD] = ci[h][1];
        Ai[c00 + 8] = ci[h][2];
        Ai[c00 + LD + 8] = ci[h][3];
    }
}

/* columns c0 .. c1-1 of the matrix from global memory (zero-padded to MP rows), eight
 * elements a thread in flight, by threads t of nthr */
template <int MP, int LD>
__device__ __forceinline__ void load_cols(const float2 *Ag, int lda, int m, int n, float *Ar, float *Ai, int c0, int c1,
                                          int t, int nthr)
{
    constexpr int LU = 8;
    const int total = (c1 - c0) * MP;
    for (int base = 0; base < total; base += nthr * LU) {
        float2 x[LU];
#pragma unroll
        for (int u = 0; u < LU; u++) {
            const int idx = base + u * nthr + t, c = c0 + idx / MP, r = idx % MP;
            x[u] = idx < total && r < m && c < n ? __ldg(Ag + (size_t)c * lda + r) : make_float2(0.f, 0.f);
        }
#pragma unroll
        for (int u = 0; u < LU; u++) {
            const int idx = base + u * nthr + t, c = c0 + idx / MP, r = idx % MP;
            if (idx < total) {
                Ar[c * LD + r] = x[u].x;
                Ai[c * LD + r] = x[u].y;
            }
        }
    }
}
/* panel p's columns, final once its last reflector is out, to global memory: R above the
 * diagonal (Rd's block on rows j0 .. c), v below */
template <int LD>
__device__ __forceinline__ void store_panel(float2 *Ag, int lda, int m, int n, const float *Ar, const float *Ai,
                                            const float2 *Rd, int j0, int t, int nthr)
{
    const int c1 = min(n, j0 + 16), total = (c1 - j0) * m;
    for (int idx = t; idx < total; idx += nthr) {
        const int c = j0 + idx / m, r = idx % m;
        Ag[(size_t)c * lda + r] = r >= j0 && r <= c ? Rd[c * 16 + r - j0] : make_float2(Ar[c * LD + r], Ai[c * LD + r]);
    }
}

/* Y = T^H W for columns c0 .. c1-1 (one thread a column), over W's first half */
template <int NP, int YLD>
__device__ __forceinline__ void t_solve(float *Wp, const float *G, const float2 *tau, int j0, int c0, int c1, int ut, int nthr)
{
    for (int col = c0 + ut; col < c1; col += nthr) {
        float yr[16], yi[16];
#pragma unroll
        for (int i = 0; i < 16; i++) {
            const int o = col * YLD + i;
            float sr = Wp[o] + Wp[2 * NP * YLD + o], si = Wp[NP * YLD + o] + Wp[3 * NP * YLD + o];
#pragma unroll
            for (int k = 0; k < i; k++) { /* s -= (v_i^H v_k) y_k */
                const float gr = G[i * 16 + k], gi = G[256 + i * 16 + k];
                sr = fmaf(-gr, yr[k], fmaf(gi, yi[k], sr));
                si = fmaf(-gr, yi[k], fmaf(-gi, yr[k], si));
            }
            const float2 tq = tau[j0 + i];
            yr[i] = tq.x * sr + tq.y * si; /* conj(tau_i) s */
            yi[i] = tq.x * si - tq.y * sr;
        }
#pragma unroll
        for (int i = 0; i < 16; i++) {
            Wp[col * YLD + i] = yr[i];
            Wp[NP * YLD + col * YLD + i] = yi[i];
        }
    }
}

/* Panel p's block reflector to the columns of panels p + 2 .. in two passes: first the Gram
 * matrix and panel p + 2's columns (gemm1, T^H W, gemm2), after which each update thread
 * arrives on rdy[p + 2] — the panel warps wait for nothing else — then the other columns. */
template <int MP, int NP, int PW, int UW>
__device__ void update_warps(float *Ar, float *Ai, float *Wp, float *G, const float2 *tau, unsigned long long *bar,
                             unsigned long long *rdy, const float2 *Rd, float2 *Ag, int lda, int m, int n, int uw,
                             int lane, long long *st)
{
    typedef LaShape<MP, NP, PW, UW> S;
    constexpr int LD = S::LD, YLD = S::YLD, UT = UW * 32;
    const int ut = uw * 32 + lane, npan = (n + 15) / 16, npad = 16 * npan;
    /* the columns after the first two panels, while the panel warps factor panel 0 */
    load_cols<MP, LD>(Ag, lda, m, n, Ar, Ai, 32, NP, ut, UT);
    update_sync<UW>();
    for (int p = 0; p < npan; p++) {
        const int j0 = 16 * p, c2 = j0 + 32, c3 = c2 + 16;
        mbar_wait_sleep(bar + min(n, j0 + 16) - 1); /* panel p's reflectors, all out */
        if (p + 2 >= npan) { /* nothing of it left to apply: store it */
            store_panel<LD>(Ag, lda, m, n, Ar, Ai, Rd, j0, ut, UT);
            continue;
        }
        const int ks = (MP - j0) / 8, kh = ks / 2, mt = (MP - j0) / 16;
        for (int u = uw; u < 4; u += UW) /* gemm1, first pass: the Gram matrix and panel p + 2, row halves */
            gemm1_unit<LD, NP, YLD>(Ar, Ai, Wp + (u & 1) * 2 * NP * YLD, j0, u < 2 ? j0 : c2, u & 1 ? kh : 0,
                                    u & 1 ? ks : kh, lane);
        update_sync<UW>();
        for (int e = ut; e < 512; e += UT) { /* G[plane][i][k] = v_i^H v_k, the halves added */
            const int pl = e >> 8, i = (e >> 4) & 15, k = e & 15, o = (pl * NP + j0 + k) * YLD + i;
            G[e] = Wp[o] + Wp[2 * NP * YLD + o];
        }
        update_sync<UW>();
        t_solve<NP, YLD>(Wp, G, tau, j0, c2, c3, ut, UT);
        update_sync<UW>();
        for (int u = uw; u < mt; u += UW) gemm2_unit<LD, NP, YLD>(Ar, Ai, Wp, j0, j0 + 16 * u, c2, lane);
        rtk::mbar_arrive(rdy + p + 2);
        if (ut == 0) stamp(st, ST_RDY + p + 2);
        store_panel<LD>(Ag, lda, m, n, Ar, Ai, Rd, j0, ut, UT); /* final: overlapped with the rest */
        if (p > 0 && c3 < npad) { /* panel p - 1's block reflector to panels p + 3 .. (deferred, below) */
            const int pj = j0 - 16, pmt = mt + 1, nt = (npad - c3) / 16;
            for (int u = uw; u < pmt * nt; u += UW)
                gemm2_unit<LD, NP, YLD>(Ar, Ai, Wp, pj, pj + 16 * (u % pmt), c3 + 16 * (u / pmt), lane);
            update_sync<UW>(); /* its Y (columns >= c3) is read before the next gemm1 writes there */
        }
        if (c3 < npad) { /* second pass: the columns of panels p + 3 .. */
            const int nt = (npad - c3) / 16;
            for (int u = uw; u < 2 * nt; u += UW)
                gemm1_unit<LD, NP, YLD>(Ar, Ai, Wp + (u & 1) * 2 * NP * YLD, j0, c3 + 16 * (u >> 1), u & 1 ? kh : 0,
                                        u & 1 ? ks : kh, lane);
            update_sync<UW>();
            t_solve<NP, YLD>(Wp, G, tau, j0, c3, npad, ut, UT);
            update_sync<UW>();
            /* panel p + 3 now (panel p + 1's first pass needs it); panels p + 4 .. after panel p + 1's
             * first pass, so that its rdy waits for nothing else (Y stays in W's columns >= c3 + 16,
             * which that first pass does not touch) */
            for (int u = uw; u < mt; u += UW) gemm2_unit<LD, NP, YLD>(Ar, Ai, Wp, j0, j0 + 16 * u, c3, lane);
        }
        update_sync<UW>(); /* Y is read by every update warp before W is written again */
    }
}

template <int MP, int NP, int PW, int UW>
__global__ void __launch_bounds__((PW + UW) * 32, 1)
    la_qr_kernel(float2 *A, int lda, long long stride, int m, int n, long long *st)
{
    typedef LaShape<MP, NP, PW, UW> S;
    constexpr int LD = S::LD, NT = S::NT;
    extern __shared__ __align__(128) float sm[];
    float *Ar = sm + S::AR, *Ai = sm + S::AI;
    float2 *Rd = reinterpret_cast<float2 *>(sm + S::RD), *tau = reinterpret_cast<float2 *>(sm + S::TAU);
    unsigned long long *bar = reinterpret_cast<unsigned long long *>(sm + S::BAR), *rdy = bar + NP;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    float2 *Ag = A + (long long)blockIdx.x * stride;
    if (tid == 0) {
        for (int k = 0; k < NP; k++) rtk::mbar_init(bar + k, 32);
        for (int k = 0; k < S::NPAN; k++) rtk::mbar_init(rdy + k, UW * 32);
    }
    /* panels 0 and 1 by every thread; the update warps load the rest behind panel 0 */
    load_cols<MP, LD>(Ag, lda, m, n, Ar, Ai, 0, min(NP, 32), tid, NT);
    if (blockIdx.x != 0) st = nullptr;
    if (st && tid == 0) st[0] = clock64();
    __syncthreads();
    if (warp < PW)
        panel_warp<MP, LD, S::RL>(Ar, Ai, Rd, tau, bar, rdy, n, warp, lane, st);
    else
        update_warps<MP, NP, PW, UW>(Ar, Ai, sm + S::WP, sm + S::G, tau, bar, rdy, Rd, Ag, lda, m, n, warp - PW,
                                     lane, st);
}

template <int MP, int NP, int PW, int UW>
cudaError_t la_launch(float2 *A, int lda, long long stride, int m, int n, int batch, unsigned long long *stamps,
                      cudaStream_t s)
{
    typedef LaShape<MP, NP, PW, UW> S;
    static_assert(S::bytes <= 232448, "shared memory");
    static_assert(NP <= 128 && NP / 16 <= 32, "the timeline's slots");
    if (m > MP || n > NP || m < n) return cudaErrorInvalidValue;
    cudaError_t e = cudaFuncSetAttribute(la_qr_kernel<MP, NP, PW, UW>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)S::bytes);
    if (e != cudaSuccess) return e;
    la_qr_kernel<MP, NP, PW, UW><<<batch, S::NT, S::bytes, s>>>(A, lda, stride, m, n,
                                                                       reinterpret_cast<long long *>(stamps));
    return cudaGetLastError();
}

} // namespace la

#endif
