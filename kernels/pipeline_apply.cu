/* pipeline_apply.cu: the weight application's kernels of a CPI (rtk_pipeline.h): by rows,
 * register-tiled in FP32, on the tensor cores (3xTF32), and fused with the CFAR detector.
 * CPU reference: stap/engine/engine_cpu.c; tests/unit/test_gpu_engine.c compares the two. */
#include "rtk_cfar_line.cuh"
#include "rtk_device.cuh"
#include "rtk_mma.cuh"
#include "rtk_pipeline.h"
#include "rtk_pipeline_common.cuh"

namespace {

using rtk::c0;
using rtk::cjfma;
using rtk::mma3_add;
using rtk::tf32_split;

/* Weight application. A block takes one Doppler bin d, 32 range cells of one segment s
 * and 16 beams: the 16 x N conjugated weights of (d, s) go to shared memory as [j][beam]
 * (a thread reads its 4 beams' weights of tap j with two 16-byte loads); thread
 * (cell, group) accumulates 4 beams of one cell over the N snapshot entries, read once
 * per warp from the Doppler cube (coalesced along range). */
constexpr int APPLY_CELLS = 32, APPLY_BEAMS = 16, APPLY_BPT = 4;
constexpr int APPLY_THREADS = APPLY_CELLS * APPLY_BEAMS / APPLY_BPT;

__global__ void __launch_bounds__(APPLY_THREADS)
apply_kernel(rtk_gather g, int B, int tiles_per_seg, const float2 *__restrict__ W,
             float2 *__restrict__ Y, rtk_cpi_status *st)
{
    extern __shared__ float4 apply_smem[];
    float2 *ws = reinterpret_cast<float2 *>(apply_smem);
    const int C = g.channels, Q = g.order, D = g.bins, R = g.range, S = g.segments, L = g.seg_len;
    const int N = C * Q;
    const int d = blockIdx.y, s = blockIdx.x / tiles_per_seg, tile = blockIdx.x % tiles_per_seg;
    const int b0 = blockIdx.z * APPLY_BEAMS;
    const size_t wbase = ((size_t)d * S + s) * B;
    for (int i = threadIdx.x; i < APPLY_BEAMS * N; i += blockDim.x) {
        const int bl = i / N, j = i - bl * N, b = b0 + bl;
        float2 w = c0();
        if (b < B) {
            const size_t idx = (wbase + b) * N + j;
            w = W[idx];
            if (!finite2(w) && tile == 0) atomicMin(&st->bad_weight, (unsigned long long)idx);
        }
        ws[j * APPLY_BEAMS + bl] = make_float2(w.x, -w.y);
    }
    __syncthreads();
    const int cell = threadIdx.x % APPLY_CELLS, grp = threadIdx.x / APPLY_CELLS;
    const int rl = tile * APPLY_CELLS + cell;
    if (rl >= L) return;
    const int r = s * L + rl;
    const float2 *X = (const float2 *)g.X;
    float2 acc[APPLY_BPT];
#pragma unroll
    for (int i = 0; i < APPLY_BPT; i++) acc[i] = c0();
    const int h = (Q - 1) / 2;
    for (int q = 0; q < Q; q++) {
        int bin = (d - h + q) % D;
        if (bin < 0) bin += D;
        const float2 *xq = X + (size_t)bin * C * R + r;
        for (int c = 0; c < C; c++) {
            const float2 x = xq[(size_t)c * R];
            const float4 *wp = reinterpret_cast<const float4 *>(ws + (c * Q + q) * APPLY_BEAMS +
                                                                grp * APPLY_BPT);
            const float4 w01 = wp[0], w23 = wp[1];
            const float2 w[4] = {make_float2(w01.x, w01.y), make_float2(w01.z, w01.w),
                                 make_float2(w23.x, w23.y), make_float2(w23.z, w23.w)};
#pragma unroll
            for (int i = 0; i < APPLY_BPT; i++) {
                acc[i].x = fmaf(w[i].x, x.x, fmaf(-w[i].y, x.y, acc[i].x));
                acc[i].y = fmaf(w[i].x, x.y, fmaf(w[i].y, x.x, acc[i].y));
            }
        }
    }
#pragma unroll
    for (int i = 0; i < APPLY_BPT; i++) {
        const int b = b0 + grp * APPLY_BPT + i;
        if (b < B) Y[((size_t)b * D + d) * R + r] = acc[i];
    }
}

/* Weight application as a register-tiled GEMM in FP32 (the default where N > 16 until
 * apply_mma_kernel below; now rtk_apply_fp32_launch, RTSTAP_APPLY_FP32=1; apply_kernel
 * above takes N <= 16, where it measured faster, and every N with RTSTAP_APPLY_ROWS=1).
 * Per (Doppler bin d, segment s) it is Y_ds (B x L) = conj(W_ds) (B x N) * X_ds (N x L),
 * X_ds's row j = c*Q + q being the Doppler cube's row (bin (d - h + q) mod D, channel c)
 * over the segment's cells. A block takes one d, a tile of 32*U cells of one segment and
 * up to 16 beams (a warp per 4 beams). The N rows go through shared memory in chunks of
 * KC <= 16, double-buffered: chunk i+1's rows and weights are copied in by cp.async (a
 * warp per row, coalesced along range; zero-filled past the segment or the beams) while
 * chunk i is multiplied. Each thread accumulates a 4-beam x U-cell tile (cells lane +
 * 32u) in registers: per row, two broadcast 16-byte weight loads and U 8-byte cube loads
 * feed 16U complex multiply-adds. The sums run over j = 0 .. N-1 in order. */
constexpr int APT_BEAMS = 16, APT_KC = 16, APT_MAXN = 512;

__device__ __forceinline__ void cp_async8(void *dst, const void *src, bool fill)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(d), "l"(src),
                 "r"(fill ? 8 : 0) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void cp_async_wait1() { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }

/* the tiled kernels' row offsets, once a block (the divisions by Q and D out of the chunk
 * loop): snapshot row j = c*Q + q of bin d starts at X[(bin*C + c)*R], bin = (d - h + q) mod D;
 * < 2^31: the launchers check D*C*R */
__device__ __forceinline__ void apply_row_offsets(int *rowoff, int N, int C, int Q, int D, int R, int d)
{
    const int h = (Q - 1) / 2;
    for (int j = threadIdx.x; j < N; j += blockDim.x) {
        const int c = j / Q, q = j - c * Q;
        int bin = (d - h + q) % D;
        if (bin < 0) bin += D;
        rowoff[j] = (bin * C + c) * R;
    }
}

template <int U>
__global__ void __launch_bounds__(128, 4)
apply_tiled_kernel(rtk_gather g, int B, int tiles_per_seg, int KC, const float2 *__restrict__ W,
                   float2 *__restrict__ Y, rtk_cpi_status *st)
{
    constexpr int CELLS = 32 * U;
    __shared__ float2 xs[2][APT_KC * CELLS];
    __shared__ float4 ws4[2][APT_KC * APT_BEAMS / 2];
    __shared__ int rowoff[APT_MAXN]; /* snapshot row j's offset in X: (bin*C + c)*R */
    const int C = g.channels, Q = g.order, D = g.bins, R = g.range, S = g.segments, L = g.seg_len;
    const int N = C * Q;
    const int d = blockIdx.y, s = blockIdx.x / tiles_per_seg, tile = blockIdx.x % tiles_per_seg;
    const int b0 = blockIdx.z * APT_BEAMS;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nwarps = blockDim.x >> 5;
    const int rl0 = tile * CELLS, r0 = s * L + rl0;
    const size_t wbase = ((size_t)d * S + s) * B;
    const float2 *X = (const float2 *)g.X;
    apply_row_offsets(rowoff, N, C, Q, D, R, d);
    /* a thread's weights: beam bl = tid / 8 of the group, rows k = tid % 8 and k + 8 of
     * each chunk (KC <= 16); blockDim = 8 x the group's beams (a warp per 4) */
    const int wbl = threadIdx.x >> 3, wk = threadIdx.x & 7;
    const bool win = b0 + wbl < B;
    const float2 *wrow = win ? W + (wbase + b0 + wbl) * N : W;
    __syncthreads();
    /* chunk k0's rows and weights into buffer buf (each thread its own copies) */
    auto issue = [&](int k0, int buf) {
        const int kc = min(KC, N - k0);
        for (int k = warp; k < kc; k += nwarps) {
            const float2 *row = X + rowoff[k0 + k] + r0;
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int cl = lane + 32 * u;
                const bool in = rl0 + cl < L;
                cp_async8(&xs[buf][k * CELLS + cl], in ? row + cl : X, in);
            }
        }
        float2 *ws = reinterpret_cast<float2 *>(ws4[buf]);
#pragma unroll
        for (int m = 0; m < 2; m++) {
            const int k = wk + 8 * m;
            if (k < kc) cp_async8(&ws[k * APT_BEAMS + wbl], win ? wrow + k0 + k : W, win);
        }
        cp_async_commit();
    };
    float2 acc[4][U];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int u = 0; u < U; u++) acc[i][u] = c0();
    issue(0, 0);
    for (int k0 = 0, buf = 0; k0 < N; k0 += KC, buf ^= 1) {
        if (k0 + KC < N) issue(k0 + KC, buf ^ 1);
        else cp_async_commit(); /* an empty group: wait_group 1 below then means chunk k0 */
        cp_async_wait1();
        __syncthreads();
        const int kc = min(KC, N - k0);
        if (tile == 0 && win) { /* the weights' check, once per (d, s): a thread its own copies */
            const float2 *ws = reinterpret_cast<const float2 *>(ws4[buf]);
#pragma unroll
            for (int m = 0; m < 2; m++) {
                const int k = wk + 8 * m;
                if (k < kc && !finite2(ws[k * APT_BEAMS + wbl]))
                    atomicMin(&st->bad_weight, (unsigned long long)((wbase + b0 + wbl) * N + k0 + k));
            }
        }
#pragma unroll 2
        for (int k = 0; k < kc; k++) {
            const float4 w01 = ws4[buf][k * (APT_BEAMS / 2) + 2 * warp];
            const float4 w23 = ws4[buf][k * (APT_BEAMS / 2) + 2 * warp + 1];
            const float2 w[4] = {make_float2(w01.x, w01.y), make_float2(w01.z, w01.w),
                                 make_float2(w23.x, w23.y), make_float2(w23.z, w23.w)};
            float2 x[U];
#pragma unroll
            for (int u = 0; u < U; u++) x[u] = xs[buf][k * CELLS + lane + 32 * u];
#pragma unroll
            for (int i = 0; i < 4; i++) /* acc += conj(w) x */
#pragma unroll
                for (int u = 0; u < U; u++) {
                    acc[i][u].x = fmaf(w[i].x, x[u].x, fmaf(w[i].y, x[u].y, acc[i][u].x));
                    acc[i][u].y = fmaf(w[i].x, x[u].y, fmaf(-w[i].y, x[u].x, acc[i][u].y));
                }
        }
        __syncthreads(); /* buffer buf is refilled by the next step's issue */
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int b = b0 + 4 * warp + i;
        if (b >= B) break;
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int rl = rl0 + lane + 32 * u;
            if (rl < L) Y[((size_t)b * D + d) * R + s * L + rl] = acc[i][u];
        }
    }
}

