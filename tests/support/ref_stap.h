/* ref_stap: a straightforward double-precision implementation of the processing contract
 * (docs/processing.md), independent of stap/ and linalg/: naive DFT, Householder QR in double, two
 * triangular solves, adaptive filtering. Tests compare the product against it in dB. */
#ifndef REF_STAP_H
#define REF_STAP_H

#include "stap.h"

/* cfg: validated configuration (doppler_bins resolved). win: P coefficients (double).
 * V: B x N steering. cube: C x P x R (float, as the product reads it).
 * With cfg->training_window sliding, S = R / block and block s trains on the K cells
 * nearest to it beyond `guard` cells (found independently of stap_training_cells).
 * With cfg->algorithm JDL, beam b adapts Na*Q beamspace DOF through its own transform
 * (built here from docs/processing.md's definition, independently of stap_jdl_beams).
 * With cfg->algorithm pre-Doppler or ADPCA (Q = pulses of a sub-CPI), win holds the
 * P - Q + 1 coefficients of the Doppler filter after adaptation; the per-bin steering and
 * the staggered snapshots are built here from docs/processing.md's definition.
 * Outputs (double complex): W (D x S x B x N), Y (B x D x R). Returns 0, or -1 when a
 * factor is singular. */
int ref_stap(const stap_config *cfg, const double *win, int B, const stap_cf32 *V,
             const stap_cf32 *cube, stap_cf64 *W, stap_cf64 *Y);

/* SNR in dB of `out` against `ref`: 10 log10(sum |ref|^2 / sum |ref - out|^2). */
double ref_snr_db(const stap_cf64 *ref, const stap_cf32 *out, size_t n);

#endif
