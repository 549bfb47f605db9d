# RTSTAP_FUZZ=ON (tests/fuzz, issue 10): every C file of this build directory is compiled
# for libFuzzer with AddressSanitizer and UndefinedBehaviorSanitizer, in a build directory
# of its own (CC=clang; the CUDA backend is off). FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
# lowers the readers' allocation caps to sizes a fuzzer can afford (stap/io/io_internal.h).
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "RTSTAP_FUZZ=ON needs clang (libFuzzer): configure a separate build "
                      "directory with -DCMAKE_C_COMPILER=clang")
endif()
if(RTSTAP_CUDA STREQUAL "ON")
  message(FATAL_ERROR "RTSTAP_FUZZ=ON builds without CUDA: leave RTSTAP_CUDA at OFF or AUTO")
endif()
set(RTSTAP_CUDA OFF)
set(RTSTAP_FUZZ_FLAGS -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
    -fno-omit-frame-pointer -g)
add_compile_options("$<$<COMPILE_LANGUAGE:C>:${RTSTAP_FUZZ_FLAGS}>")
add_compile_definitions(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION=1)
add_link_options(-fsanitize=address,undefined)