/* Weight application on the tensor cores (3xTF32: FP32-accurate products). The same
 * per-(bin, segment) GEMM as apply_tiled_kernel, Y_ds = conj(W_ds) X_ds, written as one
 * real GEMM: A (32 x 2N) times Xr (2N x cells), where the complex rows j of X are
 * interleaved as real rows 2j (real parts) and 2j + 1 (imaginary parts), A's rows 0..15 are
 * beam b's real outputs (A[b][2j] = Re w, A[b][2j+1] = Im w) and rows 16..31 its imaginary
 * outputs (A[16+b][2j] = -Im w, A[16+b][2j+1] = Re w). mma.sync m16n8k8 TF32: the two
 * 16-row tiles are the real and imaginary parts of 16 beams, an 8-column tile 8 cells, a
 * k step 4 complex rows. Each product is split a = big + small (big = a rounded to TF32,
 * small = the remainder rounded to TF32) and summed as small*big + big*small + big*big
 * (the small*small term, <= 2^-22 of |a||b|, is dropped), each k step's three MMAs from
 * zero and added to the accumulator by a rounded FP32 add (mma3_add). A block takes one bin, 32*U
 * cells of one segment and 16 beams (4 warps, U 8-cell tiles each); rows and weights come
 * through shared memory in chunks of 16 complex rows, double-buffered by cp.async, rows
 * past N zero-filled up to a multiple of 4. The sum over j is in k-step order, each k
 * step's 8 products summed inside the MMA. */
