/* pipeline.cu: the kernels of a CPI around the QR (rtk_pipeline.h) other than the Doppler
 * filter (pipeline_doppler.cu) and the weight application (pipeline_apply.cu): the status
 * block, the sub-CPI layout and training, the materialized training gather (for QR variants
 * that cannot gather), the weights by tap, JDL's beamspace transform and weight expansion.
 * CPU references: stap/engine/engine_cpu.c (the same contract steps);
 * tests/unit/test_gpu_engine.c compares the two on fresh random cubes. */
#include "rtk_device.cuh"
#include "rtk_pipeline.h"
#include "rtk_pipeline_common.cuh"

namespace {

using rtk::c0;
using rtk::cjfma;

__global__ void status_reset_kernel(rtk_cpi_status *s)
{
    s->bad_input = RTK_NO_INDEX;
    s->bad_weight = RTK_NO_INDEX;
    s->factor.bad_item = RTK_NO_BAD;
    s->factor.guarded = 0;
    s->factor.worst = RTK_NO_WORST;
    s->detections = 0;
    s->phase[0] = s->phase[1] = s->phase[2] = 0;
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

} // namespace

extern "C" int rtk_status_reset_launch(rtk_cpi_status *status, void *stream)
{
    status_reset_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(status);
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
