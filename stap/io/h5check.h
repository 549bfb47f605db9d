/* h5check: checks of an HDF5 file's own structures that Debian's libhdf5 1.10.8 takes on
 * trust, made before libhdf5 decodes them (internal to stap/).
 *
 * An object header of version 1 has no checksum. A damaged attribute message in it (a
 * datatype size of 65 300 bytes in a 56-byte message) makes every attribute call on the
 * object — H5Aexists, H5Aopen, H5Aiterate2 alike — decode past the message and crash
 * (../shared/data/regress/damaged-header-label-lookup.h5: SEGV in H5O__msg_iterate_real).
 * stap_h5check_attributes reads the header's bytes itself and checks that each attribute
 * message's parts fit in it; version-2 headers carry a checksum that libhdf5 verifies. */
#ifndef H5CHECK_H
#define H5CHECK_H

#include <hdf5.h>

#include "rtstap/common.h"

#include "rt_hidden.h"
/* The object `name` of the open file (its bytes read through the descriptor libhdf5 holds;
 * path: its name, for messages; lapl:
 * the link access list its lookup goes through, e.g. one refusing external links): STAP_OK
 * when its attributes can be handed to libhdf5; STAP_EFORMAT naming the object and what is
 * damaged otherwise. An object that cannot be looked up is STAP_OK (the caller's lookups say
 * why). */
RT_INTERNAL int stap_h5check_attributes(const char *path, hid_t file, const char *name, hid_t lapl,
                       stap_error *err);

#endif