constexpr int AMMA_KC = 16, AMMA_PAD = 8;

/* The tensor-core apply of one block (NW warps): bin d, segment s, cell tile `tile` (CELLS =
 * 8 U NW cells from rl0), beams b0 .. b0 + 15; acc[2][U][4] the warp's U 8-cell tiles (D
 * fragments: rows gid, gid + 8 = beams, columns 2 tig, 2 tig + 1). xs, ws: shared memory
 * of 2 * AMMA_KC * (CELLS + AMMA_PAD) and 2 * AMMA_KC * (16 + AMMA_PAD) float2; rowoff: N
 * ints. Every thread of the block calls it (its barriers are the block's). */
template <int U, int NW>
__device__ __forceinline__ void apply_mma_core(const rtk_gather &g, int B, int d, int s, int tile, int b0,
                                               const float2 *__restrict__ W, rtk_cpi_status *st,
                                               float2 (*xs)[AMMA_KC * (8 * U * NW + AMMA_PAD)],
                                               float2 (*ws)[AMMA_KC * (APT_BEAMS + AMMA_PAD)], int *rowoff,
                                               float (&acc)[2][U][4])
{
    constexpr int CELLS = 8 * U * NW, XS = CELLS + AMMA_PAD, CPL = CELLS / 32; /* cells a lane of a row */
    constexpr int WSS = APT_BEAMS + AMMA_PAD;
    static_assert(NW * 32 >= 128, "the weights' loads take 128 threads");
    const int C = g.channels, Q = g.order, D = g.bins, R = g.range, S = g.segments, L = g.seg_len;
    const int N = C * Q;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int gid = lane >> 2, tig = lane & 3;
    const int rl0 = tile * CELLS, r0 = s * L + rl0;
    const size_t wbase = ((size_t)d * S + s) * B;
    const float2 *X = (const float2 *)g.X;
    apply_row_offsets(rowoff, N, C, Q, D, R, d);
    /* the weights: 16 beams x 8 rows by the first 128 threads, two chunk rows each */
    const int wbl = (threadIdx.x >> 3) & 15, wk = threadIdx.x & 7;
    const bool wld = threadIdx.x < 128, win = wld && b0 + wbl < B;
    const float2 *wrow = win ? W + (wbase + b0 + wbl) * N : W;
    __syncthreads();
    /* chunk k0 (kc rows, kc4 = kc rounded up to 4: the rest zero-filled) into buffer buf */
    auto issue = [&](int k0, int buf) {
        const int kc = min(AMMA_KC, N - k0), kc4 = (kc + 3) & ~3;
        for (int k = warp; k < kc4; k += NW) {
            const bool kin = k < kc;
            const float2 *row = kin ? X + rowoff[k0 + k] + r0 : X;
#pragma unroll
            for (int u = 0; u < CPL; u++) {
                const int cl = lane + 32 * u;
                const bool in = kin && rl0 + cl < L;
                cp_async8(&xs[buf][k * XS + cl], in ? row + cl : X, in);
            }
        }
#pragma unroll
        for (int m = 0; m < 2; m++) {
            const int k = wk + 8 * m;
            if (wld && k < kc4) cp_async8(&ws[buf][k * WSS + wbl], win && k < kc ? wrow + k0 + k : W, win && k < kc);
        }
        cp_async_commit();
    };
#pragma unroll
    for (int t = 0; t < 2; t++)
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int i = 0; i < 4; i++) acc[t][u][i] = 0.f;
    issue(0, 0);
    for (int k0 = 0, buf = 0; k0 < N; k0 += AMMA_KC, buf ^= 1) {
        if (k0 + AMMA_KC < N) issue(k0 + AMMA_KC, buf ^ 1);
        else cp_async_commit();
        cp_async_wait1();
        __syncthreads();
        const int kc = min(AMMA_KC, N - k0);
        if (tile == 0 && win) { /* the weights' check, once per (d, s) */
#pragma unroll
            for (int m = 0; m < 2; m++) {
                const int k = wk + 8 * m;
                if (k < kc && !finite2(ws[buf][k * WSS + wbl]))
                    atomicMin(&st->bad_weight, (unsigned long long)((wbase + b0 + wbl) * N + k0 + k));
            }
        }
        const int steps = (kc + 3) >> 2;
        const float *xf = reinterpret_cast<const float *>(xs[buf]);
#pragma unroll
        for (int t = 0; t < AMMA_KC / 4; t++) {
            if (t >= steps) break;
            /* A: complex rows j0 = 4t + tig/2 (k columns tig) and j0 + 2 (tig + 4); beams gid
             * and gid + 8; the real tile takes (Re w, Im w), the imaginary (-Im w, Re w) */
            const int j0 = 4 * t + (tig >> 1), odd = tig & 1;
            const float2 w00 = ws[buf][j0 * WSS + gid], w08 = ws[buf][j0 * WSS + gid + 8];
            const float2 w20 = ws[buf][(j0 + 2) * WSS + gid], w28 = ws[buf][(j0 + 2) * WSS + gid + 8];
            const float ar[4] = {odd ? w00.y : w00.x, odd ? w08.y : w08.x, odd ? w20.y : w20.x, odd ? w28.y : w28.x};
            const float ai[4] = {odd ? w00.x : -w00.y, odd ? w08.x : -w08.y, odd ? w20.x : -w20.y, odd ? w28.x : -w28.y};
            unsigned arb[4], ars[4], aib[4], ais[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                tf32_split(ar[i], arb[i], ars[i]);
                tf32_split(ai[i], aib[i], ais[i]);
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int cell = (warp * U + u) * 8 + gid;
                /* B: real k rows tig (complex row j0, part odd) and tig + 4 (row j0 + 2) */
                const float x0 = xf[2 * (j0 * XS + cell) + odd], x1 = xf[2 * ((j0 + 2) * XS + cell) + odd];
                unsigned bb[2], bs[2];
                tf32_split(x0, bb[0], bs[0]);
                tf32_split(x1, bb[1], bs[1]);
                mma3_add(acc[0][u], arb, ars, bb, bs);
                mma3_add(acc[1][u], aib, ais, bb, bs);
            }
        }
        __syncthreads();
    }
}

