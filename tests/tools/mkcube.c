/* mkcube: schema-v1 cubes whose data (not format) is hostile, written with rtstap's own
 * writer, for the checks of `run` (cli_checks.sh). Shape 4 x 8 x 48 like mkinput's.
 *   rank1     every range cell holds the same snapshot: rank-1 training data, numerically
 *             singular factors (a warning, an error under --strict)
 *   overflow  complex-normal noise, plus samples near FLT_MAX in every pulse of range cell
 *             17 of channel 0 (outside the training cells of K = 24 of 48): finite input
 *             whose Doppler filter overflows, so the adaptive output there is not finite
 *   noise     complex-normal noise (the well-conditioned control)
 *   overflow-rec  a recording of 3 CPIs: noise, the overflow cube, noise — a run over it
 *             fails at CPI 1, after its result file was begun (cli_options.sh: -f keeps
 *             the old file)
 * usage: mkcube KIND OUT.h5 [SEED] */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5io.h"
#include "la_check.h"

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: mkcube rank1|overflow|noise|overflow-rec OUT.h5 [SEED]\n");
        return 2;
    }
    const int C = 4, P = 8, R = 48;
    uint64_t seed = argc == 4 ? strtoull(argv[3], NULL, 0) : 1;
    tc_rng rng;
    tc_rng_seed(&rng, seed);
    stap_input in;
    memset(&in, 0, sizeof in);
    in.channels = C;
    in.pulses = P;
    in.range_gates = R;
    in.iq = malloc(sizeof(stap_cf32) * C * P * R);
    if (!in.iq) return 1;
    for (int i = 0; i < C * P * R; i++)
        in.iq[i] = (float)(tc_normal(&rng) * 0.7071) + I * (float)(tc_normal(&rng) * 0.7071);
    if (!strcmp(argv[1], "rank1")) {
        for (int c = 0; c < C; c++)
            for (int p = 0; p < P; p++)
                for (int r = 1; r < R; r++)
                    in.iq[((size_t)c * P + p) * R + r] = in.iq[((size_t)c * P + p) * R];
    } else if (!strcmp(argv[1], "overflow-rec")) {
        stap_error err;
        stap_recording_writer *w = NULL;
        int st = stap_recording_create(&w, argv[2], &in, 3, NULL, &err);
        for (int cpi = 0; cpi < 3 && !st; cpi++) {
            for (int p = 0; p < P; p++) in.iq[(size_t)p * R + 17] = cpi == 1 ? 0.9f * FLT_MAX : 0.5f;
            st = stap_recording_write(w, cpi, in.iq, &err);
        }
        if (!st) st = stap_recording_finish(w, NULL, NULL, &err);
        else stap_recording_abort(w);
        free(in.iq);
        if (st) fprintf(stderr, "mkcube: %s\n", err.msg);
        return st ? 1 : 0;
    } else if (!strcmp(argv[1], "overflow")) {
        for (int p = 0; p < P; p++) in.iq[(size_t)p * R + 17] = 0.9f * FLT_MAX;
    } else if (strcmp(argv[1], "noise")) {
        fprintf(stderr, "mkcube: unknown kind '%s'\n", argv[1]);
        return 2;
    }
    stap_error err;
    if (stap_input_write(argv[2], &in, NULL, NULL, NULL, &err)) {
        fprintf(stderr, "mkcube: %s\n", err.msg);
        return 1;
    }
    free(in.iq);
    return 0;
}
