/* cholqr1.cuh: the pieces of the one-pass cholqr (--qr cholqr; issue 47) that its two kernels
 * share: kernels/cholqr1.cu (cholqr1_kernel: T_k read from memory, R written in place of it)
 * and kernels/cholqr1_gather.cu (cholqr1_gather_kernel: T_k's rows gathered from the Doppler
 * cube, the MVDR weights solved with R on chip). The same code makes the same bits: the
 * Gram (cq1_gram, its input through an element functor), the blocked Cholesky
 * (cq1_chol_blocked) and the guard (cq1_guard). tests/experiments/cq_phases.cu includes
 * cholqr1.cu (and so this header) as one translation unit with cholqr.cu. */
#ifndef RTK_CHOLQR1_CUH
#define RTK_CHOLQR1_CUH

#include "rtk_device.cuh"
#include "cholqr_common.cuh"

namespace rtk {

/* ---- cholqr: one pass, mixed precision (passes == 1) -----------------------------------
 * G = T^H T in FP64 (each product of two floats exact in double; the sums in double), R =
 * chol(G) in FP64, rounded to float (Yamazaki, Tomov and Dongarra, SISC 2015; the CPU's copy
 * is linalg/cholqr_cpu.c, passes 1). One block of CQ_THREADS a matrix:
 * - T is streamed from global memory in chunks of CQ1_KC rows (never held whole: any m fits),
 *   each converted once to double into shared memory (re and im planes, column-major, ld
 *   CQ1_LDT = 4 mod 16 doubles: the fragments' loads free of bank conflicts), the next chunk's
 *   loads in flight in registers while the tensor cores work on this one;
 * - the Gram on the FP64 tensor cores (DMMA m8n8k4), complex as three real products (Gauss:
 *   P1 = Xr^T Xr, P2 = Xi^T Xi, P3 = (Xr + Xi)^T (Xr - Xi), re P1 + P2, im P1 - P2 - P3; the
 *   planes Xr + Xi and Xr - Xi made at the conversion, exact or within u_double of the sum:
 *   G's error stays a small multiple of u_double |X|^2) or four (RTK_CQ1_G3 0): warp items
 *   (an 8 x 8 tile of the upper triangle, a slice of the k steps) with their accumulators in
 *   registers; the slices' sums added in slice order (deterministic), into G packed (the
 *   upper triangle by columns: (i, j), i <= j, at j (j + 1) / 2 + i) in shared memory;
 * - the Cholesky blocked by panels of CQ1_NB = 8 (cq1_chol_blocked, three barriers a panel:
 *   the diagonal block by warp 0's shuffles, the panel's rows by substitution, the trailing
 *   update on the FP64 tensor cores), R in place of G, then cq1_finish; or (RTK_CQ1_CH 0)
 *   right-looking, unblocked, in registers: thread t holds the packed elements
 *   t + CQ_THREADS r; step k subtracts conj(S_ki) S_kj / S_kk (S: the Schur complement, row
 *   k of it in a double-buffered shared row written by its owners in step k - 1): one block
 *   barrier a step. R_ij = S_ij / sqrt(S_ii) at the end;
 * - the guard: a pivot S_kk not > 0 or not finite, min|R_ii| / max|R_ii| < min_ratio, or an
 *   element of R not finite once rounded to float -> fail_list, A_k untouched. */
constexpr int CQ1_KC = 32, CQ1_LDT = CQ1_KC + 4; /* chunk rows; ld of the chunk's columns (4 mod 16) */
constexpr int CQ1_ITEMS = 5;                     /* Gram items a warp at most (8 x 8 tiles x slices) */
constexpr int CQ1_MAX_N = 96;                    /* 12 n-tiles: 78 tiles, 5 a warp (registers) */
constexpr int CQ1_NE = (CQ1_MAX_N * (CQ1_MAX_N + 1) / 2 + CQ_THREADS - 1) / CQ_THREADS; /* elements a thread */
constexpr int CQ1_PF = (CQ1_MAX_N * CQ1_KC + CQ_THREADS - 1) / CQ_THREADS;               /* chunk loads a thread */

constexpr int CQ1_XL = 2;                        /* PAD: at most this many columns past n & ~7 */
constexpr int CQ1_NB = 8;                        /* the blocked Cholesky's panel: one 8-wide tile */

/* RTK_CQ1_G3: the Gram by three real products a complex one (1) or four (0); RTK_CQ1_CH: the
 * Cholesky blocked by panels of CQ1_NB, the trailing update on the tensor cores (1), or
 * unblocked, one barrier a column (0). H200, 240 x 66 x 128, cq_phases (kernel us by events,
 * G / Cholesky k cycles): 00 72.5 (64.9 / 63.3), 10 69.8 (60.1 / 63.4), 01 66.7 (65.7 /
 * 51.3), 11 63.6 (60.2 / 50.1) (2026-12-04, docs/benchmarks.md). RTK_CQ1_ENVSEL (experiments
 * only, never the library's build): RTK_CQ1=<PAD><G3><CH> in the environment picks. */
#ifndef RTK_CQ1_G3
#define RTK_CQ1_G3 1
#endif
#ifndef RTK_CQ1_CH
#define RTK_CQ1_CH 1
#endif
#ifndef RTK_CQ1_PAD /* the last n % 8 <= CQ1_XL columns on the CUDA cores (1: G + sums 73.0 k
                        cycles at 240 x 66 against 61.9 k, 2026-12-04) or as padded tiles (0) */