template <int U>
__global__ void __launch_bounds__(128, 4)
apply_mma_kernel(rtk_gather g, int B, int tiles_per_seg, const float2 *__restrict__ W,
                 float2 *__restrict__ Y, rtk_cpi_status *st)
{
    constexpr int CELLS = 32 * U, XS = CELLS + AMMA_PAD; /* padded rows: no bank conflicts */
    constexpr int WSS = APT_BEAMS + AMMA_PAD;
    __shared__ float2 xs[2][AMMA_KC * XS];
    __shared__ float2 ws[2][AMMA_KC * WSS];
    __shared__ int rowoff[APT_MAXN];
    const int D = g.bins, R = g.range, L = g.seg_len;
    const int d = blockIdx.y, s = blockIdx.x / tiles_per_seg, tile = blockIdx.x % tiles_per_seg;
    const int b0 = blockIdx.z * APT_BEAMS, rl0 = tile * CELLS;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, gid = lane >> 2, tig = lane & 3;
    float acc[2][U][4]; /* [real/imaginary tile][cell tile][fragment] */
    apply_mma_core<U, 4>(g, B, d, s, tile, b0, W, st, xs, ws, rowoff, acc);
    /* D fragments: rows gid (0, 1) and gid + 8 (2, 3) = beams; columns 2 tig, 2 tig + 1 */
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int b = b0 + gid + (i >> 1) * 8;
            const int rl = rl0 + (warp * U + u) * 8 + 2 * tig + (i & 1);
            if (b < B && rl < L)
                Y[((size_t)b * D + d) * R + s * L + rl] = make_float2(acc[0][u][i], acc[1][u][i]);
        }
}

