/* detect.cu: the adaptive detectors (AMF, Kelly's GLRT, ACE) on the device
 * (rtk_adaptive_detect_launch, rtk_pipeline.h), from the R factors the weight solve kept.
 * The CPU reference is stap/engine/engine_detect.c: for training matrix k with factor R
 * (S = R^H R), zv = R^-H v per beam, and per cell of the matrix's segment and bin
 * z = R^-H x, b = |z|^2, a = |zv^H z|^2 / |zv|^2, the statistic from a and b.
 *
 * A block per (matrix, slice of its cells): R's upper triangle conjugated into shared memory
 * as packed columns (column i of R is row i of R^H), the reciprocals of its diagonal, the
 * beams' zv (solved by the threads the first tile of cells leaves idle, at the same time as
 * those cells) and their |zv|^2; then a thread per cell:
 * its snapshot into its own column of a shared-memory tile (consecutive threads read
 * consecutive range cells: coalesced), the forward substitution there in FP32 (R's entries
 * are read by every lane at once: broadcasts; the tile's by lane: conflict-free), the sums
 * b and zv^H z in FP32, and a, b and the statistic in double, compared with the host's
 * threshold in double as the CPU does. */
#include "rtk_device.cuh"
#include "rtk_pipeline.h"

namespace {

using rtk::c0;
using rtk::cconj;
using rtk::cfms;
using rtk::cjfma;
using rtk::crecip;

constexpr int KIND_AMF = 6, KIND_KELLY = 7; /* stap_cfar_kind's values; ACE is 8 */

/* z := R^-H z in place (element j at z[j*stride]); Rp: column i of R conjugated at
 * Rp[i(i+1)/2 ..], dinv[i] = 1 / conj(R_ii). Two chains of multiply-adds a row (even and
 * odd j), added at its end. */
__device__ __forceinline__ void forward(const float2 *Rp, const float2 *dinv, float2 *z, int stride,
                                        int n)
{
    for (int i = 0; i < n; i++) {
        const float2 *col = Rp + (size_t)i * (i + 1) / 2;
        float2 s = z[(size_t)i * stride], u = c0();
        int j = 0;
        for (; j + 1 < i; j += 2) {
            s = cfms(col[j], z[(size_t)j * stride], s);
            u = cfms(col[j + 1], z[(size_t)(j + 1) * stride], u);
        }
        if (j < i) s = cfms(col[j], z[(size_t)j * stride], s);
        s = make_float2(s.x + u.x, s.y + u.y);
        z[(size_t)i * stride] = make_float2(s.x * dinv[i].x - s.y * dinv[i].y,
                                            s.x * dinv[i].y + s.y * dinv[i].x);
    }
}

constexpr int BEAMS_A_PASS = 8; /* beams whose zv^H z a thread sums at once (registers) */

/* Cell r's snapshot in the thread's column z (element j at z[j*T]) solved: b = |z|^2, zv^H z
 * per beam (BEAMS_A_PASS at a time: each z_j read once a pass), the statistics, the hits. */
__device__ __forceinline__ void test_cell(const rtk_adaptive &a, const float2 *zv, const double *vsv,
                                          const float2 *z, int T, int n, int nb, int group, int d,
                                          int R, int r, rtk_detect_hit *hits, unsigned capacity,
                                          rtk_cpi_status *status)
{
    float bq = 0.f;
    for (int j = 0; j < n; j++) {
        const float2 v = z[(size_t)j * T];
        bq = fmaf(v.x, v.x, fmaf(v.y, v.y, bq));
    }
    const float2 *Y = static_cast<const float2 *>(a.Y);
    for (int i0 = 0; i0 < nb; i0 += BEAMS_A_PASS) {
        float2 cv[BEAMS_A_PASS];
#pragma unroll
        for (int u = 0; u < BEAMS_A_PASS; u++) cv[u] = c0();
        for (int j = 0; j < n; j++) {
            const float2 zj = z[(size_t)j * T], *zr = zv + (size_t)j * nb + i0;
#pragma unroll
            for (int u = 0; u < BEAMS_A_PASS; u++)
                if (i0 + u < nb) cv[u] = cjfma(zr[u], zj, cv[u]);
        }
#pragma unroll
        for (int u = 0; u < BEAMS_A_PASS; u++) {
            const int i = i0 + u;
            if (i >= nb) break;
            const double ab = ((double)cv[u].x * cv[u].x + (double)cv[u].y * cv[u].y) / vsv[i], b = bq;
            const double st = a.kind == KIND_AMF     ? a.K * ab
                              : a.kind == KIND_KELLY ? ab / (1.0 + b)
                                                     : (b > 0 ? ab / b : 0.0);
            if (st > a.eta) {
                const unsigned long long flat =
                    ((unsigned long long)(a.beam0 + group + i) * a.out_bins + d) * R + r;
                const unsigned at = atomicAdd(&status->detections, 1u);
                if (at < capacity) {
                    const float2 y = Y[flat];
                    const double p = (double)y.x * y.x + (double)y.y * y.y;
                    hits[at] = rtk_detect_hit{flat, st, (float)p, (float)(a.K * ab)};
                }
            }
        }
    }
}

size_t smem_bytes(int n, int nbeams, int threads)
{
    return sizeof(float2) * ((size_t)n * (n + 1) / 2 + n + (size_t)n * nbeams + (size_t)n * threads) +
           sizeof(double) * nbeams;
}

__global__ void adaptive_detect_kernel(const rtk_gather g, const rtk_adaptive a,
                                       rtk_detect_hit *__restrict__ hits, unsigned capacity,
                                       rtk_cpi_status *status)
{
    extern __shared__ double smd[];
    const int n = a.n, nb = a.nbeams, T = blockDim.x, t = threadIdx.x;
    double *vsv = smd;                                   /* nb                      */
    float2 *Rp = reinterpret_cast<float2 *>(vsv + nb);   /* n(n+1)/2                */
    float2 *dinv = Rp + (size_t)n * (n + 1) / 2;         /* n                       */
    float2 *zv = dinv + n;                               /* zv[j*nb + b]            */
    float2 *Z = zv + (size_t)n * nb;                     /* Z[j*T + t]: t's cell    */
    const int k = blockIdx.x, S = g.segments, W = g.wrap > 0 ? g.wrap : g.bins;
    const int dg = k / S, s = k - dg * S, group = dg / a.out_bins, d = dg - group * a.out_bins;
    const int dl = dg % W, base = dg - dl;
    const float2 *Rk = static_cast<const float2 *>(a.R) + (long long)k * a.rstride;
    for (int e = t; e < n * n; e += T) {
        const int col = e / n, row = e - col * n;
        if (row <= col) Rp[(size_t)col * (col + 1) / 2 + row] = cconj(Rk[(size_t)col * a.ldr + row]);
    }
    const float2 *V = static_cast<const float2 *>(a.V) + (long long)group * a.vgroup;
    for (int e = t; e < n * nb; e += T) {
        const int b = e / n, j = e - b * n;
        zv[(size_t)j * nb + b] = V[(size_t)b * a.vld + j];
    }
    __syncthreads();
    for (int i = t; i < n; i += T) dinv[i] = crecip(Rp[(size_t)i * (i + 1) / 2 + i]);
    __syncthreads();
    const float2 *X = static_cast<const float2 *>(g.X);
    const int L = g.seg_len, C = g.channels, Q = g.order, R = g.range;
    float2 *z = Z + t;
    /* the first tile's c1 cells and the beams' zv solved at once: beam b by thread
     * (c1 + b) mod T, so the threads without a cell take the beams first */
    const int cf = blockIdx.y * T, c1 = min(T, L - cf);
    if (t < c1) {
        const int r = s * L + cf + t;
        for (int j = 0; j < n; j++)
            z[(size_t)j * T] = X[rtk::gather_col_offset(C, Q, W, (size_t)R, base, dl, j) + r];
        forward(Rp, dinv, z, T, n);
    }
    for (int b = t >= c1 ? t - c1 : t - c1 + T; b < nb; b += T) {
        forward(Rp, dinv, zv + b, nb, n);
        float q = 0.f;
        for (int j = 0; j < n; j++) {
            const float2 v = zv[(size_t)j * nb + b];
            q = fmaf(v.x, v.x, fmaf(v.y, v.y, q));
        }
        vsv[b] = q;
    }
    __syncthreads();
    if (t < c1)
        test_cell(a, zv, vsv, z, T, n, nb, group, d, R, s * L + cf + t, hits, capacity, status);
    for (int c = cf + gridDim.y * T; c < L; c += gridDim.y * T) {
        if (c + t >= L) break; /* no barrier below: each thread works in its own column */
        const int r = s * L + c + t;
        for (int j = 0; j < n; j++)
            z[(size_t)j * T] = X[rtk::gather_col_offset(C, Q, W, (size_t)R, base, dl, j) + r];
        forward(Rp, dinv, z, T, n);
        test_cell(a, zv, vsv, z, T, n, nb, group, d, R, r, hits, capacity, status);
    }
}

int smem_limit()
{
    int dev = 0, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
        return 0;
    return v;
}

} // namespace

