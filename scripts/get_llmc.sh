#!/usr/bin/env bash
# Brings Karpathy's llm.c (https://github.com/karpathy/llm.c) at a pinned commit into the ignored
# folder third_party/llm.c/, with the header-only cuDNN frontend (NVIDIA/cudnn-frontend, pinned
# tag) in third_party/llm.c/cudnn-frontend/include where llm.c's Makefile looks for it. Only the
# files of those commits are written (no git history: about 5 MB). An install step for
# bench/llmc_vs_hwt.sh, never run by the build or the tests; llm.c's sources are not modified.
#   scripts/get_llmc.sh [LLMC_SOURCE [FRONTEND_SOURCE]]
# A source is a git URL or a local clone or mirror; defaults: $LLMC_SRC and $CUDNN_FRONTEND_SRC,
# else the GitHub URLs. Re-running with the pinned commits already in place does nothing; a
# different commit there is replaced.
set -euo pipefail
cd "$(dirname "$0")/.."

LLMC_COMMIT=f1e2ace651495b74ae22d45d1723443fd00ecd3a      # master, 2025-05-10 (PR #801 merge)
FRONTEND_COMMIT=fb682ce761a2705e40f9b5d528737a3e0eb33cec  # cudnn-frontend v1.23.0
llmc_src=${1:-${LLMC_SRC:-https://github.com/karpathy/llm.c.git}}
frontend_src=${2:-${CUDNN_FRONTEND_SRC:-https://github.com/NVIDIA/cudnn-frontend.git}}
dest=third_party/llm.c

# fetch_tree SOURCE COMMIT DEST [PATH...]: the tree of COMMIT (or only PATHs of it) into DEST.
fetch_tree() {
  local src=$1 commit=$2 out=$3
  shift 3
  [[ -d $src ]] && src=$(cd "$src" && pwd)  # a local path: absolute, as git fetch runs elsewhere
  local tmp
  tmp=$(mktemp -d)
  git init -q --bare "$tmp/git"
  # By commit id first (GitHub and protocol v2 allow it); else branches and tags, then look.
  if ! git -C "$tmp/git" fetch -q --depth 1 "$src" "$commit" 2>/dev/null; then
    git -C "$tmp/git" fetch -q "$src" '+refs/heads/*:refs/remotes/src/*' '+refs/tags/*:refs/tags/*' ||
      true
  fi
  git -C "$tmp/git" cat-file -e "$commit^{commit}" 2>/dev/null ||
    { echo "get_llmc: $commit not found in $src" >&2; rm -rf "$tmp"; return 1; }
  mkdir -p "$out"
  git -C "$tmp/git" archive "$commit" "$@" | tar -x -C "$out"
  rm -rf "$tmp"
}

stamp="$LLMC_COMMIT $FRONTEND_COMMIT"
if [[ -f $dest/.hwt-pinned && $(cat "$dest/.hwt-pinned") == "$stamp" ]]; then
  echo "get_llmc: $dest already at llm.c $LLMC_COMMIT"
  exit 0
fi
rm -rf "$dest.tmp"
trap 'rm -rf "$dest.tmp"' EXIT
fetch_tree "$llmc_src" "$LLMC_COMMIT" "$dest.tmp"
fetch_tree "$frontend_src" "$FRONTEND_COMMIT" "$dest.tmp/cudnn-frontend" include
echo "$stamp" >"$dest.tmp/.hwt-pinned"
rm -rf "$dest"  # an older pin, with any llm.c built from it
mv "$dest.tmp" "$dest"
echo "get_llmc: llm.c $LLMC_COMMIT and cudnn-frontend $FRONTEND_COMMIT in $dest ($(du -sh "$dest" | cut -f1))"
