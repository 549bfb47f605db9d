/* sample_order: the stored axis order of a stap_sample_format (stap.h) — one reading of it
 * for the host's conversion (samples.c) and the engine's GPU kernels (engine_internal.h,
 * inline: the GPU library calls librtstap through its table only). Internal to stap/. */
#ifndef STAP_CONFIG_SAMPLE_ORDER_H
#define STAP_CONFIG_SAMPLE_ORDER_H

#include "stap.h"

/* axis[k]: the axis stored at position k; {0, 0, 0} is (channel, pulse, range). 0, or -1
 * when the order is not channel, pulse and range each once. */
static inline int stap_sample_order(const stap_layout *order, int axis[3])
{
    const unsigned char *a = order->axis;
    if (!a[0] && !a[1] && !a[2]) {
        axis[0] = STAP_AXIS_CHANNEL, axis[1] = STAP_AXIS_PULSE, axis[2] = STAP_AXIS_RANGE;
        return 0;
    }
    int seen = 0;
    for (int k = 0; k < 3; k++) {
        if (a[k] > STAP_AXIS_RANGE) return -1;
        seen |= 1 << a[k];
        axis[k] = a[k];
    }
    return seen == 7 ? 0 : -1;
}

/* The stride (in samples) of channel, pulse and range in a C x P x R cube stored in axis's
 * order; 1 when that is (channel, pulse, range) itself. */
static inline int stap_sample_strides(const int axis[3], long long C, long long P, long long R,
                                      long long st[3])
{
    const long long ext[3] = {C, P, R};
    st[axis[2]] = 1;
    st[axis[1]] = ext[axis[2]];
    st[axis[0]] = ext[axis[2]] * ext[axis[1]];
    return axis[0] == STAP_AXIS_CHANNEL && axis[1] == STAP_AXIS_PULSE;
}

#endif