extern "C" int rtk_adaptive_detect_threads(int n, int nbeams, int smem_limit)
{
    if (n < 1 || nbeams < 1) return 0;
    for (int threads = 128; threads >= 32; threads /= 2)
        if (smem_bytes(n, nbeams, threads) <= (size_t)smem_limit) return threads;
    return 0;
}

extern "C" int rtk_adaptive_detect_launch(const rtk_gather *g, const rtk_adaptive *a,
                                          rtk_detect_hit *hits, unsigned int capacity,
                                          rtk_cpi_status *status, void *stream)
{
    static_assert(sizeof(rtk_detect_hit) == 24, "a detection hit is 24 bytes (as rtk_cfar_hit)");
    if (!g || !a || !g->X || !a->R || !a->V || !a->Y || a->mats < 1 || a->out_bins < 1 ||
        g->segments < 1 || g->seg_len < 1 || a->n != g->channels * g->order)
        return (int)cudaErrorInvalidValue;
    const int limit = smem_limit();
    int T = rtk_adaptive_detect_threads(a->n, a->nbeams, limit);
    if (!T) return (int)cudaErrorInvalidValue;
    while (T > 32 && T / 2 >= g->seg_len) T /= 2; /* no more threads than a segment's cells */
    const size_t smem = smem_bytes(a->n, a->nbeams, T);
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(adaptive_detect_kernel,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        if (e != cudaSuccess) return (int)e;
    }
    /* the cells of a matrix over enough blocks to fill the device (each reloads R and solves
     * the beams' zv again: n^2/2 and nbeams n^2/2 multiply-adds against T n^2/2 for its cells) */
    int dev = 0, sms = 132;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        return (int)cudaErrorInvalidValue;
    const int tiles = (g->seg_len + T - 1) / T;
    int per = (4 * sms + a->mats - 1) / a->mats;
    per = per < 1 ? 1 : per > tiles ? tiles : per;
    adaptive_detect_kernel<<<dim3((unsigned)a->mats, (unsigned)per), T, smem, (cudaStream_t)stream>>>(
        *g, *a, hits, capacity, status);
    return (int)cudaGetLastError();
}
