/* vrt_internal.h: the big-endian words of the VITA-49 codec (vrt.c, vrt_assemble.c). */
#ifndef VRT_INTERNAL_H
#define VRT_INTERNAL_H

#include <stdint.h>

static inline uint32_t vrt_get32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline void vrt_put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* a payload word's sample: I in the high half, Q in the low half */
static inline void vrt_get_iq(const unsigned char *p, int16_t *iq)
{
    iq[0] = (int16_t)(uint16_t)((unsigned)p[0] << 8 | p[1]);
    iq[1] = (int16_t)(uint16_t)((unsigned)p[2] << 8 | p[3]);
}

#endif
