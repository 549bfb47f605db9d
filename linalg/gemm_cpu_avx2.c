/* gemm_cpu_avx2.c: gemm_cpu.c compiled a second time for x86-64 CPUs with AVX2 and FMA —
 * CMakeLists.txt gives this file alone -mavx2 -mfma, and builds it on x86-64 only;
 * stap_la_cgemm chooses this copy at run time (stap_la_cpu_use_avx2). */
#define LA_CPU_AVX2_COPY 1
#include "gemm_cpu.c"
