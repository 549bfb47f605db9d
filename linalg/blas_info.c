/* blas_info.c: which BLAS the lapack baseline runs on, with which kernels and threads, and
 * on which CPU — and whether OpenBLAS chose generic kernels for a CPU that can run better
 * ones (Debian's OpenBLAS 0.3.21 takes a virtualized Cooper Lake for Prescott: SSE3
 * kernels, about 3.5x slower; docs/benchmarks.md "Baselines at their real speed"). */
#include "linalg.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

extern char *openblas_get_corename(void);
extern char *openblas_get_config(void);
extern int openblas_get_num_threads(void);

/* OpenBLAS x86-64 cores whose kernels use AVX2 or AVX-512, compared without case
 * (OpenBLAS 0.3.21 names one "Cooperlake": an AVX-512 Zen 4 host gets it) */
static const char *const vector_cores[] = {"Haswell", "Zen", "SkylakeX", "CooperLake",
                                           "SapphireRapids", "Excavator"};

void stap_la_blas_query(stap_la_blas_info *bi)
{
    memset(bi, 0, sizeof *bi);
    snprintf(bi->library, sizeof bi->library, "%s", openblas_get_config());
    snprintf(bi->core, sizeof bi->core, "%s", openblas_get_corename());
    bi->threads = openblas_get_num_threads();
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10)) continue;
        const char *v = strchr(line, ':');
        if (v) snprintf(bi->cpu_model, sizeof bi->cpu_model, "%s", v + 2);
        bi->cpu_model[strcspn(bi->cpu_model, "\n")] = 0;
        break;
    }
    if (f) fclose(f);
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    snprintf(bi->cpu_features, sizeof bi->cpu_features, "%s%s", avx2 ? "avx2 fma" : "sse",
             avx512 ? " avx512f/bw/vl/dq" : "");
    int vector = 0;
    for (size_t i = 0; i < sizeof vector_cores / sizeof *vector_cores; i++)
        vector |= !strcasecmp(bi->core, vector_cores[i]);
    if (avx2 && !vector) bi->better_core = avx512 ? "SkylakeX" : "Haswell";
#else
    snprintf(bi->cpu_features, sizeof bi->cpu_features, "(not x86-64)");
#endif
}