/* The apply fused with the CA/GO/SO detector when only detections are kept (issue 34):
 * a block takes a whole line of every beam of its group — bin d, all R <= 512 cells of the
 * one segment, 16 beams — with 16 warps of U 8-cell tiles each (U = 1 .. 4, the fewest that
 * cover R: 512 cells at hard's R = 480, 384 at medium's), applies the weights as apply_mma_kernel does (the
 * same k-step order and operations: the same y bit for bit), writes |y|^2 in double into
 * shared memory where the rows were staged, and detects with one warp a line
 * (rtk_cfar_line.cuh): y never goes to global memory and the powers never come back. */
constexpr int AFUSE_NW = 16, AFUSE_MAXR = 8 * 4 * AFUSE_NW; /* U <= 4 cell tiles a warp: 512 cells */

/* the cell tiles a warp takes for a line of R cells: the fewest that cover it (1 .. 4) */
int apply_cfar_tiles(int R) { return (R + 8 * AFUSE_NW - 1) / (8 * AFUSE_NW); }

size_t apply_cfar_smem(int R, int N)
{
    const int cells = 8 * AFUSE_NW * apply_cfar_tiles(R);
    const size_t apply = sizeof(float2) * 2 * AMMA_KC * (cells + AMMA_PAD + APT_BEAMS + AMMA_PAD) +
                         sizeof(int) * (size_t)N;
    const size_t lines = sizeof(double) * APT_BEAMS * (size_t)rtk::cfar::line_doubles(R);
    return apply > lines ? apply : lines;
}

