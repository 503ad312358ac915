# Sourced by scripts/fuzz.sh and scripts/sanitize.sh: the one sanitizer build they share
# (build-sanitize: clang, ASan + UBSan, libFuzzer's coverage counters, CPU only) and the
# sanitizer runtimes' options. HWT_BUILD_DIR and HWT_CMAKE_ARGS are scripts/setup.sh's.
export HWT_BUILD_DIR=${HWT_SANITIZE_BUILD_DIR:-build-sanitize}
HWT_CMAKE_ARGS="-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Sanitize -DHWT_FUZZ=ON"
HWT_CMAKE_ARGS+=" -DHWT_SANITIZE=address,undefined -DHWT_CUDA=OFF -DHWT_BENCH=OFF"
if command -v ccache >/dev/null; then HWT_CMAKE_ARGS+=" -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"; fi
export HWT_CMAKE_ARGS
# Every finding stops the program with a stack trace.
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
