/* perfect.c: PERFECT STAP sizes, their pipeline configuration and the suite's SNR metric (its
 * files are read and written by stap/io/perfect_io.c). */
#include "perfect.h"

#include <math.h>
#include <string.h>
#include <strings.h>

static const perfect_dims dims[PERFECT_SIZE_COUNT] = {
    {"small", 4, 512, 32, 128, 256, 3, 16},
    {"medium", 6, 1024, 64, 128, 256, 3, 16},
    {"large", 8, 4096, 64, 128, 256, 3, 16},
};

int stap_perfect_size_parse(const char *name, perfect_size *out, stap_error *err)
{
    for (int i = 0; i < PERFECT_SIZE_COUNT; i++)
        if (name && !strcasecmp(name, dims[i].name)) {
            *out = (perfect_size)i;
            return STAP_OK;
        }
    return stap_fail(err, STAP_EINVAL, "unknown PERFECT size '%s' (expected small, medium or large)",
                     name ? name : "");
}

const perfect_dims *stap_perfect_get_dims(perfect_size s) { return &dims[s]; }

void stap_perfect_config(perfect_size s, stap_config *cfg)
{
    const perfect_dims *d = &dims[s];
    stap_config_defaults(cfg);
    cfg->channels = d->channels;
    cfg->pulses = d->pulses;
    cfg->range_gates = d->range_cells;
    cfg->doppler_bins = d->doppler_bins;
    cfg->doppler_order = d->doppler_order;
    cfg->segments = d->range_cells / d->training_block;
    cfg->training = d->training_block;
    cfg->beams = d->steering;
    cfg->loading = 0;
    cfg->window = STAP_WINDOW_NONE;
}

double stap_perfect_snr_db(const stap_cf32 *ref, const stap_cf32 *out, size_t n)
{
    double sig = 0, noise = 0;
    for (size_t i = 0; i < n; i++) {
        double dr = (double)crealf(ref[i]) - crealf(out[i]);
        double di = (double)cimagf(ref[i]) - cimagf(out[i]);
        sig += (double)crealf(ref[i]) * crealf(ref[i]) + (double)cimagf(ref[i]) * cimagf(ref[i]);
        noise += dr * dr + di * di;
    }
    if (noise != noise || sig != sig) return -INFINITY;
    return noise == 0 ? INFINITY : 10.0 * log10(sig / noise);
}
