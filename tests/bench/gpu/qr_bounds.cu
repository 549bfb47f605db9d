/* qr_bounds: what limits the register QR kernels (issue 11; docs/kernels/journal.md "What limits
 * each target"). For the kernel the dispatcher runs at each target size it times, in one
 * process, builds of the same kernel (qr_reg.cuh's FLOW bits):
 *   full    the kernel as dispatched (QR alone; FLOW & 2048, the 240x66 row's solver warp,
 *           changes its fused kernels only);
 *   chain   FLOW | 64: the owner steps and their waits only, no trailing update: the time
 *           of the dependent reflector chain, the floor of this algorithm at this layout;
 *   update  FLOW | 128: the trailing update only, no owner step and no wait: every warp
 *           applies n - 1 fixed reflectors, the work that a faster update (e.g. tensor
 *           cores, issue 11 item 3) could shrink;
 *   upd kb2, kb4  (FLOW | 128 | 256, | 512; dataflow rows without deferral or clusters) the
 *           same update applied KB reflectors a pass (compact WY), as a blocked update would
 *           run it: how much of the update's time is latency that blocking hides.
 * chain and update are bounds, not factorizations. Each time is the CUDA-event median of
 * REPEAT launches, the input restored (device-to-device, outside the timed interval) before
 * each; the registers and local memory of every build are printed beside it (a bound build
 * that spills would not bound anything). --once launches each build once (for ncu). Not a
 * CTest test (it needs a GPU and measures): built by tests/bench/gpu/build_bounds.sh, run by
 * tests/bench/device.sh qr-bounds.
 * --fused times each fused QR + 16 beams kernel without and with the solver warp (FLOW &
 * 2048), with block 0's split (QR | weights), and compares their weights (exit 1 past 1e-3
 * relative, or on a flagged matrix).
 * usage: qr_bounds [--repeat N] [--once] [--fused] */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "rtk_check.h"
#include "qr_reg.cuh"


typedef cudaError_t (*launch_fn)(const rtk::QrArgs &, cudaStream_t);
typedef cudaError_t (*res_fn)(rtk_qr_resources *, int);

template <int TR, int TC, int RPT, int CPT, bool VREG, int FLOW>
cudaError_t launch(const rtk::QrArgs &a, cudaStream_t s)
{
    return rtk::qr_reg_launch<TR, TC, RPT, CPT, 1, VREG, false, false, 1, FLOW>(a, s);
}
template <int TR, int TC, int RPT, int CPT, bool VREG, int FLOW>
cudaError_t resources(rtk_qr_resources *r, int m)
{
    return rtk::qr_reg_resources<TR, TC, RPT, CPT, 1, VREG, false, false, 1, FLOW>(r, m);
}

template <int TR, int TC, int RPT, int CPT, bool VREG, int FLOW>
cudaError_t launch_w(const rtk::QrArgs &a, cudaStream_t s)
{
    return rtk::qr_reg_launch<TR, TC, RPT, CPT, 1, VREG, true, false, 1, FLOW>(a, s);
}

struct Build {
    launch_fn run;
    res_fn res;
};
enum { NB = 5 };
struct Case {
    const char *variant;
    int m, n, batch;
    Build b[NB]; /* full, chain, update, update KB = 2, update KB = 4 (none: not built) */
};

#define BUILD(TR, TC, RPT, CPT, VREG, FLOW)                                                     \
    {launch<TR, TC, RPT, CPT, VREG, FLOW>, resources<TR, TC, RPT, CPT, VREG, FLOW>}
#define BUILDS3(TR, TC, RPT, CPT, VREG, FLOW)                                                   \
    BUILD(TR, TC, RPT, CPT, VREG, FLOW), BUILD(TR, TC, RPT, CPT, VREG, FLOW | 64),              \
        BUILD(TR, TC, RPT, CPT, VREG, FLOW | 128)
/* the blocked update bounds: dataflow rows without deferral or clusters */
#define BUILDS(TR, TC, RPT, CPT, VREG, FLOW)                                                    \
    {BUILDS3(TR, TC, RPT, CPT, VREG, FLOW), BUILD(TR, TC, RPT, CPT, VREG, FLOW | 128 | 256),    \
     BUILD(TR, TC, RPT, CPT, VREG, FLOW | 128 | 512)}