template <int KIND, int U>
__global__ void __launch_bounds__(32 * AFUSE_NW, 1)
apply_cfar_kernel(rtk_gather g, int B, const float2 *__restrict__ W, rtk_cfar_window w,
                  const double *__restrict__ alpha, rtk_cfar_hit *hits, unsigned int cap, rtk_cpi_status *st)
{
    constexpr int NW = AFUSE_NW, XS = 8 * U * NW + AMMA_PAD, WSS = APT_BEAMS + AMMA_PAD;
    extern __shared__ __align__(16) unsigned char afuse_smem[];
    auto xs = reinterpret_cast<float2 (*)[AMMA_KC * XS]>(afuse_smem);
    auto ws = reinterpret_cast<float2 (*)[AMMA_KC * WSS]>(afuse_smem + sizeof(float2) * 2 * AMMA_KC * XS);
    int *rowoff = reinterpret_cast<int *>(afuse_smem + sizeof(float2) * 2 * AMMA_KC * (XS + WSS));
    double *lines = reinterpret_cast<double *>(afuse_smem); /* after the apply: the lines */
    const int D = g.bins, R = g.range, d = blockIdx.y, b0 = blockIdx.z * APT_BEAMS;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, gid = lane >> 2, tig = lane & 3;
    const int LD = rtk::cfar::line_doubles(R);
    float acc[2][U][4];
    apply_mma_core<U, NW>(g, B, d, 0, 0, b0, W, st, xs, ws, rowoff, acc);
    /* (apply_mma_core ends on a barrier: the staging buffers are free) */
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int bl = gid + (i >> 1) * 8, rl = (warp * U + u) * 8 + 2 * tig + (i & 1);
            if (b0 + bl < B && rl < R)
                lines[(size_t)bl * LD + rtk::cfar::padded(rl)] =
                    rtk::cfar::power_of(make_float2(acc[0][u][i], acc[1][u][i]));
        }
    __syncthreads();
    if (b0 + warp < B) /* warp b detects line (b0 + b, d) */
        rtk::cfar::line_scan_test<KIND, 32, 32 * NW>(lines + (size_t)warp * LD, lane, warp,
                                                     (long long)(b0 + warp) * D + d, R, w, alpha, hits, cap, st);
}

} // namespace

extern "C" int rtk_apply_rows_launch(const rtk_gather *g, int beams, const void *W, void *Y,
                                     rtk_cpi_status *status, void *stream)
{
    if (!g || beams < 1 || g->segments < 1 || g->seg_len < 1 || g->bins > 65535)
        return (int)cudaErrorInvalidValue;
    const int N = g->channels * g->order;
    const size_t smem = sizeof(float2) * APPLY_BEAMS * N;
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(apply_kernel,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)smem);
        if (e != cudaSuccess) return (int)e;
    }
    const int tiles = (g->seg_len + APPLY_CELLS - 1) / APPLY_CELLS;
    dim3 grid((unsigned)(g->segments * tiles), (unsigned)g->bins,
              (unsigned)((beams + APPLY_BEAMS - 1) / APPLY_BEAMS));
    apply_kernel<<<grid, APPLY_THREADS, smem, (cudaStream_t)stream>>>(
        *g, beams, tiles, (const float2 *)W, (float2 *)Y, status);
    return (int)cudaGetLastError();
}

/* the tiled kernels take 16 < N <= 512 (the row-offset table) and offsets within an int;
 * otherwise their launchers run the row kernel */
static bool apply_tiles_fit(const rtk_gather *g)
{
    const int N = g->channels * g->order;
    return N > APT_KC && N <= APT_MAXN && (long long)g->bins * g->channels * g->range <= 0x7fffffffLL;
}