#define RTK_CQ1_PAD 0
#endif

struct Cq1Layout {
    int ncp;                        /* n rounded up to 8: the chunk's columns (zero past n) */
    size_t xr, xi, xp, xm, gp, row, piv, rin, end; /* byte offsets */
};
__host__ __device__ inline Cq1Layout cq1_layout(int n, int g3)
{
    Cq1Layout L;
    L.ncp = (n + 7) & ~7;
    const size_t plane = (size_t)L.ncp * CQ1_LDT * sizeof(double), np = (size_t)n * (n + 1) / 2;
    L.xr = 0;
    L.xi = plane;
    L.xp = 2 * plane; /* g3: re + im, re - im */
    L.xm = 3 * plane;
    L.gp = (g3 ? 4 : 2) * plane;
    L.row = L.gp + np * sizeof(double2);
    L.piv = L.row + 2 * (size_t)n * sizeof(double2);
    L.rin = L.piv + (size_t)n * sizeof(double);
    L.end = L.rin + (size_t)n * sizeof(double);
    return L;
}

__device__ __forceinline__ void dmma(double (&d)[2], double a, double b)
{
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a), "d"(b));
}
__device__ __forceinline__ double dneg(double x)
{
    return __hiloint2double(__double2hiint(x) ^ (int)0x80000000, __double2loint(x));
}

/* the Gram's slices: the fewest k steps a chunk on the busiest warp (S a power of 2) */
__host__ __device__ inline int cq1_slices(int tiles)
{
    int S = 1, best = 1 << 30;
    for (int s = 1; s <= CQ1_KC / 4; s *= 2) {
        const int per = (tiles * s + CQ_WARPS - 1) / CQ_WARPS;
        if (per > CQ1_ITEMS) break;
        const int cost = per * ((CQ1_KC / 4 + s - 1) / s);
        if (cost < best) best = cost, S = s;
    }
    return S;
}

/* the blocked Cholesky (CH = 1), in place on G packed (upper, (i, j) at j (j + 1) / 2 + i),
 * right-looking by panels of CQ1_NB rows, three barriers a panel instead of one a column:
 * A1. warp 0 factors the diagonal block (lane c column c, rows passed by shuffles; 1 / R_ll
 *     by rsqrt, kept in rin);
 * A2. a thread a column j right of the block: the panel's rows R_Kj by substitution (the
 *     block from shared memory, broadcast), into G and into W (the chunk planes Wr / Wi,
 *     free after the Gram: column j at j CQ1_LDT, zero for n <= j < ncp);
 * B.  the trailing triangle S_JJ -= W^H W on the FP64 tensor cores, a warp an 8 x 8 tile.
 * bad_s: a pivot not > 0 or not finite. */
