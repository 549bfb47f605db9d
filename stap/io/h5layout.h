/* h5layout: the axis order of /data/iq (schema v1.1, docs/file-format.md) — reading a
 * dataset's axis labels (HDF5 dimension-scale labels, or a `dims` attribute), resolving
 * them against the caller's override, writing the labels, and transposing a cube from its
 * stored order into (channel, pulse, range). Internal to stap/io/; the public part
 * (stap_layout, stap_read_options, stap_layout_report) is in h5io.h. */
#ifndef H5LAYOUT_H
#define H5LAYOUT_H

#include <hdf5.h>

#include "h5io.h"

#include "rt_hidden.h"
/* Determine how the cube axes of `dset` (rank 3, or 4 with a leading cpi axis; one more with
 * iq = 1: an interleaved cube's last axis of length 2) are stored, from its labels and opts
 * (may be NULL), into *rep. STAP_EFORMAT naming path, dname and the labels when they are
 * unknown, repeated, too few or too many, misplace cpi or iq, or disagree with each other —
 * unless opts overrides them (rep->labels_differ says so then). */
RT_INTERNAL int stap_h5layout_resolve(hid_t dset, int rank, int iq, const char *path, const char *dname,
                     const stap_read_options *opts, stap_layout_report *rep, stap_error *err);

/* The (channel, pulse, range) extents of a cube whose stored extents are sd[0..2]. */
RT_INTERNAL void stap_h5layout_logical_dims(const stap_layout *l, const hsize_t *sd, hsize_t *cpr);

/* dst (channel, pulse, range) = src stored in l's order with extents sd[0..2]. */
RT_INTERNAL void stap_h5layout_transpose(const stap_cf32 *src, stap_cf32 *dst, const stap_layout *l, const hsize_t *sd);

/* Label the axes of `dset` channel, pulse, range (cpi first when rank is 4) with
 * H5DSset_label; < 0 when HDF5 fails. */
RT_INTERNAL int stap_h5layout_write_labels(hid_t dset, int rank);

#endif
