# HWT_SANITIZE and HWT_FUZZ (docs/reliability.md). Both apply to every target built after this
# file is included: a sanitizer must see the library's code, not only the test's.
if(HWT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "HWT_FUZZ needs clang (libFuzzer): -DCMAKE_CXX_COMPILER=clang++")
  endif()
  if(HWT_SANITIZE STREQUAL "")
    set(HWT_SANITIZE "address,undefined" CACHE STRING "" FORCE)
  endif()
  # Coverage counters for libFuzzer in everything; only the fuzz targets link its main.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
if(NOT HWT_SANITIZE STREQUAL "")
  # Frame pointers for readable reports; no recovery, so UBSan findings fail the run too.
  add_compile_options(-fsanitize=${HWT_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${HWT_SANITIZE})
endif()
# The build type the sanitizer scripts use (-DCMAKE_BUILD_TYPE=Sanitize): -O1, as ASan's authors
# advise, with asserts on and line tables only (reports name file and line; quicker to build
# than full debug information).
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(CMAKE_CXX_FLAGS_SANITIZE "-O1 -gline-tables-only")
else()
  set(CMAKE_CXX_FLAGS_SANITIZE "-O1 -g1")
endif()