static __device__ void cq1_chol_blocked(double2 *Gp, int n, int ncp, double *Wr, double *Wi, double *rin, int *bad_s)
{
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, c = lane & 3;
    const int nt = ncp >> 3;
    for (int k0 = 0; k0 < n; k0 += CQ1_NB) {
        const int kb = n - k0 < CQ1_NB ? n - k0 : CQ1_NB, k1 = k0 + kb;
        if (warp == 0) {
            double2 x[CQ1_NB];
            const size_t pc = (size_t)(k0 + lane) * (k0 + lane + 1) / 2 + k0;
#pragma unroll
            for (int l = 0; l < CQ1_NB; l++) x[l] = lane < kb && l <= lane ? Gp[pc + l] : make_double2(0.0, 0.0);
            int bad = 0;
#pragma unroll
            for (int l = 0; l < CQ1_NB; l++) {
                if (l >= kb) break; /* warp-uniform */
                const double piv = __shfl_sync(0xffffffffu, x[l].x, l);
                bad |= !(piv > 0.0) || !isfinite(piv);
                const double inv = rsqrt(piv);
                double2 rl = make_double2(x[l].x * inv, x[l].y * inv);
                if (lane == l) rl = make_double2(piv * inv, 0.0);
                x[l] = rl;
#pragma unroll
                for (int q = l + 1; q < CQ1_NB; q++) {
                    if (q >= kb) break;
                    const double rqx = __shfl_sync(0xffffffffu, rl.x, q), rqy = __shfl_sync(0xffffffffu, rl.y, q);
                    if (lane >= q) { /* S_q,lane -= conj(R_lq) R_l,lane */
                        x[q].x = fma(-rqx, rl.x, fma(-rqy, rl.y, x[q].x));
                        x[q].y = fma(-rqx, rl.y, fma(rqy, rl.x, x[q].y));
                    }
                }
                if (lane == 0) rin[k0 + l] = inv;
            }
            if (lane < kb)
#pragma unroll
                for (int l = 0; l < CQ1_NB; l++)
                    if (l <= lane) Gp[pc + l] = x[l];
            if (lane == 0 && bad) *bad_s = 1;
        }
        __syncthreads();
        if (k1 >= n) break;
        for (int j = k1 + tid; j < ncp; j += CQ_THREADS) { /* A2 */
            double2 w[CQ1_NB];
            const size_t pc = (size_t)j * (j + 1) / 2 + k0;
#pragma unroll
            for (int l = 0; l < CQ1_NB; l++) {
                double2 x = j < n ? Gp[pc + l] : make_double2(0.0, 0.0);
                const double2 *dl = Gp + (size_t)(k0 + l) * (k0 + l + 1) / 2 + k0; /* column k0 + l of the block */
#pragma unroll
                for (int q = 0; q < l; q++) { /* x -= conj(R_q,l) w_q */
                    const double2 d = dl[q];
                    x.x = fma(-d.x, w[q].x, fma(-d.y, w[q].y, x.x));
                    x.y = fma(-d.x, w[q].y, fma(d.y, w[q].x, x.y));
                }
                const double s = rin[k0 + l];
                w[l] = make_double2(x.x * s, x.y * s);
                if (j < n) Gp[pc + l] = w[l];
                Wr[j * CQ1_LDT + l] = w[l].x;
                Wi[j * CQ1_LDT + l] = w[l].y;
            }
        }
        __syncthreads();
        const int b0 = k1 >> 3, tt = nt - b0, ntl = tt * (tt + 1) / 2; /* B */
        for (int item = warp; item < ntl; item += CQ_WARPS) {
            int t = item, bi = 0;
            while (t >= tt - bi) t -= tt - bi, bi++;
            const int i0 = 8 * (b0 + bi), j0 = 8 * (b0 + bi + t);
            double cr[2], ci[2];
#pragma unroll
            for (int q = 0; q < 2; q++) {
                const int i = i0 + g, j = j0 + 2 * c + q;
                const bool ok = i <= j && j < n;
                const double2 v = ok ? Gp[(size_t)j * (j + 1) / 2 + i] : make_double2(0.0, 0.0);
                cr[q] = v.x;
                ci[q] = v.y;
            }
#pragma unroll
            for (int l0 = 0; l0 < CQ1_NB; l0 += 4) { /* re -= wr_i wr_j + wi_i wi_j, im -= wr_i wi_j - wi_i wr_j */
                const double wri = Wr[(i0 + g) * CQ1_LDT + l0 + c], wii = Wi[(i0 + g) * CQ1_LDT + l0 + c];
                const double wrj = Wr[(j0 + g) * CQ1_LDT + l0 + c], wij = Wi[(j0 + g) * CQ1_LDT + l0 + c];
                dmma(cr, dneg(wri), wrj);
                dmma(cr, dneg(wii), wij);
                dmma(ci, dneg(wri), wij);
                dmma(ci, wii, wrj);
            }
#pragma unroll
            for (int q = 0; q < 2; q++) {
                const int i = i0 + g, j = j0 + 2 * c + q;
                if (i <= j && j < n) Gp[(size_t)j * (j + 1) / 2 + i] = make_double2(cr[q], ci[q]);
            }
        }
        __syncthreads();
    }
}

