#!/usr/bin/env bash
# llm.c (karpathy/llm.c's train_gpt2cu, pinned by scripts/get_llmc.sh) against hwt's
# bench_train_step in the same call on the same GPU: GPT-2 124M from random weights, B16 T1024,
# bf16, AdamW, one micro-batch per step. Prints one JSON line per run and a last line with the
# ratios (llm.c's ms per step / hwt's: above 1, hwt is faster).
#   scripts/get_llmc.sh                        # once, where the sources can be reached
#   bench/llmc_vs_hwt.sh HWT_BENCH [OUT_DIR]   # HWT_BENCH: path to bench_train_step
#   bench/llmc_vs_hwt.sh --build               # only build llm.c (no GPU needed)
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc); LLMC_CUDNN=auto|0|1
# (auto: also build and run llm.c with cuDNN attention where cuDNN is found: $CUDNN_HOME, the
# nvidia-cudnn Python package PyTorch installs, the CUDA toolkit, /usr); LLMC_STEPS (30),
# LLMC_WARMUP (5): llm.c's steps and how many of them are left out of the median (hwt times
# LLMC_STEPS - LLMC_WARMUP steps after its own warm-up); LLMC_ARGS, HWT_ARGS: extra options.
#
# What each side runs:
# - Data: hwt's bench draws random token ids and labels itself (a fixed batch each step); llm.c
#   reads token files in its format, which this script writes from random GPT-2 ids with a fixed
#   seed (Python's random.Random(1337)): 32 batches for training, one for its validation. Step
#   time does not depend on the text. llm.c's step also reads its next batch from that file and
#   copies it to the GPU (inside its timed region); hwt's step uploads its batch too.
# - Model: GPT-2 124M; vocabulary 50257 stored as 50304 rows on both sides (llm.c pads 50257 to
#   50304 internally; hwt's gpt2_124m preset is 50304, so model.vocab_size=50257 is set and hwt
#   pads it to 50304 by model.vocab_multiple=128). Tied embeddings, GELU (tanh), no dropout.
# - Optimizer: AdamW on both, lr 1e-4 constant (what bench_train_step passes; llm.c -l 1e-4 -k
#   constant), beta1 0.9, beta2 0.95, eps 1e-8, weight decay 0.1 on matrices and embeddings,
#   global gradient-norm clipping at 1.0; fp32 master weights and fp32 moments on both (llm.c's
#   default -w 1). hwt's own defaults (beta2 0.999, weight decay 0.01) are overridden to match.
# - Timing: llm.c times each step with CUDA events (data, forward, backward, grad norm, update)
#   and prints it; this script takes the median of its steps after the first LLMC_WARMUP. hwt:
#   bench_train_step's median over synchronised steps after its warm-up.
# - llm.c runs without validation or sampling during the timed steps (-v larger than the run:
#   it still evaluates one batch before step 1 and after the last, outside its timing; -s 0),
#   no checkpoints, no log files, HellaSwag off.
# - llm.c is run as it ships (-r 1: recomputes GELU in the backward pass to save memory; -ge 0)
#   and with -r 0 (keeps GELU's output, as hwt does). Attention: llm.c's own kernels without
#   cuDNN (they form the T×T score matrix), and cuDNN's flash attention when built with it;
#   hwt uses its own fused attention.
# - Build: llm.c's Makefile, target train_gpt2cu, PRECISION=BF16 (its default), for sm_90, no
#   MPI or NCCL; variables are overridden on make's command line only. With CUDA 13,
#   bench/llmc_cuda13.h is force-included for one cudaMemAdvise call llm.c makes on its
#   out-of-memory fallback (unused here). The cuDNN frontend (header only) comes pinned with
#   scripts/get_llmc.sh; it needs libnvrtc, linked too.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
llmc=third_party/llm.c
bindir=$llmc/hwt-bin

[[ -f $llmc/.hwt-pinned ]] || { echo "llmc_vs_hwt: $llmc missing: run scripts/get_llmc.sh" >&2; exit 2; }
build_only=0
if [[ ${1:-} == --build ]]; then
  build_only=1
