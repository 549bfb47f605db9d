# help_all.cmake: run `EXE --help-all FORMAT` into OUT (cmake -P; the build's man page and
# bash completion, and CTest docs_cli). With COMPARE, fail when OUT differs from that file
# (docs/cli.md must be what the option tables say).
#   cmake -DEXE=rtstap -DFORMAT=markdown|man|bash -DOUT=FILE [-DCOMPARE=FILE] -P help_all.cmake
execute_process(COMMAND ${EXE} --help-all ${FORMAT} OUTPUT_FILE ${OUT} RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --help-all ${FORMAT} failed (${rc}): ${err}")
endif()
if(COMPARE)
  file(READ ${OUT} now)
  file(READ ${COMPARE} kept)
  if(NOT now STREQUAL kept)
    execute_process(COMMAND diff -u ${COMPARE} ${OUT})
    message(FATAL_ERROR "${COMPARE} is not what the option tables say (the diff above); "
                        "regenerate it: ${EXE} --help-all ${FORMAT} > ${COMPARE}")
  endif()
  message(STATUS "${COMPARE} matches the option tables")
endif()
