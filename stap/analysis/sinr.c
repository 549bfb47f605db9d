/* sinr.c: the SINR-loss table of a run (sinr.h): its summaries. Its files (the run's result
 * file it is computed from, the table's own) are stap/io/sinr_file.c; the computation
 * against a scene's truth is datasets/scene_sinr.c (the scene generator is a layer above
 * stap/). */
#include "sinr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>


void stap_sinr_free(stap_sinr_result *r)
{
    if (!r) return;
    free(r->doppler);
    free(r->optimum_loss);
    free(r->algorithm_loss);
    free(r->rho);
    free(r->adaptive_loss);
    r->doppler = r->optimum_loss = r->algorithm_loss = r->rho = r->adaptive_loss = NULL;
}

double stap_sinr_rho_mean(const stap_sinr_result *r, int d, int b)
{
    double s = 0;
    for (int g = 0; g < r->S; g++) s += r->rho[((size_t)d * r->S + g) * r->B + b];
    return s / r->S;
}

double stap_sinr_adaptive_mean(const stap_sinr_result *r, int d, int b)
{
    double s = 0;
    for (int g = 0; g < r->S; g++) s += r->adaptive_loss[((size_t)d * r->S + g) * r->B + b];
    return s / r->S;
}

unsigned stap_sinr_traits(const stap_sinr_result *r)
{
    stap_config c = {0};
    if (stap_algorithm_of_label(r->algorithm, &c.algorithm, NULL)) return 0;
    return stap_algorithm_traits(&c);
}

int stap_sinr_is_subcpi(const stap_sinr_result *r)
{
    return (stap_sinr_traits(r) & STAP_TRAIT_SUBCPI) != 0;
}