else
  [[ $# -ge 1 ]] || { sed -n '2,8p' "$0" >&2; exit 2; }
  hwt=$(realpath "$1")
  out=$(realpath -m "${2:-/tmp/llmc_vs_hwt}")
fi
steps=${LLMC_STEPS:-30} warmup=${LLMC_WARMUP:-5}
((steps > warmup)) || { echo "llmc_vs_hwt: LLMC_STEPS must exceed LLMC_WARMUP" >&2; exit 2; }

NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
cuda_root=$(cd "$(dirname "$NVCC")/.." && pwd)

# cuDNN: "INCLUDE_DIR LIB_DIR" of the first place holding both cudnn.h and libcudnn.so*.
find_cudnn() {
  local roots=() d inc lib py
  [[ -n ${CUDNN_HOME:-} ]] && roots+=("$CUDNN_HOME")
  py=$(python3 -c 'import nvidia.cudnn as m, os; print(os.path.dirname(m.__file__) if m.__file__ else list(m.__path__)[0])' 2>/dev/null || true)
  [[ -n $py ]] && roots+=("$py")
  roots+=("$cuda_root" /usr/local/cuda /usr)
  for d in "${roots[@]}"; do
    inc="" lib=""
    for i in "$d/include" "$d/include/x86_64-linux-gnu"; do
      [[ -f $i/cudnn.h ]] && { inc=$i; break; }
    done
    for l in "$d/lib64" "$d/lib" "$d/lib/x86_64-linux-gnu" "$d/targets/x86_64-linux/lib"; do
      compgen -G "$l/libcudnn.so*" >/dev/null && { lib=$l; break; }
    done
    [[ -n $inc && -n $lib ]] && { echo "$inc $lib"; return 0; }
  done
  return 1
}

cudnn_version() {  # from the header
  awk '/#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) /{v = v (v == "" ? "" : ".") $3} END {print v}' \
    "$1/cudnn_version.h" 2>/dev/null || echo unknown
}

# build VARIANT (plain|cudnn): $bindir/train_gpt2cu_VARIANT. A binary already there from the same
# llm.c and frontend commits and the same bench/llmc_cuda13.h is kept (it may have been built on
# another machine and carried over; LLMC_REBUILD=1 builds anew).
build() {
  local variant=$1 ldflags="-lcublas -lcublasLt" args=() stamp
  stamp="$variant $(cat "$llmc/.hwt-pinned") $(sha1sum <bench/llmc_cuda13.h | cut -c1-40)"
  if [[ ${LLMC_REBUILD:-0} != 1 && -x $bindir/train_gpt2cu_$variant && -f $bindir/$variant.stamp &&
    $(cat "$bindir/$variant.stamp") == "$stamp" ]]; then
    return 0
  fi
  args=(NVCC="$NVCC" GPU_COMPUTE_CAPABILITY=90 PRECISION=BF16 NO_MULTI_GPU=1 NO_USE_MPI=1)
  # llm.c includes nvml.h where the compiler finds it; it then needs libnvidia-ml at link time
  # (the toolkit's stub; the driver's library at run time).
  if printf '#include <nvml.h>\n' | "$NVCC" -x cu -E - -o /dev/null 2>/dev/null; then
    ldflags+=" -L$cuda_root/lib64/stubs -L$cuda_root/targets/x86_64-linux/lib/stubs -lnvidia-ml"
  fi
  ldflags+=" -include ../../bench/llmc_cuda13.h"  # make runs in $llmc
  mkdir -p "$bindir"
  rm -rf "$bindir/cudnn-link"
  if [[ $variant == cudnn ]]; then
    local inc lib
    read -r inc lib <<<"$(find_cudnn)"
    # -lcudnn needs an unversioned name; pip's package ships only libcudnn.so.9
    mkdir -p "$bindir/cudnn-link"
    local so
    for so in "$lib/libcudnn.so" "$lib"/libcudnn.so.[0-9]*; do [[ -e $so ]] && break; done
    ln -sf "$so" "$bindir/cudnn-link/libcudnn.so"
    ldflags+=" -Lhwt-bin/cudnn-link -lcudnn -lnvrtc"
    args+=(USE_CUDNN=1 CUDNN_FRONTEND_PATH=cudnn-frontend/include
      NVCC_INCLUDES="-Icudnn-frontend/include -I$inc")
  else
    args+=(USE_CUDNN=0)
  fi
  args+=(NVCC_LDFLAGS="$ldflags")
  rm -f "$llmc/train_gpt2cu" "$llmc/build/cudnn_att.o" "$bindir/train_gpt2cu_$variant"
  echo "llmc_vs_hwt: building llm.c ($variant)" >&2
  local t0=$SECONDS ok=1
  make -C "$llmc" train_gpt2cu "${args[@]}" >"$bindir/build_$variant.log" 2>&1 || ok=0
  rm -rf "$bindir/cudnn-link" "$llmc/build"
  ((ok)) || { echo "llmc_vs_hwt: llm.c ($variant) did not build: $bindir/build_$variant.log" >&2; return 1; }
  mv "$llmc/train_gpt2cu" "$bindir/train_gpt2cu_$variant"
  echo "$stamp" >"$bindir/$variant.stamp"
  echo "llmc_vs_hwt: built llm.c ($variant) in $((SECONDS - t0)) s" >&2
}

variants=(plain)
case ${LLMC_CUDNN:-auto} in
  0) ;;
  1) find_cudnn >/dev/null || { echo "llmc_vs_hwt: LLMC_CUDNN=1 but no cuDNN found" >&2; exit 2; }
     variants+=(cudnn) ;;
  *) if find_cudnn >/dev/null; then variants+=(cudnn)
     elif [[ -x $bindir/train_gpt2cu_cudnn ]]; then
       echo "llmc_vs_hwt: a cuDNN build is here but no cuDNN library to run it with" >&2
     fi ;;