#define BUILDS_NOKB(TR, TC, RPT, CPT, VREG, FLOW) {BUILDS3(TR, TC, RPT, CPT, VREG, FLOW), {}, {}}

/* the issue's target sizes, with the rows the dispatcher picks there (bench-qr --model) */
static const Case cases[] = {
    {"flw16x22_15x3", 240, 66, 128, BUILDS(16, 22, 15, 3, true, 17)},
    {"flw16x24_12x4", 192, 96, 128, BUILDS(16, 24, 12, 4, true, 17)},
    {"flw16x8_5x2", 80, 16, 384, BUILDS(16, 8, 5, 2, true, 17)},
    {"flw16x4_5x4", 80, 16, 384, BUILDS(16, 4, 5, 4, true, 17)},
    {"flw16x8_5x2", 80, 16, 3840, BUILDS(16, 8, 5, 2, true, 17)},
    {"flw16x22_15x3", 240, 66, 1280, BUILDS(16, 22, 15, 3, true, 17)},
    {"flw16x22_20x3", 306, 66, 128, BUILDS_NOKB(16, 22, 20, 3, false, 19)},
    {"clp16x32_8x4", 512, 128, 32, BUILDS_NOKB(16, 32, 8, 4, true, 49)},
};

/* --fused: QR + 16 beams, each fused kernel without and with the solver warp (FLOW & 2048:
 * the first chunk's forward substitution during the factorization; docs/kernels/journal.md "A solver
 * warp"); the 240x66 row is dispatched with it, the others without */
struct FusedCase {
    const char *variant;
    int m, n, batch;
    launch_fn run[2];
};
#define FUSED(TR, TC, RPT, CPT, VREG, FLOW)                                                     \
    {launch_w<TR, TC, RPT, CPT, VREG, (FLOW) & ~2048>, launch_w<TR, TC, RPT, CPT, VREG, (FLOW) | 2048>}
static const FusedCase fused_cases[] = {
    {"flw16x22_15x3", 240, 66, 128, FUSED(16, 22, 15, 3, true, 17)},
    {"flw16x22_15x3", 240, 66, 1280, FUSED(16, 22, 15, 3, true, 17)},
    {"flw16x22_15x3", 200, 50, 128, FUSED(16, 22, 15, 3, true, 17)},
    {"flw16x22_20x3", 306, 66, 128, FUSED(16, 22, 20, 3, false, 19)},
    {"flw16x8_8x4", 128, 32, 512, FUSED(16, 8, 8, 4, true, 17)},
    {"flw16x8_4x3", 64, 24, 4096, FUSED(16, 8, 4, 3, true, 17)},
};

static double median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    const size_t k = v.size();
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

/* The CUDA-event median of `repeat` launches (after two warm-ups), microseconds; reset()
 * restores the inputs before each launch, outside the timed interval. */
template <class Reset>
static double time_us(launch_fn run, const rtk::QrArgs &args, int repeat, cudaStream_t st, cudaEvent_t e0,
                      cudaEvent_t e1, Reset reset)
{
    std::vector<float> ms;
    for (int it = -2; it < repeat; it++) {
        reset();
        RTK_CU_EXIT(cudaEventRecord(e0, st));
        RTK_CU_EXIT(run(args, st));
        RTK_CU_EXIT(cudaEventRecord(e1, st));
        RTK_CU_EXIT(cudaEventSynchronize(e1));
        float x;
        RTK_CU_EXIT(cudaEventElapsedTime(&x, e0, e1));
        if (it >= 0) ms.push_back(x);
    }
    return 1e3 * median(ms);
}

static float2 *upload(const std::vector<float2> &h)
{
    float2 *d;
    RTK_CU_EXIT(cudaMalloc(&d, h.size() * sizeof(float2)));
    RTK_CU_EXIT(cudaMemcpy(d, h.data(), h.size() * sizeof(float2), cudaMemcpyHostToDevice));
    return d;
}

