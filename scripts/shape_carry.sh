#!/usr/bin/env bash
# Packs build-shape/hwt (and hwt_tests when built) with the shared libraries the device image may
# lack into build-shape-carry/carry.tar.xz, for scripts/shape_h200.sh. Build first with
#   cmake -S . -B build-shape -DHWT_NATIVE=OFF -DCMAKE_CUDA_ARCHITECTURES=90 && make -C build-shape hwt
# C, C++ and CUDA runtime libraries are left to the device (its own are newer or must match its
# driver). Compressed, since the working tree that travels is limited to 64 MiB.
set -euo pipefail
dst=build-shape-carry
stage=$(mktemp -d)
mkdir -p "$stage/lib"
for bin in build-shape/hwt build-shape/tests/hwt_tests; do
  [ -x "$bin" ] || continue
  cp "$bin" "$stage/" && strip "$stage/$(basename "$bin")"
  ldd "$bin" | awk '/=> \//{print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so* | libm.so* | libdl.so* | librt.so* | libpthread.so* | ld-linux* | libgcc_s* | \
        libstdc++* | libcuda* | libcublas* | libcudart*) ;;
      *) cp -L "$lib" "$stage/lib/" ;;
    esac
  done
done
rm -rf "$dst" && mkdir -p "$dst"
tar cJf "$dst/carry.tar.xz" -C "$stage" .
rm -rf "$stage"
ls -l "$dst/carry.tar.xz"
