/* cpi_check: what `run` verifies about each CPI's results after the engine returns them —
 * the training's conditioning (a warning, an error under --strict) and, with --check,
 * that every output the run writes is finite. */
#ifndef CPI_CHECK_H
#define CPI_CHECK_H

#include "engine.h"

typedef struct cpi_checks {
    const char *input;    /* named in messages                                    */
    int strict;           /* ill-conditioned training is an error                 */
    int finite;           /* --check: weights, output and detections finite       */
    int recording;        /* name the CPI in messages                             */
    long long ill_cpis;   /* CPIs with ill-conditioned training so far            */
    float worst_ratio;    /* the smallest diagonal ratio seen                     */
    long long checked;    /* CPIs checked                                         */
    /* how a result's CPI (its submit number) is named in messages: the input's CPI (a
     * recording's reader, an MPI rank's share), or NULL: as it is */
    long long (*name_cpi)(const void *user, long long cpi);
    const void *name_user;
} cpi_checks;

void cpi_checks_init(cpi_checks *c, const char *input, int strict, int finite, int recording);
/* Check one collected CPI of engine e; prints the first conditioning warning; returns
 * STAP_ENUMERIC (message in err) for a failed check under strict/finite. */
int cpi_check(cpi_checks *c, const stap_engine *e, const stap_cpi_result *r, stap_error *err);
/* The closing line after many CPIs (only when more than one was ill-conditioned). */
void cpi_checks_report(const cpi_checks *c);

#endif
