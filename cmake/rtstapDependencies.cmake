# rtstapDependencies.cmake: the libraries librtstap links, found in the same way by rtstap's
# own build (CMakeLists.txt) and by users of the installed package (rtstapConfig.cmake),
# as imported targets with the same names in both:
#   PkgConfig::FFTW3F (fftw3f), PkgConfig::CJSON (libcjson), HDF5::HDF5 and hdf5::hdf5_hl, OpenMP::OpenMP_C, rtstap::openblas,
#   rtstap::lapacke, Threads::Threads; in rtstap's own build also rtstap::cairo (the pictures
#   of the command line) and, when RTSTAP_DEPS_CUDA is on, CUDA::cudart, CUDA::cublas,
#   CUDA::cufft (CUDAToolkit) for the GPU backends' library. librtstap itself links neither:
#   a program using the package needs no cairo and no CUDA.
# Debian 12: libfftw3-dev libcjson-dev libhdf5-dev libopenblas-dev liblapacke-dev (and for
# the build libcairo2-dev).
# In the package (RTSTAP_DEPS_IN_PACKAGE) a missing dependency makes find_package(rtstap)
# fail naming it (rtstap_FOUND false, rtstap_NOT_FOUND_MESSAGE); in the build it is fatal.

if(RTSTAP_DEPS_IN_PACKAGE)
  include(CMakeFindDependencyMacro)
  macro(rtstap_dep_package)
    find_dependency(${ARGV})
  endmacro()
  macro(rtstap_dep_missing what)
    set(rtstap_FOUND FALSE)
    set(rtstap_NOT_FOUND_MESSAGE "rtstap needs ${what}")
    return()
  endmacro()
else()
  macro(rtstap_dep_package)
    find_package(${ARGV} REQUIRED)
  endmacro()
  macro(rtstap_dep_missing what)
    message(FATAL_ERROR "rtstap needs ${what}")
  endmacro()
endif()

# FFTW (single precision) through its pkg-config file
rtstap_dep_package(PkgConfig)
if(NOT TARGET PkgConfig::FFTW3F)
  pkg_check_modules(FFTW3F QUIET IMPORTED_TARGET fftw3f)
  if(NOT FFTW3F_FOUND)
    rtstap_dep_missing("fftw3f (pkg-config; Debian: libfftw3-dev)")
  endif()
endif()

# cJSON (SigMF metadata) through its pkg-config file
if(NOT TARGET PkgConfig::CJSON)
  pkg_check_modules(CJSON QUIET IMPORTED_TARGET libcjson)
  if(NOT CJSON_FOUND)
    rtstap_dep_missing("libcjson (pkg-config; Debian: libcjson-dev)")
  endif()
endif()

# HDF5 with the high-level library (H5DS dimension labels)
rtstap_dep_package(HDF5 COMPONENTS C HL)

rtstap_dep_package(OpenMP COMPONENTS C)
rtstap_dep_package(Threads)

# OpenBLAS (CBLAS) and LAPACKE: plain libraries, wrapped as imported targets
find_library(RTSTAP_OPENBLAS_LIBRARY NAMES openblas)
find_library(RTSTAP_LAPACKE_LIBRARY NAMES lapacke)
set(rtstap_plain_deps OPENBLAS LAPACKE)
# (the build only) cairo with its SVG and PDF surfaces: the pictures of the command line
if(NOT RTSTAP_DEPS_IN_PACKAGE AND NOT TARGET rtstap::cairo)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(RTSTAP_CAIRO QUIET IMPORTED_TARGET cairo cairo-svg cairo-pdf)
  endif()
  if(NOT RTSTAP_CAIRO_FOUND)
    rtstap_dep_missing("cairo with its SVG and PDF surfaces (Debian: libcairo2-dev)")
  else()
    add_library(rtstap::cairo INTERFACE IMPORTED)
    set_target_properties(rtstap::cairo PROPERTIES INTERFACE_LINK_LIBRARIES PkgConfig::RTSTAP_CAIRO)
  endif()
endif()
foreach(dep ${rtstap_plain_deps})
  string(TOLOWER ${dep} name)
  if(NOT RTSTAP_${dep}_LIBRARY)
    rtstap_dep_missing("lib${name} (Debian: lib${name}-dev)")
  endif()
  if(NOT TARGET rtstap::${name})
    add_library(rtstap::${name} UNKNOWN IMPORTED)
    set_target_properties(rtstap::${name} PROPERTIES IMPORTED_LOCATION "${RTSTAP_${dep}_LIBRARY}")
  endif()
endforeach()

if(RTSTAP_DEPS_CUDA)
  rtstap_dep_package(CUDAToolkit)
endif()