static void random_fill(std::vector<float2> &h, unsigned &seed)
{
    for (auto &x : h) {
        seed = seed * 1664525u + 1013904223u;
        const float re = (float)(seed >> 8) / 16777216.f - 0.5f;
        seed = seed * 1664525u + 1013904223u;
        x = make_float2(re, (float)(seed >> 8) / 16777216.f - 0.5f);
    }
}

static int run_fused(int repeat, cudaStream_t st, cudaEvent_t e0, cudaEvent_t e1)
{
    const int nbeams = 16;
    unsigned seed = 20261127u;
    int bad = 0;
    printf("\nfused QR + %d beams, us: without and with the solver warp (FLOW | 2048)\n", nbeams);
    printf("%-9s %-6s %-14s %9s %9s %7s  max|dW|/max|W|   block 0: QR + weights, without / with\n", "size",
           "batch", "variant", "without", "with", "gain");
    for (const FusedCase &c : fused_cases) {
        const size_t elems = (size_t)c.m * c.n * c.batch, welems = (size_t)c.batch * nbeams * c.n;
        std::vector<float2> h(elems), hv((size_t)nbeams * c.n), w[2];
        random_fill(h, seed);
        random_fill(hv, seed);
        float2 *A0 = upload(h), *A = upload(h), *V = upload(hv), *W;
        RTK_CU_EXIT(cudaMalloc(&W, welems * sizeof(float2)));
        rtk_factor_flags *flags;
        RTK_CU_EXIT(cudaMalloc(&flags, sizeof *flags));
        unsigned long long *phase; /* block 0: start, factorization done, weights done (ns) */
        RTK_CU_EXIT(cudaMalloc(&phase, 3 * sizeof *phase));
        rtk::QrArgs args{};
        args.A = A;
        args.stride = (long long)c.m * c.n;
        args.lda = c.m;
        args.m = c.m;
        args.n = c.n;
        args.batch = c.batch;
        args.nbeams = nbeams;
        args.V = V;
        args.W = W;
        args.flags = flags;
        args.phase = phase;
        double t[2], ph[2][2];
        for (int b = 0; b < 2; b++) {
            t[b] = time_us(c.run[b], args, repeat, st, e0, e1, [&] {
                RTK_CU_EXIT(cudaMemcpyAsync(A, A0, elems * sizeof(float2), cudaMemcpyDeviceToDevice, st));
                RTK_CU_EXIT(cudaMemsetAsync(flags, 0x7f, sizeof *flags, st));
                RTK_CU_EXIT(cudaMemsetAsync(W, 0, welems * sizeof(float2), st));
            });
            w[b].resize(welems);
            RTK_CU_EXIT(cudaMemcpy(w[b].data(), W, welems * sizeof(float2), cudaMemcpyDeviceToHost));
            rtk_factor_flags f;
            RTK_CU_EXIT(cudaMemcpy(&f, flags, sizeof f, cudaMemcpyDeviceToHost));
            unsigned long long hp[3];
            RTK_CU_EXIT(cudaMemcpy(hp, phase, sizeof hp, cudaMemcpyDeviceToHost));
            ph[b][0] = 1e-3 * (double)(hp[1] - hp[0]);
            ph[b][1] = 1e-3 * (double)(hp[2] - hp[1]);
            if (f.bad_item != RTK_NO_BAD) bad = 1;
        }
        double dmax = 0, wmax = 0;
        for (size_t i = 0; i < welems; i++) {
            const double d = hypot(w[1][i].x - w[0][i].x, w[1][i].y - w[0][i].y);
            dmax = d > dmax || d != d ? d : dmax;
            wmax = std::max(wmax, (double)hypotf(w[0][i].x, w[0][i].y));
        }
        const double rel = dmax / wmax;
        if (!(rel < 1e-3)) bad = 1;
        char size[32];
        snprintf(size, sizeof size, "%dx%d", c.m, c.n);
        printf("%-9s %-6d %-14s %9.1f %9.1f %6.1f%%  %.1e%s        %.1f + %.1f / %.1f + %.1f\n", size,
               c.batch, c.variant, t[0], t[1], 100 * (t[0] - t[1]) / t[0], rel, rel < 1e-3 ? "" : "  MISMATCH",
               ph[0][0], ph[0][1], ph[1][0], ph[1][1]);
        fflush(stdout);
        RTK_CU_EXIT(cudaFree(A));
        RTK_CU_EXIT(cudaFree(A0));
        RTK_CU_EXIT(cudaFree(V));
        RTK_CU_EXIT(cudaFree(W));
        RTK_CU_EXIT(cudaFree(flags));
        RTK_CU_EXIT(cudaFree(phase));
    }
    return bad;
}


