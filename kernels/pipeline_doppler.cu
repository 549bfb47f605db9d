/* pipeline_doppler.cu: the Doppler filter's kernels of a CPI (rtk_pipeline.h, contract steps
 * 1 and 2): the window and layout (the load kernel before cuFFT), the one-pass filters
 * (radix-2 in shared memory, D = 128 in registers) and the conversion of stored samples.
 * CPU reference: stap/engine/engine_cpu.c; tests/unit/test_gpu_engine.c compares the two. */
#include "rtk_device.cuh"
#include "rtk_pipeline.h"
#include "rtk_pipeline_common.cuh"

namespace {

using rtk::c0;
using rtk::cjfma;

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

} // namespace

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
