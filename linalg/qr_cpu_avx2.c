/* qr_cpu_avx2.c: the cpu backend's kernels (qr_cpu.c) compiled a second time for x86-64
 * CPUs with AVX2 and FMA — CMakeLists.txt gives this file alone -mavx2 -mfma, and builds it
 * on x86-64 only. stap_la_cpu_qr and stap_la_cpu_weights choose this copy at run time. */
#define LA_CPU_AVX2_COPY 1
#include "qr_cpu.c"