int main(int argc, char **argv)
{
    int repeat = 20, once = 0, fused = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--once"))
            once = 1;
        else if (!strcmp(argv[i], "--fused"))
            fused = 1;
        else {
            fprintf(stderr, "usage: qr_bounds [--repeat N] [--once] [--fused]\n");
            return 2;
        }
    }
    if (repeat < 1) repeat = 1;
    cudaDeviceProp prop;
    RTK_CU_EXIT(cudaGetDeviceProperties(&prop, 0));
    printf("qr_bounds: %s, %d SMs; CUDA-event median of %d launches, us\n", prop.name,
           prop.multiProcessorCount, repeat);
    cudaStream_t st;
    RTK_CU_EXIT(cudaStreamCreate(&st));
    cudaEvent_t e0, e1;
    RTK_CU_EXIT(cudaEventCreate(&e0));
    RTK_CU_EXIT(cudaEventCreate(&e1));
    if (fused) return run_fused(repeat, st, e0, e1);
    printf("%-9s %-6s %-14s %9s %9s %9s %7s %7s %9s %9s   regs/local bytes of each build\n", "size",
           "batch", "variant", "full", "chain", "update", "chain%", "upd%", "upd kb2", "upd kb4");
    unsigned seed = 20261126u;
    for (const Case &c : cases) {
        const size_t elems = (size_t)c.m * c.n * c.batch;
        std::vector<float2> h(elems);
        random_fill(h, seed);
        float2 *A0 = upload(h), *A = upload(h);
        rtk::QrArgs args{};
        args.A = A;
        args.stride = (long long)c.m * c.n;
        args.lda = c.m;
        args.m = c.m;
        args.n = c.n;
        args.batch = c.batch;
        double t[NB] = {0, 0, 0, 0, 0};
        rtk_qr_resources r[NB] = {};
        for (int b = 0; b < NB; b++) {
            if (!c.b[b].run) continue;
            RTK_CU_EXIT(c.b[b].res(&r[b], c.m));
            const auto restore = [&] {
                RTK_CU_EXIT(cudaMemcpyAsync(A, A0, elems * sizeof(float2), cudaMemcpyDeviceToDevice, st));
            };
            if (once) {
                restore();
                RTK_CU_EXIT(c.b[b].run(args, st));
                RTK_CU_EXIT(cudaStreamSynchronize(st));
            } else {
                t[b] = time_us(c.b[b].run, args, repeat, st, e0, e1, restore);
            }
        }
        RTK_CU_EXIT(cudaFree(A));
        RTK_CU_EXIT(cudaFree(A0));
        char size[32];
        snprintf(size, sizeof size, "%dx%d", c.m, c.n);
        if (once) {
            printf("%-9s %-6d %-14s every build launched once\n", size, c.batch, c.variant);
            continue;
        }
        printf("%-9s %-6d %-14s %9.1f %9.1f %9.1f %6.0f%% %6.0f%%", size, c.batch, c.variant, t[0],
               t[1], t[2], 100 * t[1] / t[0], 100 * t[2] / t[0]);
        for (int b = 3; b < NB; b++)
            if (c.b[b].run)
                printf(" %9.1f", t[b]);
            else
                printf(" %9s", "-");
        printf("  ");
        for (int b = 0; b < NB; b++)
            if (c.b[b].run) printf(" %d/%d", r[b].registers, r[b].local_bytes);
        printf("\n");
        fflush(stdout);
    }
    return 0;
}
