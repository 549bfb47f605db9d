/* pipeline.cu: the kernels of a CPI around the QR (rtk_pipeline.h): the Doppler window and
 * layout, the materialized training gather (for QR variants that cannot gather), the
 * weight application and the status block. CPU references: stap/engine/engine_cpu.c (the same
 * contract steps); tests/unit/test_gpu_engine.c compares the two on fresh random cubes. */
#include "rtk_cfar_line.cuh"
#include "rtk_device.cuh"
#include "rtk_mma.cuh"
#include "rtk_pipeline.h"

namespace {

using rtk::c0;
using rtk::cjfma;
using rtk::mma3_add;
using rtk::tf32_split;

__device__ __forceinline__ bool finite2(float2 v) { return isfinite(v.x) && isfinite(v.y); }

__global__ void status_reset_kernel(rtk_cpi_status *s)
{
    s->bad_input = RTK_NO_INDEX;
    s->bad_weight = RTK_NO_INDEX;
    s->factor.bad_item = RTK_NO_BAD;
    s->factor.pad = 0;
    s->factor.worst = RTK_NO_WORST;
    s->detections = 0;
    s->phase[0] = s->phase[1] = s->phase[2] = 0;
}

/* A stored sample as complex64: complex64 as it is; an integer pair converted like the
 * host's conversions ((float)v, or (float)((double)v * scale)). */
template <typename T> struct sample_of;
template <> struct sample_of<float2> {
    static __device__ __forceinline__ float2 get(const float2 *x, long long i, const rtk_samples &)
    {
        return x[i];
    }
};
__device__ __forceinline__ signed char swap_bytes(signed char v) { return v; }
__device__ __forceinline__ short swap_bytes(short v)
{
    return (short)__byte_perm((unsigned)(unsigned short)v, 0u, 0x3201);
}
__device__ __forceinline__ int swap_bytes(int v) { return (int)__byte_perm((unsigned)v, 0u, 0x0123); }
template <typename I> struct int_pair {
    I re, im;
};
template <typename I> struct sample_of<int_pair<I>> {
    static __device__ __forceinline__ float conv(I v, const rtk_samples &f)
    {
        if (f.big_endian) v = swap_bytes(v);
        return f.scaled ? __double2float_rn((double)v * f.scale) : (float)v;
    }
    static __device__ __forceinline__ float2 get(const int_pair<I> *x, long long i,
                                                 const rtk_samples &f)
    {
        const int_pair<I> v = x[i];
        return make_float2(conv(v.re, f), conv(v.im, f));
    }
};

/* one thread per element of X (D x C x R): block (p*C + c, range tile), so that no thread
 * divides a 64-bit index (the grid-stride form spent most of its issue slots on that);
 * the writes are coalesced along r */
constexpr int LOAD_THREADS = 128;
template <typename T>
__global__ void __launch_bounds__(LOAD_THREADS)
doppler_load_kernel(const T *__restrict__ x, rtk_samples fmt, const float *__restrict__ win,
                    int C, int P, int R, float2 *__restrict__ X, rtk_cpi_status *st)
{
    const int row = blockIdx.x, p = row / C, c = row - p * C;
    const int r = blockIdx.y * LOAD_THREADS + threadIdx.x;
    if (r >= R) return;
    float2 out = c0();
    if (p < P) {
        const float2 v = sample_of<T>::get(
            x, c * fmt.stride[0] + p * fmt.stride[1] + r * fmt.stride[2], fmt);
        if (!finite2(v))
            atomicMin(&st->bad_input, (unsigned long long)(((long long)c * P + p) * R + r));
        const float w = win[p];
        out = make_float2(w * v.x, w * v.y);
    }
    X[(size_t)row * R + r] = out;
}

/* The Doppler filter in one pass (contract steps 1 and 2 fused): window, conversion of the
 * stored samples, zero padding, the D-point FFT along pulses and the D x C x R layout,
 * each input sample read once and X written once (the load kernel and cuFFT read and
 * write the cube twice more). A block takes one channel c and TILE range cells: their
 * P windowed pulses go to shared memory as [p][t] (read coalesced along range), the
 * TILE transforms run there as an in-place radix-2 decimation in frequency (natural order
 * in, bit-reversed order out; twiddles exp(-2 pi i m / D) by sincospif, a table per
 * block), and X[d][c][r0 + t] is written from row bitrev(d), coalesced along range.
 * D is a power of two (2 .. DOPPLER_FFT_MAX_D); TILE = min(32, 8192 / D), so that the
 * block's rows take at most 64 KB. Measured as fast as the load kernel and cuFFT together,
 * not faster (kernels/journal.md), so the engine runs it only with RTSTAP_DOPPLER_FUSED=1;
 * D = 128 goes to doppler_fft128_kernel below (registers, one exchange), the engine's
 * default there. */
constexpr int DFFT_THREADS = 256, DOPPLER_FFT_MAX_D = 4096;

template <typename T>
__global__ void __launch_bounds__(DFFT_THREADS)
doppler_fft_kernel(const T *__restrict__ x, rtk_samples fmt, const float *__restrict__ win,
                   int C, int P, int R, int logD, int logT, float2 *__restrict__ X,
                   rtk_cpi_status *st)
{
    extern __shared__ float2 dfft_smem[];
    const int D = 1 << logD, tile = 1 << logT, n = D << logT;
    float2 *buf = dfft_smem;     /* D x tile */
    float2 *tw = dfft_smem + n;  /* D/2 twiddles */
    const int c = blockIdx.y, r0 = blockIdx.x << logT;
    for (int m = threadIdx.x; m < D / 2; m += DFFT_THREADS) {
        float sn, cs;
        sincospif(-2.0f * (float)m / (float)D, &sn, &cs);
        tw[m] = make_float2(cs, sn);
    }
    /* eight loads in flight a thread, then the check, window and store */
    constexpr int LU = 8;
    for (int i0 = threadIdx.x; i0 < n; i0 += LU * DFFT_THREADS) {
        float2 v[LU];
#pragma unroll
        for (int u = 0; u < LU; u++) {
            const int i = i0 + u * DFFT_THREADS, p = i >> logT, r = r0 + (i & (tile - 1));
            v[u] = i < n && p < P && r < R
                       ? sample_of<T>::get(x, c * fmt.stride[0] + p * fmt.stride[1] + r * fmt.stride[2], fmt)
                       : c0();
        }
#pragma unroll
        for (int u = 0; u < LU; u++) {
            const int i = i0 + u * DFFT_THREADS, p = i >> logT, r = r0 + (i & (tile - 1));
            if (i >= n) break;
            float2 w = c0();
            if (p < P && r < R) {
                if (!finite2(v[u]))
                    atomicMin(&st->bad_input, (unsigned long long)(((long long)c * P + p) * R + r));
                const float wp = win[p];
                w = make_float2(wp * v[u].x, wp * v[u].y);
            }
            buf[i] = w;
        }
    }
    __syncthreads();
    /* the stage of span h = 2^lh: butterfly bf (its k-th of a group of 2h) pairs rows
     * base and base + h, twiddle index k * D / 2h */
    for (int lh = logD - 1; lh >= 0; lh--) {
        const int h = 1 << lh;
        for (int i = threadIdx.x; i < n / 2; i += DFFT_THREADS) {
            const int bf = i >> logT, t = i & (tile - 1);
            const int k = bf & (h - 1), base = ((bf >> lh) << (lh + 1)) + k;
            float2 *pa = buf + (base << logT) + t, *pb = pa + (h << logT);
            const float2 a = *pa, b = *pb, w = tw[k << (logD - 1 - lh)];
            const float2 dd = make_float2(a.x - b.x, a.y - b.y);
            *pa = make_float2(a.x + b.x, a.y + b.y);
            *pb = make_float2(dd.x * w.x - dd.y * w.y, dd.x * w.y + dd.y * w.x);
        }
        __syncthreads();
    }
    for (int i = threadIdx.x; i < n; i += DFFT_THREADS) {
        const int d = i >> logT, t = i & (tile - 1), r = r0 + t;
        if (r >= R) continue;
        const int src = (int)(__brev((unsigned)d) >> (32 - logD));
        X[((size_t)d * C + c) * R + r] = buf[(src << logT) + t];
    }
}

/* The one-pass Doppler filter for D = 128 (the presets' and PERFECT's), with the
 * transforms in registers: 128 = 16 x 8. A block takes one channel and TILE range cells (16,
 * or 32 for comparisons) in 8 pulse groups of TILE threads (a warp, or a half-warp); group w
 * holds pulses p = 8 p1 + w (p1 = 0..15) of its thread's cell — sixteen coalesced loads in
 * flight — and makes their 16-point DFT over p1 in registers (radix-2 DIF, constant
 * twiddles); the results, times W_128^(w k1), go through shared memory once; then group w
 * makes the 8-point DFTs over p2 of k1 = 2w and 2w + 1 and writes X[k1 + 16 k2]. One
 * barrier between the passes instead of seven (doppler_fft_kernel's radix-2 stages). */
/* bit reversal of 4 and 3 bits, branch- and loop-free so that it folds to a constant in
 * the unrolled loops (the register arrays stay in registers) */
__device__ __forceinline__ constexpr int brev4(int x)
{
    return ((x & 1) << 3) | ((x & 2) << 1) | ((x & 4) >> 1) | ((x & 8) >> 3);
}
__device__ __forceinline__ constexpr int brev3(int x) { return ((x & 1) << 2) | (x & 2) | ((x & 4) >> 2); }
/* W_16^m = exp(-2 pi i m / 16), m = 0..7 (m is a constant once the loops unroll) */
__device__ __forceinline__ float2 tw16(int m)
{
    constexpr float c1 = 0.923879532511286756f, c2 = 0.707106781186547524f,
                    c3 = 0.382683432365089772f;
    switch (m) {
    case 0: return make_float2(1.f, 0.f);
    case 1: return make_float2(c1, -c3);
    case 2: return make_float2(c2, -c2);
    case 3: return make_float2(c3, -c1);
    case 4: return make_float2(0.f, -1.f);
    case 5: return make_float2(-c3, -c1);
    case 6: return make_float2(-c2, -c2);
    default: return make_float2(-c1, -c3);
    }
}
/* in-place radix-2 decimation in frequency of N (8 or 16) values in registers; the result
 * in bit-reversed order */
template <int N> __device__ __forceinline__ void dif_reg(float2 (&v)[N])
{
#pragma unroll
    for (int h = N / 2; h >= 1; h /= 2)
#pragma unroll
        for (int base = 0; base < N; base += 2 * h)
#pragma unroll
            for (int k = 0; k < h; k++) {
                const float2 a = v[base + k], b = v[base + k + h];
                const float2 dd = make_float2(a.x - b.x, a.y - b.y);
                v[base + k] = make_float2(a.x + b.x, a.y + b.y);
                const int m = k * (N / (2 * h)) * (16 / N); /* W_N^(k N / 2h) as a power of W_16 */
                if (m == 0) {
                    v[base + k + h] = dd;
                } else {
                    const float2 w = tw16(m);
                    v[base + k + h] = make_float2(dd.x * w.x - dd.y * w.y, dd.x * w.y + dd.y * w.x);
                }
            }
}

/* TILE range cells a block (32: a warp's lanes, 16: half-warps) and 8 pulse groups: 8*TILE
 * threads. TILE = 16 gives the hard preset 660 blocks, 5 an SM, where 32 gave 330 (2.5 an SM:
 * the SMs with 3 set the time). */
template <typename T, int TILE>
__global__ void __launch_bounds__(8 * TILE, TILE == 32 ? 2 : 5)
doppler_fft128_kernel(const T *__restrict__ x, rtk_samples fmt, const float *__restrict__ win,
                      int C, int P, int R, float2 *__restrict__ X, rtk_cpi_status *st)
{
    __shared__ float2 buf[16 * 8 * TILE]; /* [k1][p2][cell] */
    __shared__ float2 tw[128];
    const int c = blockIdx.y, cl = threadIdx.x % TILE, w = threadIdx.x / TILE;
    const int r = blockIdx.x * TILE + cl;
    const bool rin = r < R;
    static_assert(8 * TILE >= 128, "a thread a twiddle");
    if (threadIdx.x < 128) {
        float sn, cs;
        sincospif(-2.0f * (float)threadIdx.x / 128.0f, &sn, &cs);
        tw[threadIdx.x] = make_float2(cs, sn);
    }
    float2 v[16];
#pragma unroll
    for (int p1 = 0; p1 < 16; p1++) {
        const int p = 8 * p1 + w;
        v[p1] = rin && p < P
                    ? sample_of<T>::get(x, c * fmt.stride[0] + p * fmt.stride[1] + r * fmt.stride[2], fmt)
                    : c0();
    }
#pragma unroll
    for (int p1 = 0; p1 < 16; p1++) {
        const int p = 8 * p1 + w;
        if (rin && p < P) {
            if (!finite2(v[p1]))
                atomicMin(&st->bad_input, (unsigned long long)(((long long)c * P + p) * R + r));
            const float wp = win[p];
            v[p1] = make_float2(wp * v[p1].x, wp * v[p1].y);
        }
    }
    dif_reg<16>(v);
    __syncthreads(); /* the twiddle table */
#pragma unroll
    for (int k1 = 0; k1 < 16; k1++) {
        const float2 y = v[brev4(k1)], t = tw[(w * k1) & 127];
        buf[(k1 * 8 + w) * TILE + cl] = make_float2(y.x * t.x - y.y * t.y, y.x * t.y + y.y * t.x);
    }
    __syncthreads();
#pragma unroll
    for (int e = 0; e < 2; e++) {
        const int k1 = 2 * w + e;
        float2 u[8];
#pragma unroll
        for (int p2 = 0; p2 < 8; p2++) u[p2] = buf[(k1 * 8 + p2) * TILE + cl];
        dif_reg<8>(u);
        if (rin)
#pragma unroll
            for (int k2 = 0; k2 < 8; k2++)
                X[((size_t)(k1 + 16 * k2) * C + c) * R + r] = u[brev3(k2)];
    }
}

template <typename T>
__global__ void samples_convert_kernel(const T *__restrict__ x, rtk_samples fmt, long long n,
                                       float2 *__restrict__ y, rtk_cpi_status *st)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        const long long r = i % fmt.R, t = i / fmt.R, p = t % fmt.P, c = t / fmt.P;
        const float2 v = sample_of<T>::get(x, c * fmt.stride[0] + p * fmt.stride[1] + r * fmt.stride[2], fmt);
        if (!finite2(v)) atomicMin(&st->bad_input, (unsigned long long)i);
        y[i] = v;
    }
}

