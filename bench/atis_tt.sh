#!/usr/bin/env bash
# ATIS with the tensor-train layers of Tian et al. (configs/tt_atis.toml) against dense, in one
# call, with the hwt binary given (so it runs on any machine; train.device=auto takes a GPU when
# there is one):
#   1. trains configs/atis.toml (dense) and configs/tt_atis.toml (TT) on ATIS and prints, from
#      each run.json: intent accuracy, slot F1 (test split), parameters, training step time and
#      the telemetry's energy per epoch (GPU from NVML, CPU from RAPL; null where unreadable);
#   2. the TT run's compressed layers (its checkpoint's cores) against the dense matrices they
#      stand for: parameters and ratio;
#   3. TT against the same model dense (configs/dense_atis.toml) per training step on the CPU
#      with 2 threads, at batch 1 and batch 32, sequence 32 (hwt train on train.device=cpu,
#      run.json's step_ms over CPU_STEPS optimizer steps);
#   4. the same on the GPU with bench_train_step from the binary's build folder (its JSON line,
#      with the energy per step over 10 s of NVML telemetry; "skipped" without a GPU);
#   5. the paper's comparison: the TT training's measured energy per epoch (part 1) against the
#      epoch `hwt sim` predicts for the same model and batch on the FPGA-like u50 design (a
#      model, not a measurement).
# Usage:
#   bench/atis_tt.sh HWT_BINARY [OUT_DIR] [--set key=value ... for both trainings of part 1]
#   bench/atis_tt.sh build/hwt runs/atis_tt                              # full trainings
#   CPU_STEPS=3 bench/atis_tt.sh build/hwt /tmp/atis_tt --set train.max_steps=5   # a quick check
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 HWT_BINARY [OUT_DIR] [--set key=value ...]" >&2; exit 2; }
hwt=$(readlink -f "$1")
[ -x "$hwt" ] || { echo "$0: '$1' is not an executable hwt binary" >&2; exit 2; }
shift
out=runs/atis_tt
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then out=$1; shift; fi
out=$(readlink -m "$out")
cpu_steps=${CPU_STEPS:-20}
mkdir -p "$out"
cd "$(dirname "$0")/.."  # the configs' data paths are relative to the repository root
py=${PYTHON:-/usr/bin/python3}  # numpy-free parsing only

echo "{\"date\": \"$(date -u +%FT%TZ)\", \"hwt\": \"$hwt\", \"cpu\": \"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)\"}"

# 1. The two trainings.
for name in atis tt_atis; do
  "$hwt" train --config "configs/$name.toml" --out "$out/$name" --overwrite "$@" \
    >"$out/$name.log" 2>&1 ||
    { echo "$0: hwt train --config $name failed; see $out/$name.log" >&2; exit 1; }
  $py - "$name" "$out/$name/run.json" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))
test = r["results"].get("test", {})
train = r["telemetry"].get("train", {})
epochs = r["results"]["epochs_completed"]
def per_epoch(key):
    v = train.get(key)
    return None if v is None or epochs <= 0 else round(v / epochs, 2)
print(json.dumps({"run": name, "backend": r["hardware"]["backend"],
                  "intent_accuracy": test.get("accuracy"), "slot_f1": test.get("slot_f1"),
                  "parameters": r["model"]["parameters"], "steps": r["results"]["steps"],
                  "epochs": round(epochs, 3), "step_ms": round(r["timing"]["step_ms"], 3),
                  "gpu_energy_j_per_epoch": per_epoch("gpu_energy_j"),
                  "cpu_energy_j_per_epoch": per_epoch("cpu_energy_j")}))
PY
done

# 2. Compressed layers: every core [r, f..., r'] in the TT checkpoint stands for a dense matrix
#    whose size is the product of the cores' middle factors (the embedding's rows padded to
#    the product of its vocabulary factors).
$py - "$out/tt_atis/checkpoint.safetensors" <<'PY'
import json, math, re, struct, sys
with open(sys.argv[1], "rb") as f:
    header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
layers = {}
for name, t in header.items():
    m = re.fullmatch(r"(.+)\.core\d+", name)
    if m:
        layers.setdefault(m.group(1), []).append(t["shape"])
tt = sum(math.prod(s) for cores in layers.values() for s in cores)
dense = sum(math.prod(math.prod(s[1:-1]) for s in cores) for cores in layers.values())
print(json.dumps({"compressed_layers": len(layers), "tt_parameters": tt,
                  "dense_parameters": dense, "ratio": round(dense / tt, 1)}))
PY

# 3. CPU step time, 2 threads: the TT model against the same model dense.
for batch in 1 32; do
  for name in tt_atis dense_atis; do
    dir="$out/cpu_b${batch}_$name"
    OMP_NUM_THREADS=2 "$hwt" train --config "configs/$name.toml" --out "$dir" --overwrite \
      --set train.device=cpu --set train.threads=2 --set train.batch_size="$batch" \
      --set train.max_steps="$cpu_steps" >"$dir.log" 2>&1 ||
      { echo "$0: CPU step time of $name failed; see $dir.log" >&2; exit 1; }
    $py - "$name" "$batch" "$dir/run.json" <<'PY'
import json, sys
name, batch, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
r = json.load(open(path))
print(json.dumps({"cpu_step": name, "threads": 2, "batch": batch, "seq": 32,
                  "steps": r["results"]["steps"], "step_ms": round(r["timing"]["step_ms"], 2),
                  "parameters": r["model"]["parameters"]}))
PY
  done
done

# 4. GPU step time and energy, the same pairs (bench_train_step builds the model as hwt train).
bench=$(dirname "$hwt")/bench/bench_train_step
if [ -x "$bench" ]; then
  for batch in 1 32; do
    for name in tt_atis dense_atis; do
      "$bench" --config "configs/$name.toml" --set model.vocab_size=1000 --batch "$batch" \
        --seq 32 --steps 50 --power-seconds 10
    done
  done
else
  echo "{\"gpu_step\": \"skipped: no $bench\"}"
fi

# 5. Measured TT epoch (part 1) against the u50 design's predicted one, same model and batch.
read -r -a sim_args < <($py - "$out/tt_atis/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["config"]
sets = [f"model.{k}={c['model.' + k]}" for k in ("vocab_size", "num_labels", "num_token_labels")]
print(" ".join(f"--set {s}" for s in sets), "--batch", c["train.batch_size"],
      "--epoch-examples", r["data"]["train_examples"])
PY
)
"$hwt" sim --config configs/tt_atis.toml --accel u50 --dense --json "${sim_args[@]}" \
  >"$out/u50_tt_atis.json"
$py - "$out/tt_atis/run.json" "$out/u50_tt_atis.json" <<'PY'
import json, sys
r, sim = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
epochs = r["results"]["epochs_completed"]
measured = r["telemetry"].get("train", {}).get("gpu_energy_j")
gpu = measured / epochs if measured is not None and epochs > 0 else None
u50 = sim["epoch"]["energy_j"]
print(json.dumps({"tt_epoch_energy_j": {"measured_gpu": gpu, "u50_model": round(u50, 3)},
                  "gpu_over_u50": round(gpu / u50, 2) if gpu else None,
                  "batch": sim["workload"]["batch"], "u50_epoch_latency_s":
                  round(sim["epoch"]["latency_s"], 3), "paper": "up to 3.6x (RTX 3090 vs U50)"}))
PY
