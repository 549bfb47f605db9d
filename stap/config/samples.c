/* samples: how a cube's samples are stored (stap_sample_format, stap.h), and their
 * conversion to complex64 on the host — the same arithmetic as the GPU's first kernel
 * (kernels/pipeline_doppler.cu, sample_of) and the readers' (stap/io/iqform.c), so that a cube
 * gives the same samples bit for bit whichever converts it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sample_order.h"
#include "stap.h"

size_t stap_sample_bytes(const stap_sample_format *f)
{
    switch (f->type) {
    case STAP_SAMPLES_CF32: return 8;
    case STAP_SAMPLES_CI8: return 2;
    case STAP_SAMPLES_CI16: return 4;
    case STAP_SAMPLES_CI32: return 8;
    }
    return 0;
}

static int scaled(const stap_sample_format *f) { return f->scale != 0.0 && f->scale != 1.0; }

static int order_of(const stap_sample_format *f, int axis[3]) { return stap_sample_order(&f->order, axis); }

int stap_sample_format_is_native(const stap_sample_format *f)
{
    int axis[3];
    return f->type == STAP_SAMPLES_CF32 && order_of(f, axis) == 0 && axis[0] == STAP_AXIS_CHANNEL &&
           axis[1] == STAP_AXIS_PULSE;
}

int stap_sample_format_validate(const stap_sample_format *f, stap_error *err)
{
    if (!f) return stap_fail(err, STAP_EINVAL, "no sample format");
    if (!stap_sample_bytes(f))
        return stap_fail(err, STAP_EINVAL, "sample type %d is none of complex64, int8, int16 "
                         "and int32 pairs", (int)f->type);
    if (f->type == STAP_SAMPLES_CF32 && (f->big_endian || scaled(f)))
        return stap_fail(err, STAP_EINVAL, "complex64 samples are taken in the machine's byte "
                         "order and unscaled (a reader converts other float forms)");
    if (!isfinite(f->scale) || f->scale < 0)
        return stap_fail(err, STAP_EINVAL, "sample scale %g must be a finite number > 0 (0: none)",
                         f->scale);
    int axis[3];
    if (order_of(f, axis))
        return stap_fail(err, STAP_EINVAL, "the stored axis order (%d, %d, %d) is not channel, "
                         "pulse and range each once", f->order.axis[0], f->order.axis[1],
                         f->order.axis[2]);
    return STAP_OK;
}

void stap_sample_format_describe(const stap_sample_format *f, char *buf, size_t len)
{
    static const char *const names[] = {"complex64", "int8 (i, q)", "int16 (i, q)", "int32 (i, q)"};
    const char *name = stap_sample_bytes(f) ? names[f->type] : "unknown";
    int n = snprintf(buf, len, "%s%s", name, f->big_endian ? ", big-endian" : "");
    if (scaled(f) && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ", scale %.9g", f->scale);
    int axis[3];
    if (!order_of(f, axis) && !(axis[0] == STAP_AXIS_CHANNEL && axis[1] == STAP_AXIS_PULSE) &&
        n >= 0 && (size_t)n < len) {
        static const char *const ax[] = {"channel", "pulse", "range"};
        snprintf(buf + n, len - (size_t)n, ", stored (%s, %s, %s)", ax[axis[0]], ax[axis[1]], ax[axis[2]]);
    }
}

/* the machine's byte order against the stored one */
static int swap_needed(const stap_sample_format *f)
{
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return (first == 0) != (f->big_endian != 0);
}

#define CONVERT(T, SWAP)                                                                   \
    do {                                                                                   \
        const T *x = src;                                                                  \
        float *y = (float *)dst;                                                           \
        const int sw = swap_needed(f), sc = scaled(f);                                     \
        const double s = f->scale;                                                         \
        for (size_t i = 0; i < 2 * n; i++) {                                               \
            T v = x[i];                                                                    \
            if (sw) v = (T)SWAP(v);                                                        \
            y[i] = sc ? (float)((double)v * s) : (float)v;                                 \
        }                                                                                  \
    } while (0)
