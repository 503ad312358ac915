#!/usr/bin/env bash
# ATIS accuracy against the pruning thresholds (TransCODE's DynaProp and DynaTran): trains
# configs/atis.toml once per tau_train, then evaluates each run's best checkpoint on the test
# split once per tau_infer, and prints one row per pair: intent accuracy, slot F1 and the realised
# sparsity (parameter gradients zeroed in training; in evaluation the attention scores and
# probabilities zeroed, and every DynaTran point together).
#   bench/atis_prune.sh HWT [--out DIR] [--tau-train "0 1e-4 1e-3"] [--tau-infer "0 0.02 0.05"]
#                       [--set key=value]...
# HWT is the hwt binary (build/hwt); run from anywhere, it works in the repository root, where
# configs/atis.toml finds its data. Extra --set go to every training run (--set train.max_steps=20
# for a quick check). The runs, a results.jsonl and the table (table.md) go to DIR
# (default runs/atis_prune).
set -euo pipefail
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: bench/atis_prune.sh HWT [--out DIR] [--tau-train LIST] [--tau-infer LIST] [--set k=v]..." >&2
  echo "atis_prune.sh: error: the first argument must be the hwt binary, got '${1:-}'" >&2
  exit 2
fi
hwt=$(readlink -f "$1")
shift
cd "$(dirname "$0")/.."
out=runs/atis_prune
tau_train="0 1e-4 1e-3 3e-3"
tau_infer="0 0.01 0.02 0.05 0.1"
sets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --tau-train) tau_train=$2; shift 2 ;;
    --tau-infer) tau_infer=$2; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    *) echo "atis_prune.sh: error: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
results=$out/results.jsonl
: >"$results"
echo "{\"date\": \"$(date -u +%FT%TZ)\", \"host\": \"$(hostname)\", \"hwt\": \"$hwt\"}" | tee "$out/machine.json"
for tt in $tau_train; do
  run=$out/train_$tt
  # Every run writes sparsity.json (DynaProp's counts); tau_infer during training stays 0 so the
  # checkpoint chosen on validation does not depend on DynaTran.
  "$hwt" train --config configs/atis.toml --set model.prune.tau_train="$tt" "${sets[@]}" \
    --out "$run" --overwrite --quiet
  for ti in $tau_infer; do
    # hwt eval's JSON: the metrics, and with DynaTran on its realised sparsity.
    "$hwt" eval "$run/best.safetensors" --split test --set model.prune.tau_infer="$ti" --json |
      python3 -c '
import json, sys
e = json.load(sys.stdin)
tt, ti, run = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    points = json.load(open(run + "/sparsity.json"))["points"]
except FileNotFoundError:  # tau_train 0 prunes nothing
    points = {}
frac = lambda p: points[p]["sparsity"] if p in points else None
print(json.dumps({"tau_train": float(tt), "tau_infer": float(ti), "run": run,
                  "intent_accuracy": e["accuracy"], "slot_f1": e["slot_f1"],
                  "param_grads_zeroed": frac("param_grads"),
                  "linear_weight_grads_zeroed": frac("param_grads.linear"),
                  **{k: e["sparsity"][p] if float(ti) > 0 else None for k, p in
                     (("scores_zeroed", "attn.scores"), ("probs_zeroed", "attn.probs"),
                      ("activations_zeroed", "overall"))}}))
' "$tt" "$ti" "$run" >>"$results"
  done
done
python3 - "$results" <<'PY' | tee "$out/table.md"
import json, sys
pct = lambda v: "—" if v is None else f"{100 * v:.2f}%"
print("| tau_train | tau_infer | intent accuracy | slot F1 | param grads zeroed "
      "| dense-layer weight grads zeroed | attention scores / probabilities zeroed (eval) "
      "| all DynaTran points zeroed (eval) |")
print("|---|---|---|---|---|---|---|---|")
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(f"| {r['tau_train']:g} | {r['tau_infer']:g} | {pct(r['intent_accuracy'])} "
          f"| {100 * r['slot_f1']:.2f} | {pct(r['param_grads_zeroed'])} "
          f"| {pct(r['linear_weight_grads_zeroed'])} "
          f"| {pct(r['scores_zeroed'])} / {pct(r['probs_zeroed'])} "
          f"| {pct(r['activations_zeroed'])} |")
PY