esac
built=()
for v in "${variants[@]}"; do
  if build "$v"; then built+=("$v")
  elif [[ $v == plain || ${LLMC_CUDNN:-auto} == 1 ]]; then exit 1
  fi
done
((build_only)) && { ls -la "$bindir" >&2; exit 0; }

mkdir -p "$out"
# Token files in llm.c's format: 256 int32 (magic 20240520, version 1, token count, zeros),
# then the tokens as uint16 (little-endian); random GPT-2 ids (< 50257), fixed seed.
python3 - "$out" <<'PY'
import array, random, struct, sys
B, T, V = 16, 1024, 50257
rng = random.Random(1337)
for name, batches in (("train", 32), ("val", 1)):
    n = batches * B * T + 1  # llm.c reads B*T+1 tokens per batch
    toks = array.array("H", (rng.randrange(V) for _ in range(n)))
    if sys.byteorder != "little":
        toks.byteswap()
    with open(f"{sys.argv[1]}/tokens_{name}.bin", "wb") as f:
        f.write(struct.pack("<256i", 20240520, 1, n, *([0] * 253)))
        toks.tofile(f)
PY

run_hwt() {  # run_hwt TAG: one JSON line; the raw line in $out/hwt_TAG.json
  # shellcheck disable=SC2086
  "$hwt" --config gpt2_124m --set train.precision=bf16 --batch 16 --seq 1024 \
    --steps $((steps - warmup)) --set model.vocab_size=50257 --set optim.name=adamw \
    --set optim.adamw.beta1=0.9 --set optim.adamw.beta2=0.95 --set optim.eps=1e-8 \
    --set optim.weight_decay=0.1 --set train.max_grad_norm=1.0 ${HWT_ARGS:-} \
    >"$out/hwt_$1.json" 2>"$out/hwt_$1.err" ||
    { cat "$out/hwt_$1.err" >&2; echo "llmc_vs_hwt: hwt failed" >&2; exit 1; }
  python3 - "$out/hwt_$1.json" "$1" <<'PY'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][0]
if "skipped" in r:
    sys.exit("llmc_vs_hwt: bench_train_step skipped: " + r["skipped"])
print(json.dumps({"bench": "llmc_vs_hwt", "impl": "hwt", "run": sys.argv[2],
                  "ms_per_step": r["ms"], "tokens_per_s": r["tokens_per_s"],
                  "vocab": r["vocab"], "stored_vocab": r["stored_vocab"], "optim": r["optim"],
                  "dtype": r["dtype"], "params": r["params"], "peak_mem_GB": r["peak_mem_GB"],
                  "loss_after": r["loss_after"]}), flush=True)
PY
}

run_llmc() {  # run_llmc VARIANT RECOMPUTE: one JSON line; llm.c's output in $out/llmc_*.log
  local variant=$1 recompute=$2 log ldpath=$cuda_root/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  log=$out/llmc_${variant}_r$recompute.log
  if [[ $variant == cudnn ]]; then
    local inc lib
    read -r inc lib <<<"$(find_cudnn)"
    ldpath=$lib:$ldpath
  fi
  # shellcheck disable=SC2086
  (cd "$out" && LD_LIBRARY_PATH=$ldpath "$repo/$bindir/train_gpt2cu_$variant" \
    -i tokens_train.bin -j tokens_val.bin -e d12 -b 16 -t 1024 -d 16384 -x "$steps" \
    -l 1e-4 -k constant -u 0 -q 1.0 -c 0.1 -v $((steps + 1000)) -m 1 -s 0 -h 0 -n 0 \
    -r "$recompute" -ge 0 -w 1 -a 0 ${LLMC_ARGS:-}) >"$log" 2>&1 ||
    { tail -n 20 "$log" >&2; echo "llmc_vs_hwt: llm.c ($variant, -r $recompute) failed" >&2; return 1; }
  local cudnn=""
  [[ $variant == cudnn ]] && cudnn=$(cudnn_version "$inc")
  python3 bench/llmc_parse.py "$log" --warmup "$warmup" --variant "$variant" --cudnn "$cudnn"
}

rm -f "$out/results.jsonl"
run_hwt before | tee -a "$out/results.jsonl"
for v in "${built[@]}"; do
  for r in 1 0; do
    run_llmc "$v" "$r" | tee -a "$out/results.jsonl" || true
  done
done
run_hwt after | tee -a "$out/results.jsonl"
python3 - "$out/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
hwt = [r["ms_per_step"] for r in rows if r["impl"] == "hwt"]
hwt_ms = sum(hwt) / len(hwt)
ratios = {f'{r["attention"]}, -r {r["recompute"]}': round(r["ms_per_step"] / hwt_ms, 3)
          for r in rows if r["impl"] == "llm.c"}
print(json.dumps({"bench": "llmc_vs_hwt", "hwt_ms_per_step": round(hwt_ms, 3),
                  "hwt_runs_ms": hwt, "llmc_ms_over_hwt_ms": ratios}), flush=True)
PY