/* The cells a lane takes (U): the largest of 4, 2, 1 whose tiles waste at most a fifth
 * of the cells they cover (L = 480: U = 4, 4 tiles; L = 160: U = 2, 3 tiles of 64). */
static int apply_cells_per_lane(int L)
{
    for (int u = 4; u > 1; u /= 2) {
        const long long tiles = (L + 32LL * u - 1) / (32LL * u);
        if (5 * (tiles * 32 * u - L) <= tiles * 32 * u) return u;
    }
    return 1;
}

extern "C" int rtk_apply_fp32_launch(const rtk_gather *g, int beams, const void *W, void *Y,
                                     rtk_cpi_status *status, void *stream)
{
    if (!g || beams < 1 || g->segments < 1 || g->seg_len < 1 || g->bins > 65535 ||
        g->channels < 1 || g->order < 1)
        return (int)cudaErrorInvalidValue;
    const int N = g->channels * g->order, U = apply_cells_per_lane(g->seg_len);
    /* N <= 16 (one short chunk): the row kernel measured faster (easy: 0.012 against 0.014
     * ms, H100, 2026-11-27); the tiled kernel's row-offset table: N <= 512 rows, offsets
     * within an int */
    if (!apply_tiles_fit(g)) return rtk_apply_rows_launch(g, beams, W, Y, status, stream);
    const int chunks = (N + APT_KC - 1) / APT_KC, KC = (N + chunks - 1) / chunks;
    const int tiles = (g->seg_len - 1) / (32 * U) + 1;
    const int groups = (beams + APT_BEAMS - 1) / APT_BEAMS;
    if ((long long)g->segments * tiles > 0x7fffffffLL || groups > 65535) return (int)cudaErrorInvalidValue;
    /* a warp per 4 beams: fewer warps when there are fewer beams */
    const int warps = (beams < APT_BEAMS ? beams + 3 : APT_BEAMS) / 4;
    dim3 grid((unsigned)(g->segments * tiles), (unsigned)g->bins, (unsigned)groups);
    const cudaStream_t s = (cudaStream_t)stream;
    switch (U) {
    case 4: apply_tiled_kernel<4><<<grid, 32 * warps, 0, s>>>(*g, beams, tiles, KC, (const float2 *)W, (float2 *)Y, status); break;
    case 2: apply_tiled_kernel<2><<<grid, 32 * warps, 0, s>>>(*g, beams, tiles, KC, (const float2 *)W, (float2 *)Y, status); break;
    default: apply_tiled_kernel<1><<<grid, 32 * warps, 0, s>>>(*g, beams, tiles, KC, (const float2 *)W, (float2 *)Y, status); break;
    }
    return (int)cudaGetLastError();
}

/* the dispatched apply: the tensor-core kernel for 16 < N <= 512 (hard: 21.4 against 23.8
 * us for the FP32 tiled kernel, medium 21.8 / 26.2; H100, 2026-11-27, kernels/journal.md),
 * the row kernel otherwise */
extern "C" int rtk_apply_launch(const rtk_gather *g, int beams, const void *W, void *Y,
                                rtk_cpi_status *status, void *stream)
{
    if (!g || beams < 1 || g->segments < 1 || g->seg_len < 1 || g->bins > 65535 ||
        g->channels < 1 || g->order < 1)
        return (int)cudaErrorInvalidValue;
    const int U = apply_cells_per_lane(g->seg_len);
    /* as rtk_apply_fp32_launch: N <= 16 (one k step would be mostly padding), N > 512 or
     * offsets beyond an int go to the row kernel */
    if (!apply_tiles_fit(g)) return rtk_apply_rows_launch(g, beams, W, Y, status, stream);
    const int tiles = (g->seg_len - 1) / (32 * U) + 1;
    const int groups = (beams + APT_BEAMS - 1) / APT_BEAMS;
    if ((long long)g->segments * tiles > 0x7fffffffLL || groups > 65535) return (int)cudaErrorInvalidValue;
    dim3 grid((unsigned)(g->segments * tiles), (unsigned)g->bins, (unsigned)groups);
    const cudaStream_t s = (cudaStream_t)stream;
    switch (U) {
    case 4: apply_mma_kernel<4><<<grid, 128, 0, s>>>(*g, beams, tiles, (const float2 *)W, (float2 *)Y, status); break;
    case 2: apply_mma_kernel<2><<<grid, 128, 0, s>>>(*g, beams, tiles, (const float2 *)W, (float2 *)Y, status); break;
    default: apply_mma_kernel<1><<<grid, 128, 0, s>>>(*g, beams, tiles, (const float2 *)W, (float2 *)Y, status); break;
    }
    return (int)cudaGetLastError();
}

