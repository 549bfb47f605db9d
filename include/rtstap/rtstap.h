/* rtstap/rtstap.h: the whole public API of librtstap in one include — status codes and
 * types (common.h), the batched linear algebra (linalg.h), the STAP configuration,
 * presets and one-CPI plan (stap.h), CFAR (cfar.h), the streaming engine (engine.h),
 * the HDF5 file format (h5io.h), and live input's VITA-49 codec and CPI assembler
 * (vrt.h). docs/library.md shows a program. */
#ifndef RTSTAP_RTSTAP_H
#define RTSTAP_RTSTAP_H

#include "common.h"
#include "linalg.h"
#include "stap.h"
#include "cfar.h"
#include "engine.h"
#include "h5io.h"
#include "vrt.h"
#include "stream.h"

#endif
