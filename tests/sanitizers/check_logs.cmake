# The sanitizer_logs fixture (tests/CMakeLists.txt). The processes the CLI tests run write
# their sanitizer reports to files DIR/report.* (ASAN_OPTIONS log_path), since the scripts
# discard some stderr and expect some runs to fail.
#   -DDIR=... -DMODE=clear: empty DIR before those tests (the directory must exist)
#   -DDIR=... -DMODE=check: after them, print every report and fail if there is one
if(MODE STREQUAL "clear")
  file(REMOVE_RECURSE "${DIR}")
  file(MAKE_DIRECTORY "${DIR}")
  return()
endif()
file(GLOB reports "${DIR}/report*")
if(NOT reports)
  message(STATUS "no sanitizer report in ${DIR}")
  return()
endif()
foreach(f ${reports})
  file(READ "${f}" text)
  message("==== ${f}\n${text}")
endforeach()
list(LENGTH reports n)
message(FATAL_ERROR "${n} sanitizer report(s) from the CLI tests' processes (above)")