/* the shared memory of the fused kernel instance for a line of R cells: set once to its
 * largest (N = 512), so that no engine lowers it under another's captured launches */
static size_t apply_cfar_smem_max(int R) { return apply_cfar_smem(8 * AFUSE_NW * apply_cfar_tiles(R), APT_MAXN); }

extern "C" int rtk_apply_cfar_fits(const rtk_gather *g, int kind)
{
    if (!g || g->channels < 1 || g->order < 1 || g->bins < 1 || !apply_tiles_fit(g) || g->segments != 1 ||
        g->seg_len != g->range || g->range < 1 || g->range > AFUSE_MAXR || g->bins > 65535 ||
        (kind != RTK_CFAR_CA && kind != RTK_CFAR_GO && kind != RTK_CFAR_SO))
        return 0;
    /* the device's opt-in shared memory a block (sm_90: 227 KiB; smaller GPUs take the two kernels) */
    int dev = 0, optin = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return apply_cfar_smem_max(g->range) <= (size_t)optin;
}

extern "C" int rtk_apply_cfar_launch(const rtk_gather *g, int beams, const void *W, const rtk_cfar_window *w,
                                     const double *alpha, rtk_cfar_hit *hits, unsigned int capacity,
                                     rtk_cpi_status *status, void *stream)
{
    if (!w || beams < 1 || !rtk_apply_cfar_fits(g, w->kind) || w->train < 1 || w->train > 128 || w->guard < 0)
        return (int)cudaErrorInvalidValue;
    const int groups = (beams + APT_BEAMS - 1) / APT_BEAMS;
    if (groups > 65535) return (int)cudaErrorInvalidValue;
    typedef void (*fused_fn)(rtk_gather, int, const float2 *, rtk_cfar_window, const double *, rtk_cfar_hit *,
                             unsigned int, rtk_cpi_status *);
    /* [kind: CA, GO, SO][tiles a warp - 1] */
    static const fused_fn table[3][4] = {
        {apply_cfar_kernel<RTK_CFAR_CA, 1>, apply_cfar_kernel<RTK_CFAR_CA, 2>, apply_cfar_kernel<RTK_CFAR_CA, 3>,
         apply_cfar_kernel<RTK_CFAR_CA, 4>},
        {apply_cfar_kernel<RTK_CFAR_GO, 1>, apply_cfar_kernel<RTK_CFAR_GO, 2>, apply_cfar_kernel<RTK_CFAR_GO, 3>,
         apply_cfar_kernel<RTK_CFAR_GO, 4>},
        {apply_cfar_kernel<RTK_CFAR_SO, 1>, apply_cfar_kernel<RTK_CFAR_SO, 2>, apply_cfar_kernel<RTK_CFAR_SO, 3>,
         apply_cfar_kernel<RTK_CFAR_SO, 4>}};
    const fused_fn k = table[w->kind == RTK_CFAR_CA ? 0 : w->kind == RTK_CFAR_GO ? 1 : 2][apply_cfar_tiles(g->range) - 1];
    const size_t smem = apply_cfar_smem(g->range, g->channels * g->order);
    cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)apply_cfar_smem_max(g->range));
    if (e != cudaSuccess) return (int)e;
    dim3 grid(1u, (unsigned)g->bins, (unsigned)groups);
    k<<<grid, 32 * AFUSE_NW, smem, (cudaStream_t)stream>>>(*g, beams, (const float2 *)W, *w, alpha, hits, capacity,
                                                           status);
    return (int)cudaGetLastError();
}

/* which kernel rtk_apply_launch (which 0), rtk_apply_fp32_launch (1) or
 * rtk_apply_rows_launch (2) runs for g */
extern "C" const char *rtk_apply_describe(const rtk_gather *g, int which)
{
    if (!g || which == 2 || !apply_tiles_fit(g)) return "apply kernel (rows)";
    return which == 1 ? "apply kernel (FP32 tiles)" : "apply on the tensor cores (3xTF32)";
}