#define SWAP8(v) (v)
#define SWAP16(v) ((int16_t)__builtin_bswap16((uint16_t)(v)))
#define SWAP32(v) ((int32_t)__builtin_bswap32((uint32_t)(v)))

void stap_samples_to_cf32(const stap_sample_format *f, const void *src, size_t n, stap_cf32 *dst)
{
    switch (f->type) {
    case STAP_SAMPLES_CF32: memmove(dst, src, n * sizeof(stap_cf32)); break;
    case STAP_SAMPLES_CI8: CONVERT(int8_t, SWAP8); break;
    case STAP_SAMPLES_CI16: CONVERT(int16_t, SWAP16); break;
    case STAP_SAMPLES_CI32: CONVERT(int32_t, SWAP32); break;
    }
}

#define QUANTIZE(T, LO, HI, SWAP)                                                          \
    do {                                                                                   \
        T *y = dst;                                                                        \
        const int sw = swap_needed(f);                                                     \
        for (size_t i = 0; i < 2 * n; i++) {                                               \
            double v = nearbyint((double)x[i] / s);                                        \
            if (!(v >= LO)) v = LO, clamped++; /* NaN too */                               \
            else if (v > HI) v = HI, clamped++;                                            \
            T t = (T)v;                                                                    \
            y[i] = sw ? (T)SWAP(t) : t;                                                    \
        }                                                                                  \
    } while (0)

size_t stap_samples_from_cf32(const stap_sample_format *f, const stap_cf32 *src, size_t n, void *dst)
{
    const float *x = (const float *)src;
    const double s = f->scale != 0.0 ? f->scale : 1.0;
    size_t clamped = 0;
    switch (f->type) {
    case STAP_SAMPLES_CF32: memmove(dst, src, n * sizeof(stap_cf32)); break;
    case STAP_SAMPLES_CI8: QUANTIZE(int8_t, -128.0, 127.0, SWAP8); break;
    case STAP_SAMPLES_CI16: QUANTIZE(int16_t, -32768.0, 32767.0, SWAP16); break;
    case STAP_SAMPLES_CI32: QUANTIZE(int32_t, -2147483648.0, 2147483647.0, SWAP32); break;
    }
    return clamped;
}

int stap_sample_type_parse(const char *s, stap_sample_format *f, stap_error *err)
{
    static const char *const names[] = {"cf32", "ci8", "ci16", "ci32"};
    for (int k = 0; k < 4; k++)
        if (s && !strcasecmp(s, names[k])) {
            *f = (stap_sample_format){.type = (stap_sample_type)k, .scale = 1.0};
            return STAP_OK;
        }
    return stap_fail(err, STAP_EINVAL, "sample type '%s' is none of cf32, ci8, ci16 and ci32",
                     s ? s : "");
}

void stap_cube_to_cf32(const stap_sample_format *f, const void *src, int channels, int pulses,
                       int range_gates, stap_cf32 *dst)
{
    int axis[3];
    const size_t n = (size_t)channels * pulses * range_gates;
    if (order_of(f, axis) || (axis[0] == STAP_AXIS_CHANNEL && axis[1] == STAP_AXIS_PULSE)) {
        stap_samples_to_cf32(f, src, n, dst);
        return;
    }
    /* the stride of each logical axis in the stored cube, then one sample at a time */
    const size_t ext[3] = {(size_t)channels, (size_t)pulses, (size_t)range_gates};
    long long stride[3];
    stap_sample_strides(axis, channels, pulses, range_gates, stride);
    const size_t bytes = stap_sample_bytes(f);
    for (size_t c = 0; c < ext[0]; c++)
        for (size_t p = 0; p < ext[1]; p++)
            for (size_t r = 0; r < ext[2]; r++)
                stap_samples_to_cf32(f, (const unsigned char *)src +
                                            bytes * (c * stride[0] + p * stride[1] + r * stride[2]),
                                     1, dst + (c * ext[1] + p) * ext[2] + r);
}
