#!/usr/bin/env bash
# Generation on the GPU beside transformers' generate(), in one call (issue 30's decode targets):
# for GPT-2 124M and the SmolLM-135M shape, bench/generate_hf.py makes a random bf16 model,
# saves it and times transformers; `hwt import` reads the same folder and bench_generate times
# hwt on the same prompts (bf16, greedy, 32-token prompts, 256 new tokens, batch 1 and 16);
# then the two programs' tokens are compared (bf16 rounding differs between them, so a
# sequence may part where two logits nearly tie: the line says after how many tokens).
#   bench/generate_vs_hf.sh BIN_DIR OUT_DIR      (BIN_DIR holds hwt and bench_generate)
set -uo pipefail
bin=$1
out=$2
mkdir -p "$out"
export PYTHONUNBUFFERED=1
for model in gpt2 smollm; do
  python3 bench/generate_hf.py --model "$model" --save "$out/$model-hf" \
    --tokens-out "$out/$model-hf-tokens.json" || continue
  "$bin/hwt" import "$out/$model-hf" --out "$out/$model.safetensors" --quiet || continue
  "$bin/bench_generate" --device cuda --dtype bf16 --checkpoint "$out/$model.safetensors" \
    --batch 1,16 --prompt 32 --new 256 --skip-recompute --tokens-out "$out/$model-hwt-tokens.json"
  python3 - "$out/$model-hf-tokens.json" "$out/$model-hwt-tokens.json" "$model" <<'PY'
import json, sys
hf, hwt = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for batch in hf:
    same = [next((i for i, (a, b) in enumerate(zip(x, y)) if a != b), len(x))
            for x, y in zip(hf[batch], hwt[batch])]
    print(json.dumps({"model": sys.argv[3], "batch": int(batch), "tokens": len(hf[batch][0]),
                      "sequences_identical": sum(s == len(hf[batch][0]) for s in same),
                      "sequences": len(same), "first_difference_at": same}))
PY
done
