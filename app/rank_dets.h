/* rank_dets: a rtstap-mpi rank's detections between its run and rank 0's writing of them
 * (run_ranks.c, issue 43): held in memory up to a byte budget (and one CPI's more), the rest
 * written as they come to a temporary file beside the output, unlinked as soon as it is made
 * (nothing is left behind, whatever stops the rank), and read back in order at the end. */
#ifndef RANK_DETS_H
#define RANK_DETS_H

#include <stddef.h>

#include "cfar.h"
#include "rtstap/common.h"

typedef struct rank_dets {
    stap_detection *buf;     /* the latest, in memory                              */
    size_t n, cap, budget;   /* held, room, bytes held before they go to the file  */
    int fd;                  /* the spill file (already unlinked), or -1           */
    long long spilled, taken; /* detections in the file; handed out by take        */
    size_t most;             /* the most bytes held at once                        */
    char dir[4096];          /* where the file goes (the output's directory)       */
} rank_dets;

/* Nothing held yet; the file, if one is needed, beside `output`; budget in bytes (0: the
 * result writer's, STAP_RESULT_DETECTION_BYTES). */
void rank_dets_init(rank_dets *d, const char *output, size_t budget);
/* One CPI's detections, after the others. */
int rank_dets_add(rank_dets *d, const stap_detection *det, size_t n, stap_error *err);
/* The next n detections in the order they were added into out. */
int rank_dets_take(rank_dets *d, size_t n, stap_detection *out, stap_error *err);
void rank_dets_free(rank_dets *d);

#endif
