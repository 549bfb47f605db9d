/* cfar.cu: CA/OS CFAR on the GPU (cfar_gpu.h): one thread per cell under test,
 * detections compacted with an atomic counter, sorted on the host. The reference is
 * stap_cfar_detect (stap/cfar.c); test_gpu_cfar compares the two lists exactly. */
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "cfar_gpu.h"

namespace {

#define CFAR_CUDA(call)                                                                   \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            st = rt_fail(err, RT_EDEVICE, "GPU CFAR: %s failed: %s (%s:%d)", #call,       \
                         cudaGetErrorString(e_), __FILE__, __LINE__);                     \
            goto done;                                                                    \
        }                                                                                 \
    } while (0)

/* |y|^2 in double: the float products are exact in double, one rounding for the sum
 * (as stap_cfar_power); explicit _rn intrinsics so that nothing is contracted. */
__global__ void power_kernel(const float2 *y, double *p, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float2 v = y[i];
    double a = __dmul_rn((double)v.x, (double)v.x), b = __dmul_rn((double)v.y, (double)v.y);
    p[i] = __dadd_rn(a, b);
}

__device__ void window_of(int r, int R, int guard, int train, int *lo0, int *hi0, int *lo1,
                          int *hi1)
{
    int a = r - guard - train, b = r - guard;
    *lo0 = a < 0 ? 0 : a;
    *hi0 = b < 0 ? 0 : b;
    int c0 = r + guard + 1, d = r + guard + 1 + train;
    *lo1 = c0 > R ? R : c0;
    *hi1 = d > R ? R : d;
}

/* One thread per cell. alpha / rank: the host's tables (stap_cfar_tables), index n.
 * A detection appends (flat index, Z) at an atomically reserved slot. */
template <bool OS>
__global__ void test_kernel(const double *p, long long lines, int R, int guard, int train,
                            const double *alpha, const int *rank, unsigned long long *flat_out,
                            double *z_out, unsigned int *count, unsigned int cap)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= lines * R) return;
    const long long line = i / R;
    const int r = (int)(i - line * R);
    const double *pl = p + line * R;
    int lo0, hi0, lo1, hi1;
    window_of(r, R, guard, train, &lo0, &hi0, &lo1, &hi1);
    const int n = (hi0 - lo0) + (hi1 - lo1);
    double z;
    if (!OS) {
        double s = 0;
        for (int j = lo0; j < hi0; j++) s = __dadd_rn(s, pl[j]);
        for (int j = lo1; j < hi1; j++) s = __dadd_rn(s, pl[j]);
        z = __ddiv_rn(s, (double)n);
    } else {
        double v[2 * STAP_CFAR_MAX_TRAIN];
        int m = 0;
        for (int j = lo0; j < hi0; j++) v[m++] = pl[j];
        for (int j = lo1; j < hi1; j++) v[m++] = pl[j];
        /* k-th smallest by partial selection sort: k passes */
        const int k = rank[n];
        for (int a = 0; a < k; a++) {
            int best = a;
            for (int b = a + 1; b < m; b++)
                if (v[b] < v[best]) best = b;
            double t = v[a];
            v[a] = v[best];
            v[best] = t;
        }
        z = v[k - 1];
    }
    const double thr = __dmul_rn(alpha[n], z);
    if (pl[r] > thr) {
        unsigned int slot = atomicAdd(count, 1u);
        if (slot < cap) {
            flat_out[slot] = (unsigned long long)i;
            z_out[slot] = z;
        }
    }
}

struct hit {
    unsigned long long flat;
    double z;
};

int cmp_hit(const void *a, const void *b)
{
    unsigned long long x = ((const hit *)a)->flat, y = ((const hit *)b)->flat;
    return x < y ? -1 : x > y;
}

} // namespace

