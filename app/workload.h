/* workload: the named CPI shapes that `stream` and `bench` run — the RT_STAP presets and
 * the PERFECT sizes — with a generator of distinct cubes for each. */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include "stap.h"

typedef struct workload {
    char name[32];         /* "hard", "perfect-large", ...                         */
    int perfect;           /* PERFECT size + 1, 0 for a preset                      */
    int preset;            /* stap_preset when perfect == 0                         */
    stap_config cfg;       /* backend AUTO, threads 0                               */
    stap_cf32 *steering;        /* nbeams x steering_len, or NULL for the default beams  */
    int nbeams;
    int steering_len;      /* the workload's N (PERFECT: channels x its Doppler order)  */
} workload;

/* "easy" | "medium" | "hard" | "perfect-small" | "perfect-medium" | "perfect-large" */
int workload_get(const char *name, workload *w, stap_error *err);
void workload_free(workload *w);
/* Cube number `index` (C x P x R): a preset's synthesized scene (noise, jammers, target)
 * with seed 20101 + index; a PERFECT size's uniform [0, 1e6) samples (the suite's
 * statistics). */
int workload_cube(const workload *w, int index, stap_cf32 *cube, stap_error *err);
size_t workload_cube_len(const workload *w);

#endif
