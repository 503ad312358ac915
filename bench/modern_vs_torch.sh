#!/usr/bin/env bash
# Training steps of the modern (Llama) block: hwt's bench_train_step against Hugging Face's
# LlamaForCausalLM (SDPA attention, fused AdamW, bf16 autocast over fp32 weights), eager and
# torch.compile, one after the other on the same GPU. Shapes: SmolLM-135M at batch 16 x 1024 and
# Llama-3.2-1B at batch 4 x 2048 (configs/smollm_135m.toml, configs/llama3.2_1b.toml). One JSON
# line per measurement.
#   bench/modern_vs_torch.sh BENCH_TRAIN_STEP
set -uo pipefail
cd "$(dirname "$0")/.."
bench=$1
smollm=(--hidden 576 --heads 9 --kv-heads 3 --ffn 1536 --layers 30 --vocab 49152 --batch 16
  --seq 1024)
llama1b=(--hidden 2048 --heads 32 --kv-heads 8 --ffn 8192 --layers 16 --vocab 128256 --batch 4
  --seq 2048)
timeout 120 "$bench" --config smollm_135m --batch 16 --seq 1024
timeout 120 python3 bench/train_step.py --model llama "${smollm[@]}"
timeout 240 python3 bench/train_step.py --model llama --compile "${smollm[@]}"
timeout 120 "$bench" --config llama3.2_1b --batch 4 --seq 2048
timeout 120 python3 bench/train_step.py --model llama "${llama1b[@]}"
timeout 240 python3 bench/train_step.py --model llama --compile "${llama1b[@]}"