/* Sub-CPI algorithms: Xs[d][c*Q + q][r] = u[d] x[c][d + q][r] for d < P - Q + 1, 0 above
 * (the Q staggered sub-CPI sequences in the layout of a C*Q-channel Doppler cube); every
 * sample is read, so the non-finite check covers the cube. */
__global__ void subcpi_load_kernel(const float2 *__restrict__ x, const float *__restrict__ u,
                                   int C, int P, int R, int Q, long long total,
                                   float2 *__restrict__ Xs, rtk_cpi_status *st)
{
    const int CQ = C * Q, Pp = P - Q + 1;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int r = (int)(i % R);
        const long long t = i / R;
        const int cq = (int)(t % CQ), d = (int)(t / CQ);
        const int c = cq / Q, q = cq - c * Q;
        float2 out = c0();
        if (d < Pp) {
            const long long src = ((long long)c * P + d + q) * R + r;
            const float2 v = x[src];
            if (!finite2(v)) atomicMin(&st->bad_input, (unsigned long long)src);
            const float w = u[d];
            out = make_float2(w * v.x, w * v.y);
        }
        Xs[i] = out;
    }
}

/* Sub-CPI training: T_s (m x n column-major, n = C*Q): row i < K, column c*Q + q =
 * conj(x[c][q][cells[s*K + i]]) (the first sub-CPI of the cell); rows K.. = load I. */
