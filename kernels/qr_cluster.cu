/* qr_cluster.cu: the cluster instantiations of the register kernel (qr_variants.cuh,
 * RTK_CLUSTER_VARIANTS): one matrix over the CTAs of a thread-block cluster. */
#include "qr_reg.cuh"
#include "qr_variants.cuh"

RTK_CLUSTER_VARIANTS(RTK_DEFINE_CL)