/* the guard (CH = 1; block-uniform): R (packed in G, double) refused when a pivot was not
 * > 0 (bad_s), min|R_ii| / max|R_ii| < min_ratio or an element is not finite once rounded to
 * float: k appended to fail_list, false returned */
static __device__ bool cq1_guard(const double2 *Gp, int n, float min_ratio, int *fail_list, int k, const int *bad_s,
                                 double *ratio_s)
{
    const int tid = threadIdx.x, lane = tid & 31, np = n * (n + 1) / 2;
    if (tid < 32) {
        double lo = INFINITY, hi = 0.0;
        for (int i = lane; i < n; i += 32) {
            const double rr = Gp[(size_t)i * (i + 1) / 2 + i].x;
            lo = fmin(lo, rr);
            hi = fmax(hi, rr);
        }
        for (int o = 16; o; o >>= 1) {
            lo = fmin(lo, __shfl_xor_sync(0xffffffffu, lo, o));
            hi = fmax(hi, __shfl_xor_sync(0xffffffffu, hi, o));
        }
        if (lane == 0) *ratio_s = hi > 0.0 && isfinite(hi) ? lo / hi : 0.0;
    }
    int notfin = 0;
    for (int e = tid; e < np; e += CQ_THREADS) {
        const double2 v = Gp[e];
        notfin |= !isfinite((float)v.x) || !isfinite((float)v.y);
    }
    notfin = __syncthreads_or(notfin);
    const bool ok = !*bad_s && !notfin && *ratio_s >= (double)min_ratio;
    if (!ok && tid == 0) fail_list[1 + atomicAdd(fail_list, 1)] = k;
    return ok;
}

/* packed index e of the upper triangle -> (i, j), i <= j */
__device__ __forceinline__ void cq1_unpack(int e, int &i, int &j)
{
    j = (int)((sqrt(8.0 * e + 1.0) - 1.0) * 0.5);
    if ((j + 1) * (j + 2) / 2 <= e) j++;
    else if (j * (j + 1) / 2 > e) j--;
    i = e - j * (j + 1) / 2;
}

/* R_ij as the float factor holds it (a real diagonal) */
__device__ __forceinline__ float2 cq1_rounded(double2 v, int i, int j)
{
    return make_float2((float)v.x, i == j ? 0.f : (float)v.y);
}

/* the guard and the store (CH = 1): R rounded to float into A_k's upper triangle, or (the
 * guard refused it) k in fail_list, A_k untouched */
static __device__ void cq1_finish(const double2 *Gp, int n, float2 *Ak, int lda, float min_ratio, int *fail_list,
                                  int k, const int *bad_s, double *ratio_s)
{
    if (!cq1_guard(Gp, n, min_ratio, fail_list, k, bad_s, ratio_s)) return;
    const int np = n * (n + 1) / 2;
    for (int e = threadIdx.x; e < np; e += CQ_THREADS) {
        int i, j;
        cq1_unpack(e, i, j);
        Ak[(size_t)j * lda + i] = cq1_rounded(Gp[e], i, j);
    }
}

/* G = T^H T packed into Gp (upper triangle by columns) in FP64, T (m x n) read through
 * elem(col, row) (col < n, row < m) in chunks of CQ1_KC rows into the planes of layout L;
 * every thread of the block calls it. The chunk planes are free when it returns. */
