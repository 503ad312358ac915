#!/usr/bin/env bash
# Packs the hwt binaries of a CUDA build (configured with -DHWT_NATIVE=OFF so they run on the
# device machine's CPU), with the shared libraries the device image lacks, into
# build-cuda-carry/carry.tar.xz (compressed: a device call carries at most 64 MiB; -9e packs
# into about 0.6 of -6's size) for scripts/gpu_check.sh, scripts/gpu_quality.sh and
# scripts/shape_h200.sh. C/C++ and CUDA runtime libraries are left to the device (they must
# match its driver).
#   cmake -S . -B build-cuda -DHWT_NATIVE=OFF && cmake --build build-cuda -j && scripts/gpu_carry.sh
set -euo pipefail
src=${1:-build-cuda}
dst=$(mktemp -d)
mkdir -p "$dst/lib"
for bin in "$src/hwt" "$src/tests/hwt_tests" "$src/tests/hwt_tensorboard_tests" \
  "$src/bench/bench_train_step" "$src/bench/bench_kernels" "$src/bench/bench_generate" \
  "$src/bench/bench_tokenizer_gpt2"; do
  [ -x "$bin" ] || { echo "missing $bin" >&2; exit 1; }
  cp "$bin" "$dst/"
  strip -s "$dst/$(basename "$bin")"
  ldd "$bin" | awk '/=> \//{print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so* | libm.so* | libdl.so* | librt.so* | libpthread.so* | ld-linux* | libgcc_s* | \
        libstdc++* | libcuda* | libcublas* | libcudart*) ;;
      *) cp -L "$lib" "$dst/lib/" ;;
    esac
  done
done
# Where the tests look for their fixtures and the hwt binary (HWT_TEST_DIR, HWT_BINARY).
pwd >"$dst/source_dir.txt"
rm -rf build-cuda-carry && mkdir -p build-cuda-carry
tar -cf - -C "$dst" . | xz -T2 -9e >build-cuda-carry/carry.tar.xz
rm -rf "$dst"
ls -la build-cuda-carry