__global__ void subcpi_training_kernel(const float2 *__restrict__ x, const int *__restrict__ cells,
                                       int C, int P, int R, int Q, int K, float load, int m,
                                       int n, long long total, float2 *__restrict__ T)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int row = (int)(i % m);
        const long long t = i / m;
        const int col = (int)(t % n), s = (int)(t / n);
        float2 v;
        if (row < K) {
            const int c = col / Q, q = col - c * Q;
            const float2 xv = x[((long long)c * P + q) * R + __ldg(cells + (long long)s * K + row)];
            v = make_float2(xv.x, -xv.y);
        } else {
            v = make_float2(row - K == col ? load : 0.f, 0.f);
        }
        T[i] = v;
    }
}

/* one thread per matrix entry; column-major T_k, rows fastest (coalesced writes) */
__global__ void training_kernel(rtk_gather g, int m, int n, long long total, float2 *T, int ldt,
                                long long stride)
{
    const float2 *X = (const float2 *)g.X;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int row = (int)(i % m);
        const long long t = i / m;
        const int col = (int)(t % n), k = (int)(t / n);
        T[(long long)k * stride + (long long)col * ldt + row] =
            rtk::gather_elem(X, g.channels, g.order, g.wrap > 0 ? g.wrap : g.bins, g.range, g.segments, g.cells,
                             g.training, g.load, k, row, col);
    }
}

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

