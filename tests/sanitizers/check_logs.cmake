# The sanitizer_logs and invariant_logs fixtures (tests/CMakeLists.txt). The processes the
# CLI tests run write their sanitizer reports to files DIR/report.* (ASAN_OPTIONS log_path),
# and rtstap its invariant violations to DIR/violation.* (RTSTAP_TEST_INVARIANTS, app/
# cli_files.h), since the scripts discard some stderr and expect some runs to fail.
#   -DPATTERN=...: the files' names (default report*); -DWHAT=...: what they are
#   -DDIR=... -DMODE=clear: empty DIR before those tests (the directory must exist)
#   -DDIR=... -DMODE=check: after them, print every report and fail if there is one
if(MODE STREQUAL "clear")
  file(REMOVE_RECURSE "${DIR}")
  file(MAKE_DIRECTORY "${DIR}")
  return()
endif()
if(NOT PATTERN)
  set(PATTERN "report*")
endif()
if(NOT WHAT)
  set(WHAT "sanitizer report(s) from the CLI tests' processes")
endif()
file(GLOB reports "${DIR}/${PATTERN}")
if(NOT reports)
  message(STATUS "nothing (${PATTERN}) in ${DIR}")
  return()
endif()
foreach(f ${reports})
  file(READ "${f}" text)
  message("==== ${f}\n${text}")
endforeach()
list(LENGTH reports n)
message(FATAL_ERROR "${n} ${WHAT} (above)")
