/* cq_phases.cu: where the GPU CholeskyQR2 kernel's time goes (issue 47). Builds
 * kernels/cholqr.cu and cholqr1.cu with RTK_CQ_STAMPS (thread 0 of each block writes clock64() after each
 * phase's barrier) and prints, per shape, the median over blocks and runs of each phase's
 * cycles, and the kernel's time by CUDA events (median of the runs, the guard's Householder
 * not included). Any -DRTK_CQ_... switch of cholqr.cu can be given to build a variant.
 * CQ_PASSES=1 in the environment times the one-pass cholqr kernel (cholqr1_kernel: its
 * stamps 0-4: load and Gram, the slices' sums, the Cholesky, the guard and R) instead; built
 * with -DRTK_CQ1_ENVSEL, RTK_CQ1=<PAD><G3><CH> in the environment picks its variant
 * (kernels/cholqr1.cu: 000 the four-product Gram and the unblocked Cholesky, 011 the default).
 * build: tests/experiments/build_cq_phases.sh [BUILD_DIR] [NAME] [NVCC FLAGS...]
 * usage: [CQ_PASSES=1] cq_phases [MxNxBATCH ...]   (default 240x66x128 192x96x128 80x16x384) */
#define RTK_CQ_STAMPS 1
#include "../../kernels/cholqr.cu"
#include "../../kernels/cholqr1.cu"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                       \
    do {                                                                                            \
        cudaError_t e_ = (x);                                                                       \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));            \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n ? (n & 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : 0.0;
}

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static double urand()
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((rng >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

#ifdef RTK_CQ1_ENVSEL
/* kernels/cholqr1.cu's experiment hook: RTK_CQ1=<PAD><G3><CH> picks the variant */
int cq1_variant(int dflt)
{
    const char *sv = getenv("RTK_CQ1");
    return sv ? atoi(sv) : dflt;
}
#endif

int main(int argc, char **argv)
{
    std::vector<const char *> shapes;
    for (int i = 1; i < argc; i++) shapes.push_back(argv[i]);
    if (shapes.empty()) shapes = {"240x66x128", "192x96x128", "80x16x384"};
    int clk_khz = 0;
    CK(cudaDeviceGetAttribute(&clk_khz, cudaDevAttrClockRate, 0));
    static const char *names2[] = {"load T", "G1", "chol1", "Q1", "G2", "chol2", "ratio", "R=R2R1"};
    static const char *names1[] = {"T, Gram", "G sums", "chol", "guard+R"};
    const int passes = getenv("CQ_PASSES") && atoi(getenv("CQ_PASSES")) == 1 ? 1 : 2;
    const int nph = passes == 1 ? 4 : 8; /* phases; stamp nph is the end (0: the guard's matrix) */
    const char *const *names = passes == 1 ? names1 : names2;
    const int reps = 20, sets = 3;
    printf("cq_phases: passes %d, RTK_CQ_NB %d, clock attribute %d MHz, %d runs over %d input sets\n", passes, CQ_NB,
           clk_khz / 1000, reps, sets);
    for (const char *sh : shapes) {
        int m, n, batch;
        if (sscanf(sh, "%dx%dx%d", &m, &n, &batch) != 3) return 2;
        const size_t per = (size_t)m * n, tot = per * batch * sets;
        std::vector<float2> h(tot);
        for (size_t i = 0; i < tot; i++) { /* complex normal */
            const double r = sqrt(-2.0 * log(urand())), a = 6.283185307179586 * urand();
            h[i] = make_float2((float)(r * cos(a)), (float)(r * sin(a)));
        }
        float2 *dsrc, *dA;
        int *dfail;
        long long *dst;
        CK(cudaMalloc(&dsrc, tot * sizeof(float2)));
        CK(cudaMalloc(&dA, per * batch * sizeof(float2)));
        CK(cudaMalloc(&dfail, (batch + 1) * sizeof(int)));
        CK(cudaMalloc(&dst, (size_t)batch * CQ_NSTAMP * sizeof(long long)));
        CK(cudaMemcpyToSymbol(cq_stamps, &dst, sizeof(dst)));
        CK(cudaMemcpy(dsrc, h.data(), tot * sizeof(float2), cudaMemcpyHostToDevice));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        std::vector<double> ph[CQ_NSTAMP], tus, fails;
        std::vector<long long> st((size_t)batch * CQ_NSTAMP);
        for (int r = -3; r < reps; r++) {
            CK(cudaMemcpy(dA, dsrc + per * batch * ((r + 3) % sets), per * batch * sizeof(float2),
                          cudaMemcpyDeviceToDevice));
            CK(cudaMemset(dfail, 0, sizeof(int)));
            CK(cudaMemset(dst, 0, (size_t)batch * CQ_NSTAMP * sizeof(long long)));
            CK(cudaEventRecord(e0));
            CK(rtk_cholqr2_launch(m, n, batch, dA, m, (long long)per, passes, 1e-6f, dfail, nullptr) == 0
                   ? cudaSuccess
                   : cudaErrorLaunchFailure);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaGetLastError());
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            int nf;
            CK(cudaMemcpy(&nf, dfail, sizeof(int), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(st.data(), dst, st.size() * sizeof(long long), cudaMemcpyDeviceToHost));
            if (r < 0) continue;
            tus.push_back(ms * 1e3);
            fails.push_back(nf);
            std::vector<double> v[CQ_NSTAMP];
            for (int b = 0; b < batch; b++) {
                const long long *s = &st[(size_t)b * CQ_NSTAMP];
                if (s[nph] == 0) continue; /* a guard's matrix: no R stamp */
                for (int p = 0; p < nph; p++) v[p].push_back((double)(s[p + 1] - s[p]));
                v[8].push_back((double)(s[nph] - s[0]));
                for (int p = 9; p < 15; p++) v[p].push_back((double)s[p]);
            }
            for (int p = 0; p < 15; p++) ph[p].push_back(median(v[p]));
        }
        double maxerr = 0.0; /* the last run's factors: |R^H R - A^H A|_F / |A^H A|_F, in double */
        {
            std::vector<float2> hr(per * batch);
            CK(cudaMemcpy(hr.data(), dA, per * batch * sizeof(float2), cudaMemcpyDeviceToHost));
            const size_t set = (size_t)((reps - 1 + 3) % sets) * per * batch;
            for (int b = 0; b < batch && b < 8; b++) {
                const float2 *A0 = &h[set + per * b], *R = &hr[per * b];
                double num = 0.0, den = 0.0;
                for (int j = 0; j < n; j++)
                    for (int i = 0; i <= j; i++) {
                        double gr = 0, gi = 0, rr = 0, ri = 0;
                        for (int t = 0; t < m; t++) { /* conj(A_ti) A_tj */
                            const float2 a = A0[(size_t)i * m + t], c = A0[(size_t)j * m + t];
                            gr += (double)a.x * c.x + (double)a.y * c.y;
                            gi += (double)a.x * c.y - (double)a.y * c.x;
                        }
                        for (int t = 0; t <= i; t++) { /* conj(R_ti) R_tj */
                            const float2 a = R[(size_t)i * m + t], c = R[(size_t)j * m + t];
                            rr += (double)a.x * c.x + (double)a.y * c.y;
                            ri += (double)a.x * c.y - (double)a.y * c.x;
                        }
                        num += (gr - rr) * (gr - rr) + (gi - ri) * (gi - ri);
                        den += gr * gr + gi * gi;
                    }
                maxerr = std::max(maxerr, sqrt(num / den));
            }
        }
        const double tot_c = median(ph[8]);
        printf("\n%dx%dx%d: kernel %.2f us (events, median of %d), fails %.0f, block total %.0f cycles "
               "(%.2f us at %d MHz)\n",
               m, n, batch, median(tus), reps, median(fails), tot_c, tot_c / (clk_khz * 1e-3), clk_khz / 1000);
        printf("  %-8s %10s %7s %8s\n", "phase", "cycles", "share", "us@clk");
        for (int p = 0; p < nph; p++) {
            const double c = median(ph[p]);
            printf("  %-8s %10.0f %6.1f%% %8.2f\n", names[p], c, 100.0 * c / tot_c, c / (clk_khz * 1e-3));
        }
        printf("  |R^H R - A^H A| / |A^H A| (8 matrices, largest): %.3g\n", maxerr);
        if (passes == 2) printf("  chol1 A/C/E %.0f / %.0f / %.0f cycles, chol2 A/C/E %.0f / %.0f / %.0f cycles\n", median(ph[9]),
               median(ph[10]), median(ph[11]), median(ph[12]), median(ph[13]), median(ph[14]));
        CK(cudaFree(dsrc));
        CK(cudaFree(dA));
        CK(cudaFree(dfail));
        CK(cudaFree(dst));
    }
    return 0;
}