__global__ void weights_by_tap_kernel(const float2 *__restrict__ W, long long total, int B, int C,
                                      int Q, float2 *__restrict__ Wc, rtk_cpi_status *st)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        /* i walks W: ((k*B + b)*C + c)*Q + q */
        const int q = (int)(i % Q);
        long long t = i / Q;
        const int c = (int)(t % C);
        t /= C;
        const int b = (int)(t % B);
        const long long k = t / B;
        const float2 w = W[i];
        if (!finite2(w)) atomicMin(&st->bad_weight, (unsigned long long)i);
        Wc[((k * Q + q) * B + b) * C + c] = make_float2(w.x, -w.y);
    }
}

/* JDL: a block takes TR range cells of one Doppler bin and a group of up to BJ of the
 * B*Na (beam, local beam) outputs; it stages the cells' C channels in shared memory (the
 * cube is read once per group), and each thread keeps BJ independent sums (instruction
 * parallelism: one sum's chain of C dependent FMAs would leave the pipes idle). The
 * transform's entries are the same across a warp (broadcast loads). */
constexpr int BEAMSPACE_BJ = 8;

__global__ void beamspace_kernel(const float2 *__restrict__ X, int C, int D, int R,
                                 const float2 *__restrict__ A, int BNa, int Na,
                                 float2 *__restrict__ Xb)
{
    extern __shared__ float2 xs[]; /* C x blockDim.x */
    const int TR = blockDim.x, t = threadIdx.x, d = blockIdx.y;
    const int r = blockIdx.x * TR + t, bj0 = blockIdx.z * BEAMSPACE_BJ;
    const float2 *x = X + (size_t)d * C * R + r;
    for (int c = 0; c < C; c++) xs[c * TR + t] = r < R ? x[(size_t)c * R] : c0();
    __syncthreads();
    if (r >= R) return;
    const int nbj = min(BEAMSPACE_BJ, BNa - bj0);
    float2 acc[BEAMSPACE_BJ];
#pragma unroll
    for (int u = 0; u < BEAMSPACE_BJ; u++) acc[u] = c0();
    const float2 *a = A + (size_t)bj0 * C;
    for (int c = 0; c < C; c++) {
        const float2 xc = xs[c * TR + t];
#pragma unroll
        for (int u = 0; u < BEAMSPACE_BJ; u++)
            if (u < nbj) acc[u] = cjfma(__ldg(a + (size_t)u * C + c), xc, acc[u]);
    }
#pragma unroll
    for (int u = 0; u < BEAMSPACE_BJ; u++)
        if (u < nbj) {
            const int bj = bj0 + u, b = bj / Na, j = bj - b * Na;
            Xb[(((size_t)b * D + d) * Na + j) * R + r] = acc[u];
        }
}