template <int G3, int PAD, class Elem>
__device__ __forceinline__ void cq1_gram(int m, int n, const Elem &elem, unsigned char *sm1, const Cq1Layout &L)
{
    double *Xr = (double *)(sm1 + L.xr), *Xi = (double *)(sm1 + L.xi);
    double *Xp = (double *)(sm1 + L.xp), *Xm = (double *)(sm1 + L.xm);
    double2 *Gp = (double2 *)(sm1 + L.gp);
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, c = lane & 3;

    /* the Gram's items: tile (bi, bj), bi <= bj, of the upper triangle, and a slice of the k steps */
    /* PAD: where n % 8 <= CQ1_XL, the last n % 8 columns' elements (i, j >= nf) on the CUDA
     * cores in FP64 (exact products, the sums in double), not as a row of padded tiles: a
     * thread a row i (all its j) and a part p of the chunk's rows (p + P s; p fastest in the
     * lanes: few bank conflicts), the P parts added in order */
    const int nf = n & ~7, nl = n - nf;
    const bool cc = PAD && nl > 0 && nl <= CQ1_XL;
    const int P = cc ? (CQ_THREADS / n < 8 ? CQ_THREADS / n : 8) : 1;
    const int xid = CQ_THREADS - 1 - tid, xrow = xid / P, xp = xid - xrow * P;
    const bool xon = cc && xrow < n;
    double xs[CQ1_XL][2];
#pragma unroll
    for (int q = 0; q < CQ1_XL; q++) xs[q][0] = xs[q][1] = 0.0;
    const int nt = (cc ? nf : L.ncp) >> 3, tiles = nt * (nt + 1) / 2, S = cq1_slices(tiles);
    int ti0[CQ1_ITEMS], tj0[CQ1_ITEMS], tsl[CQ1_ITEMS];
    double ar[CQ1_ITEMS][2], ai[CQ1_ITEMS][2], a2[CQ1_ITEMS][2];
#pragma unroll
    for (int r = 0; r < CQ1_ITEMS; r++) {
        ar[r][0] = ar[r][1] = ai[r][0] = ai[r][1] = 0.0;
        if (G3) a2[r][0] = a2[r][1] = 0.0;
        const int item = warp + CQ_WARPS * r;
        tsl[r] = -1;
        ti0[r] = tj0[r] = 0;
        if (item >= tiles * S) continue;
        int t = item / S, bi = 0;
        tsl[r] = item - t * S;
        while (t >= nt - bi) t -= nt - bi, bi++;
        ti0[r] = 8 * bi;
        tj0[r] = 8 * (bi + t);
    }
    const int nchunks = (m + CQ1_KC - 1) / CQ1_KC, nld = L.ncp * CQ1_KC;
    float2 v[CQ1_PF];
    auto fetch = [&](int t0) {
#pragma unroll
        for (int u = 0; u < CQ1_PF; u++) {
            const int idx = tid + CQ_THREADS * u, col = idx / CQ1_KC, t = t0 + idx % CQ1_KC;
            v[u] = idx < nld && col < n && t < m ? elem(col, t) : make_float2(0.f, 0.f);
        }
    };
    fetch(0);
    for (int ch = 0; ch < nchunks; ch++) {
#pragma unroll
        for (int u = 0; u < CQ1_PF; u++) { /* exact: a float fits a double */
            const int idx = tid + CQ_THREADS * u, col = idx / CQ1_KC, t = idx % CQ1_KC;
            if (idx < nld) {
                Xr[col * CQ1_LDT + t] = (double)v[u].x;
                Xi[col * CQ1_LDT + t] = (double)v[u].y;
                if (G3) { /* exact, or within u_double of the sum */
                    Xp[col * CQ1_LDT + t] = (double)v[u].x + (double)v[u].y;
                    Xm[col * CQ1_LDT + t] = (double)v[u].x - (double)v[u].y;
                }
            }
        }
        __syncthreads();
        if (ch + 1 < nchunks) fetch((ch + 1) * CQ1_KC);
        const int rows = m - ch * CQ1_KC < CQ1_KC ? m - ch * CQ1_KC : CQ1_KC, ks = (rows + 3) >> 2;
#pragma unroll
        for (int r = 0; r < CQ1_ITEMS; r++) {
            if (tsl[r] < 0) continue; /* warp-uniform */
            const double *pra = Xr + (ti0[r] + g) * CQ1_LDT + c, *pia = Xi + (ti0[r] + g) * CQ1_LDT + c;
            const double *prb = Xr + (tj0[r] + g) * CQ1_LDT + c, *pib = Xi + (tj0[r] + g) * CQ1_LDT + c;
            if (G3) { /* P1 = Xr^T Xr, P2 = Xi^T Xi, P3 = (Xr + Xi)^T (Xr - Xi): re P1 + P2, im P1 - P2 - P3 */
                const double *ppa = Xp + (ti0[r] + g) * CQ1_LDT + c, *pmb = Xm + (tj0[r] + g) * CQ1_LDT + c;
                for (int kk = tsl[r]; kk < ks; kk += S) {
                    const double xar = pra[4 * kk], xai = pia[4 * kk], xbr = prb[4 * kk], xbi = pib[4 * kk];
                    dmma(ar[r], xar, xbr);
                    dmma(a2[r], xai, xbi);
                    dmma(ai[r], ppa[4 * kk], pmb[4 * kk]);
                }
            } else {
                for (int kk = tsl[r]; kk < ks; kk += S) {
                    /* A = X^H (rows i): A[g][c] = conj(X[4kk + c][i0 + g]); B[c][g] = X[4kk + c][j0 + g] */
                    const double xar = pra[4 * kk], xai = pia[4 * kk], xbr = prb[4 * kk], xbi = pib[4 * kk];
                    dmma(ar[r], xar, xbr); /* re: xr_i xr_j + xi_i xi_j */
                    dmma(ar[r], xai, xbi);
                    dmma(ai[r], xar, xbi); /* im: xr_i xi_j - xi_i xr_j */
                    dmma(ai[r], dneg(xai), xbr);
                }
            }
        }
        if (xon) { /* conj(x_i) x_j over the rows p, p + P, ... of the chunk */
            const double *pri = Xr + xrow * CQ1_LDT, *pii = Xi + xrow * CQ1_LDT;
            for (int t = xp; t < rows; t += P) {
                const double ur = pri[t], ui = pii[t];
#pragma unroll
                for (int q = 0; q < CQ1_XL; q++) {
                    if (q >= nl) break;
                    const double vr = Xr[(nf + q) * CQ1_LDT + t], vi = Xi[(nf + q) * CQ1_LDT + t];
                    xs[q][0] = fma(ur, vr, fma(ui, vi, xs[q][0]));
                    xs[q][1] = fma(ur, vi, fma(-ui, vr, xs[q][1]));
                }
            }
        }
        __syncthreads();
    }
    if (xon) /* the chunk planes are free: part p's sums at ((p n + i) CQ1_XL + q) */
#pragma unroll
        for (int q = 0; q < CQ1_XL; q++)
            if (q < nl) ((double2 *)Xr)[(xp * n + xrow) * CQ1_XL + q] = make_double2(xs[q][0], xs[q][1]);
    CQ_STAMP(1);
    for (int s = 0; s < S; s++) { /* the slices' sums in slice order */
#pragma unroll
        for (int r = 0; r < CQ1_ITEMS; r++) {
            if (tsl[r] != s) continue;
#pragma unroll
            for (int q = 0; q < 2; q++) {
                const int i = ti0[r] + g, j = tj0[r] + 2 * c + q;
                if (i <= j && j < n) {
                    double2 *p = Gp + (size_t)j * (j + 1) / 2 + i;
                    const double vr = G3 ? ar[r][q] + a2[r][q] : ar[r][q];
                    const double vi = G3 ? (ar[r][q] - a2[r][q]) - ai[r][q] : ai[r][q];
                    *p = s == 0 ? make_double2(vr, vi) : make_double2(p->x + vr, p->y + vi);
                }
            }
        }
        __syncthreads();
    }
    if (cc) { /* the parts' sums in part order */
        const int i = tid / nl, q = tid - i * nl, j = nf + q;
        if (i < n && i <= j) {
            double2 acc = ((const double2 *)Xr)[i * CQ1_XL + q];
            for (int p = 1; p < P; p++) {
                const double2 u = ((const double2 *)Xr)[(p * n + i) * CQ1_XL + q];
                acc.x += u.x;
                acc.y += u.y;
            }
            Gp[(size_t)j * (j + 1) / 2 + i] = acc;
        }
        __syncthreads();
    }
}

} // namespace rtk

#endif
