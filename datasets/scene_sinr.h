/* scene_sinr: the SINR loss of a run's adaptive weights against the optimum from a
 * generated scene's true covariance — the table of stap/analysis/sinr.h (its model, symbols and
 * files) computed from the truth of datasets/scene.h. */
#ifndef SCENE_SINR_H
#define SCENE_SINR_H

#include "scene.h"
#include "sinr.h"

#include "rt_hidden.h"
#ifdef __cplusplus
extern "C" {
#endif

/* A run's configuration (with B steering vectors of length C Q) validated, its defaults
 * resolved, into *cfg, and checked against the scene: the same C, P, R and element
 * spacing. STAP_OK, or STAP_EINVAL saying what is wrong or differs. */
RT_INTERNAL int stap_scene_run_config(const scene_truth *t, const stap_config *run, int B, stap_config *cfg,
                     stap_error *err);

/* Compute the table for beam `beam` (0..B-1) or all beams (-1). t: the scene's truth;
 * cfg: the run's configuration (must match the scene's C and P); steering B x N;
 * weights D x S x B x N. */
RT_INTERNAL int stap_sinr_compute(const scene_truth *t, const stap_config *cfg, const stap_cf32 *steering,
                      int B, const stap_cf32 *weights, int beam, stap_sinr_result *res,
                      stap_error *err);

#ifdef __cplusplus
}
#endif

#endif