/* JDL: element-space weights from the beamspace ones, one thread per weight entry. */
__global__ void jdl_expand_kernel(const float2 *__restrict__ Wt, const float2 *__restrict__ A,
                                  long long total, int batch, int B, int C, int Q, int Na,
                                  float2 *__restrict__ W)
{
    const int N = C * Q, Nt = Na * Q;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const long long kb = i / N;
        const int e = (int)(i - kb * N), c = e / Q, q = e - c * Q;
        const int b = (int)(kb % B);
        const long long k = kb / B;
        const float2 *wt = Wt + ((size_t)b * batch + k) * Nt + q;
        const float2 *a = A + (size_t)b * Na * C + c;
        float2 acc = c0();
        for (int j = 0; j < Na; j++) {
            const float2 aj = a[(size_t)j * C], w = wt[j * Q];
            acc.x = fmaf(aj.x, w.x, fmaf(-aj.y, w.y, acc.x));
            acc.y = fmaf(aj.x, w.y, fmaf(aj.y, w.x, acc.y));
        }
        W[i] = acc;
    }
}

unsigned grid_for(long long total, int threads)
{
    long long b = (total + threads - 1) / threads;
    return (unsigned)(b < 65536LL * 16 ? (b > 0 ? b : 1) : 65536LL * 16);
}

} // namespace