extern "C" int rtk_cfar_detect_host(const stap_cfar_config *c, const cf32 *y_host, int B,
                                    int D, int R, stap_detection **out, size_t *count,
                                    rt_error *err)
{
    *out = NULL;
    *count = 0;
    if (B < 1 || D < 1 || R < 1)
        return rt_fail(err, RT_EINVAL, "GPU CFAR: output shape %d x %d x %d has a zero "
                       "dimension", B, D, R);
    int st = stap_cfar_validate(c, R, err);
    if (st || c->kind == STAP_CFAR_NONE) return st;

    const int nmax = 2 * c->train;
    double alpha[2 * STAP_CFAR_MAX_TRAIN + 1], norm[2 * STAP_CFAR_MAX_TRAIN + 1];
    int rank[2 * STAP_CFAR_MAX_TRAIN + 1];
    if ((st = stap_cfar_tables(c, alpha, rank, norm, err))) return st;

    const long long lines = (long long)B * D;
    const size_t cells = (size_t)lines * R;
    /* room for 4x the expected false alarms plus 4096; a fuller list is re-run */
    unsigned int cap = (unsigned int)(cells * c->pfa * 4 + 4096 < 1e9 ? cells * c->pfa * 4 + 4096
                                                                      : 1e9);
    float2 *dy = NULL;
    double *dp = NULL, *dalpha = NULL, *dz = NULL;
    int *drank = NULL;
    unsigned long long *dflat = NULL;
    unsigned int *dcount = NULL, hcount = 0;
    hit *hits = NULL;
    stap_detection *det = NULL;
    const int threads = 256;
    const unsigned blocks = (unsigned)((cells + threads - 1) / threads);

    CFAR_CUDA(cudaMalloc((void **)&dy, sizeof(float2) * cells));
    CFAR_CUDA(cudaMalloc((void **)&dp, sizeof(double) * cells));
    CFAR_CUDA(cudaMalloc((void **)&dalpha, sizeof(double) * (nmax + 1)));
    CFAR_CUDA(cudaMalloc((void **)&drank, sizeof(int) * (nmax + 1)));
    CFAR_CUDA(cudaMalloc((void **)&dcount, sizeof(unsigned int)));
    CFAR_CUDA(cudaMemcpy(dy, y_host, sizeof(float2) * cells, cudaMemcpyHostToDevice));
    CFAR_CUDA(cudaMemcpy(dalpha, alpha, sizeof(double) * (nmax + 1), cudaMemcpyHostToDevice));
    CFAR_CUDA(cudaMemcpy(drank, rank, sizeof(int) * (nmax + 1), cudaMemcpyHostToDevice));
    power_kernel<<<blocks, threads>>>(dy, dp, cells);
    CFAR_CUDA(cudaGetLastError());
    for (int attempt = 0; attempt < 2; attempt++) {
        CFAR_CUDA(cudaMalloc((void **)&dflat, sizeof(unsigned long long) * cap));
        CFAR_CUDA(cudaMalloc((void **)&dz, sizeof(double) * cap));
        CFAR_CUDA(cudaMemset(dcount, 0, sizeof(unsigned int)));
        if (c->kind == STAP_CFAR_OS)
            test_kernel<true><<<blocks, threads>>>(dp, lines, R, c->guard, c->train, dalpha,
                                                   drank, dflat, dz, dcount, cap);
        else
            test_kernel<false><<<blocks, threads>>>(dp, lines, R, c->guard, c->train, dalpha,
                                                    drank, dflat, dz, dcount, cap);
        CFAR_CUDA(cudaGetLastError());
        CFAR_CUDA(cudaMemcpy(&hcount, dcount, sizeof(unsigned int), cudaMemcpyDeviceToHost));
        if (hcount <= cap) break;
        cudaFree(dflat);
        cudaFree(dz);
        dflat = NULL;
        dz = NULL;
        cap = hcount; /* every cell could detect at most once: this run fits */
    }
    if (hcount > 0) {
        hits = (hit *)malloc(sizeof(hit) * hcount);
        unsigned long long *hf = (unsigned long long *)malloc(sizeof(unsigned long long) * hcount);
        double *hz = (double *)malloc(sizeof(double) * hcount);
        det = (stap_detection *)malloc(sizeof(stap_detection) * hcount);
        if (!hits || !hf || !hz || !det) {
            free(hf);
            free(hz);
            st = rt_fail(err, RT_ENOMEM, "GPU CFAR: out of memory for %u detections", hcount);
            goto done;
        }
        cudaError_t e1 = cudaMemcpy(hf, dflat, sizeof(unsigned long long) * hcount,
                                    cudaMemcpyDeviceToHost);
        cudaError_t e2 = cudaMemcpy(hz, dz, sizeof(double) * hcount, cudaMemcpyDeviceToHost);
        if (e1 != cudaSuccess || e2 != cudaSuccess) {
            free(hf);
            free(hz);
            st = rt_fail(err, RT_EDEVICE, "GPU CFAR: copying the detections back failed: %s",
                         cudaGetErrorString(e1 != cudaSuccess ? e1 : e2));
            goto done;
        }
        for (unsigned int i = 0; i < hcount; i++) hits[i] = hit{hf[i], hz[i]};
        free(hf);
        free(hz);
        qsort(hits, hcount, sizeof(hit), cmp_hit);
        for (unsigned int i = 0; i < hcount; i++) {
            const size_t f = (size_t)hits[i].flat;
            const int r = (int)(f % (size_t)R);
            int lo0, hi0, lo1, hi1;
            stap_cfar_window(r, R, c->guard, c->train, &lo0, &hi0, &lo1, &hi1);
            const int n = (hi0 - lo0) + (hi1 - lo1);
            const cf32 v = y_host[f];
            /* cf32 is a struct {re, im} in C++ (rtk.h) */
            const double p = stap_cfar_power(v.re, v.im);
            det[i] = stap_cfar_record(f, D, R, p, hits[i].z / norm[n]);
        }
        *out = det;
        *count = hcount;
        det = NULL;
    }
done:
    free(hits);
    free(det);
    cudaFree(dy);
    cudaFree(dp);
    cudaFree(dalpha);
    cudaFree(drank);
    cudaFree(dflat);
    cudaFree(dz);
    cudaFree(dcount);
    return st;
}