extern "C" int rtk_status_reset_launch(rtk_cpi_status *status, void *stream)
{
    status_reset_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(status);
    return (int)cudaGetLastError();
}

template <typename T>
static void doppler_load_as(const void *x, const rtk_samples &f, const float *win, int C, int P,
                            int R, int D, void *X, rtk_cpi_status *status, cudaStream_t s)
{
    const dim3 grid((unsigned)(D * C), (unsigned)((R - 1) / LOAD_THREADS + 1));
    doppler_load_kernel<T><<<grid, LOAD_THREADS, 0, s>>>((const T *)x, f, win, C, P, R,
                                                         (float2 *)X, status);
}

extern "C" int rtk_doppler_load_launch(const void *x, const rtk_samples *fmt, const float *win,
                                       int C, int P, int R, int D, void *X,
                                       rtk_cpi_status *status, void *stream)
{
    if (C < 1 || P < 1 || R < 1 || D < P || (long long)D * C > 0x7fffffffLL ||
        (R - 1) / LOAD_THREADS + 1 > 65535)
        return (int)cudaErrorInvalidValue;
    const rtk_samples f = fmt ? *fmt : rtk_samples{0, 0, 0, 1.0, {(long long)P * R, R, 1}, P, R};
    const cudaStream_t s = (cudaStream_t)stream;
    switch (f.type) {
    case 0: doppler_load_as<float2>(x, f, win, C, P, R, D, X, status, s); break;
    case 1: doppler_load_as<int_pair<signed char>>(x, f, win, C, P, R, D, X, status, s); break;
    case 2: doppler_load_as<int_pair<short>>(x, f, win, C, P, R, D, X, status, s); break;
    case 3: doppler_load_as<int_pair<int>>(x, f, win, C, P, R, D, X, status, s); break;
    default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

template <typename T>
static int doppler_fft_as(const void *x, const rtk_samples &f, const float *win, int C, int P,
                          int R, int logD, int tile128, void *X, rtk_cpi_status *status, cudaStream_t s)
{
    if (logD == 7) { /* D = 128: the transforms in registers */
        if (tile128 == 32) {
            const dim3 grid((unsigned)((R - 1) / 32 + 1), (unsigned)C);
            doppler_fft128_kernel<T, 32><<<grid, 256, 0, s>>>((const T *)x, f, win, C, P, R, (float2 *)X, status);
        } else {
            const dim3 grid((unsigned)((R - 1) / 16 + 1), (unsigned)C);
            doppler_fft128_kernel<T, 16><<<grid, 128, 0, s>>>((const T *)x, f, win, C, P, R, (float2 *)X, status);
        }
        return (int)cudaGetLastError();
    }
    const int D = 1 << logD, logT = logD >= 8 ? 13 - logD : 5, tile = 1 << logT;
    const size_t smem = sizeof(float2) * ((size_t)D * tile + D / 2);
    if (smem > 48 * 1024) {
        const cudaError_t e = cudaFuncSetAttribute(doppler_fft_kernel<T>,
                                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   (int)smem);
        if (e != cudaSuccess) return (int)e;
    }
    const dim3 grid((unsigned)((R - 1) / tile + 1), (unsigned)C);
    doppler_fft_kernel<T><<<grid, DFFT_THREADS, smem, s>>>((const T *)x, f, win, C, P, R, logD,
                                                           logT, (float2 *)X, status);
    return (int)cudaGetLastError();
}

extern "C" int rtk_doppler_fft_fits(int C, int P, int D)
{
    return C >= 1 && C <= 65535 && D >= 2 && D <= DOPPLER_FFT_MAX_D && (D & (D - 1)) == 0 &&
           P >= 1 && P <= D;
}

extern "C" int rtk_doppler_fft_launch(const void *x, const rtk_samples *fmt, const float *win,
                                      int C, int P, int R, int D, int tile, void *X,
                                      rtk_cpi_status *status, void *stream)
{
    if (R < 1 || !rtk_doppler_fft_fits(C, P, D) || (tile != 0 && tile != 16 && tile != 32))
        return (int)cudaErrorInvalidValue;
    const rtk_samples f = fmt ? *fmt : rtk_samples{0, 0, 0, 1.0, {(long long)P * R, R, 1}, P, R};
    int logD = 0;
    while ((1 << logD) < D) logD++;
    const cudaStream_t s = (cudaStream_t)stream;
    switch (f.type) {
    case 0: return doppler_fft_as<float2>(x, f, win, C, P, R, logD, tile, X, status, s);
    case 1: return doppler_fft_as<int_pair<signed char>>(x, f, win, C, P, R, logD, tile, X, status, s);
    case 2: return doppler_fft_as<int_pair<short>>(x, f, win, C, P, R, logD, tile, X, status, s);
    case 3: return doppler_fft_as<int_pair<int>>(x, f, win, C, P, R, logD, tile, X, status, s);
    default: return (int)cudaErrorInvalidValue;
    }
}

template <typename T>
static void convert_as(const void *x, const rtk_samples &f, long long n, void *y,
                       rtk_cpi_status *status, cudaStream_t s)
{
    samples_convert_kernel<T><<<grid_for(n, 256), 256, 0, s>>>((const T *)x, f, n, (float2 *)y,
                                                               status);
}

extern "C" int rtk_samples_convert_launch(const void *x, const rtk_samples *fmt, long long n,
                                          void *y, rtk_cpi_status *status, void *stream)
{
    if (!fmt || n < 1) return (int)cudaErrorInvalidValue;
    const cudaStream_t s = (cudaStream_t)stream;
    switch (fmt->type) {
    case 0: convert_as<float2>(x, *fmt, n, y, status, s); break;
    case 1: convert_as<int_pair<signed char>>(x, *fmt, n, y, status, s); break;
    case 2: convert_as<int_pair<short>>(x, *fmt, n, y, status, s); break;
    case 3: convert_as<int_pair<int>>(x, *fmt, n, y, status, s); break;
    default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

extern "C" int rtk_subcpi_load_launch(const void *x, const float *u, int C, int P, int R, int D,
                                      int Q, void *Xs, rtk_cpi_status *status, void *stream)
{
    if (C < 1 || P < 1 || R < 1 || Q < 1 || Q > P || D < P) return (int)cudaErrorInvalidValue;
    const long long total = (long long)D * C * Q * R;
    subcpi_load_kernel<<<grid_for(total, 256), 256, 0, (cudaStream_t)stream>>>(
        (const float2 *)x, u, C, P, R, Q, total, (float2 *)Xs, status);
    return (int)cudaGetLastError();
}

extern "C" int rtk_subcpi_training_launch(const void *x, const int *cells, int C, int P, int R,
                                          int Q, int S, int K, float load, int m, void *T,
                                          void *stream)
{
    const int n = C * Q;
    if (C < 1 || Q < 1 || Q > P || S < 1 || K < 1 || m < K || (m > K && m != K + n))
        return (int)cudaErrorInvalidValue;
    const long long total = (long long)m * n * S;
    subcpi_training_kernel<<<grid_for(total, 256), 256, 0, (cudaStream_t)stream>>>(
        (const float2 *)x, cells, C, P, R, Q, K, load, m, n, total, (float2 *)T);
    return (int)cudaGetLastError();
}

extern "C" int rtk_training_launch(const rtk_gather *g, int m, int n, int batch, void *T, int ldt,
                                   long long stride, void *stream)
{
    if (!g || !g->cells || m < 1 || n < 1 || batch < 1 || ldt < m)
        return (int)cudaErrorInvalidValue;
    const long long total = (long long)m * n * batch;
    training_kernel<<<grid_for(total, 256), 256, 0, (cudaStream_t)stream>>>(*g, m, n, total,
                                                                           (float2 *)T, ldt,
                                                                           stride);
    return (int)cudaGetLastError();
}

extern "C" int rtk_weights_by_tap_launch(const void *W, int batch, int beams, int channels,
                                         int order, void *Wc, rtk_cpi_status *status, void *stream)
{
    if (batch < 1 || beams < 1 || channels < 1 || order < 1) return (int)cudaErrorInvalidValue;
    const long long total = (long long)batch * beams * channels * order;
    weights_by_tap_kernel<<<grid_for(total, 256), 256, 0, (cudaStream_t)stream>>>(
        (const float2 *)W, total, beams, channels, order, (float2 *)Wc, status);
    return (int)cudaGetLastError();
}

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

extern "C" int rtk_event_record(void *event, void *stream)
{
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t e = cudaStreamIsCapturing((cudaStream_t)stream, &cs);
    if (e != cudaSuccess) return (int)e;
    return (int)cudaEventRecordWithFlags((cudaEvent_t)event, (cudaStream_t)stream,
                                         cs == cudaStreamCaptureStatusActive ? cudaEventRecordExternal
                                                                             : cudaEventRecordDefault);
}

extern "C" int rtk_beamspace_launch(const void *X, int C, int D, int R, const void *A, int B,
                                    int Na, void *Xb, void *stream)
{
    if (C < 1 || D < 1 || D > 65535 || R < 1 || B < 1 || Na < 1 || Na > C)
        return (int)cudaErrorInvalidValue;
    /* 128 cells a block while their channels fit in 96 KiB, else fewer (C <= 1536) */
    int TR = 128;
    while (TR > 32 && (size_t)C * TR * sizeof(float2) > 96 * 1024) TR /= 2;
    const size_t smem = (size_t)C * TR * sizeof(float2);
    if (smem > 227 * 1024) return (int)cudaErrorInvalidValue;
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(beamspace_kernel,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (e != cudaSuccess) return (int)e;
    }
    const int groups = (B * Na + BEAMSPACE_BJ - 1) / BEAMSPACE_BJ;
    if (groups > 65535) return (int)cudaErrorInvalidValue;
    dim3 grid((unsigned)((R + TR - 1) / TR), (unsigned)D, (unsigned)groups);
    beamspace_kernel<<<grid, TR, smem, (cudaStream_t)stream>>>((const float2 *)X, C, D, R,
                                                               (const float2 *)A, B * Na, Na,
                                                               (float2 *)Xb);
    return (int)cudaGetLastError();
}

extern "C" int rtk_jdl_expand_launch(const void *Wt, const void *A, int batch, int B, int C,
                                     int Q, int Na, void *W, void *stream)
{
    if (batch < 1 || B < 1 || C < 1 || Q < 1 || Na < 1 || Na > C) return (int)cudaErrorInvalidValue;
    const long long total = (long long)batch * B * C * Q;
    jdl_expand_kernel<<<grid_for(total, 256), 256, 0, (cudaStream_t)stream>>>(
        (const float2 *)Wt, (const float2 *)A, total, batch, B, C, Q, Na, (float2 *)W);
    return (int)cudaGetLastError();
}
