"""Chen & Sköld's step-by-step table on one GPU, hwt and PyTorch in the same call.

BERT-base sequence classification at the thesis's fine-tuning shape (sequence 512, batch 16,
dropout 0.1, AdamW, learning rate 5e-5 with 30 warm-up steps then linear decay, gradients clipped
to 1.0), each row training --steps steps and then evaluating, measured with the same NVML
energy counter and utilisation samples:

    torch-fp32           PyTorch eager, fp32 (TF32 off)
    torch-amp-bf16       PyTorch eager, bf16 autocast
    torch-compile-bf16   PyTorch torch.compile, bf16 autocast
    hwt-fp32, hwt-tf32, hwt-bf16     hwt train (AdamW)
    hwt-bf16-adan        hwt train with its fused Adan

The hwt rows are one `hwt compare --plan`; the PyTorch rows are this script's own model
(bench/train_step.py's encoder: the layers of hwt's bert_base preset) writing a run folder with
the hwt row's config and hwt's run.json telemetry fields, so that `hwt compare` ranks all seven
under the thesis's weight sets. Both sides train on a synthetic corpus every example of which
fills the 512 tokens (random words; hwt tokenises it, PyTorch draws random token ids: the work
per step is the same), evaluate the same number of batches (validation twice, test once, as
hwt train does when the last step is also an epoch's evaluation point) and save a checkpoint
with optimizer state and one without.

Two views of time and energy: per 1,000 steps from the steady steps (every logged interval after
the first: hwt's metrics.jsonl, PyTorch's own intervals, the same steps) and whole-run figures
from run.json (training window with the first step, for torch.compile its compilation; energy of
the whole run), which `hwt compare` scores.

    python3 bench/thesis_steps.py --hwt build-cuda/hwt --out DIR [--steps 250] [--rows a,b]
    python3 bench/thesis_steps.py --table DIR       # the markdown tables of a finished DIR
"""
import argparse
import ctypes
import json
import math
import os
import random
import subprocess
import sys
import threading
import time

HWT_ROWS = {"hwt-fp32": ["train.precision=fp32"], "hwt-tf32": ["train.precision=tf32"],
            "hwt-bf16": ["train.precision=bf16"],
            "hwt-bf16-adan": ["train.precision=bf16", "optim.name=adan"]}
TORCH_ROWS = {"torch-fp32": ("fp32", False), "torch-amp-bf16": ("bf16", False),
              "torch-compile-bf16": ("bf16", True)}
ORDER = ["torch-fp32", "torch-amp-bf16", "torch-compile-bf16", "hwt-fp32", "hwt-tf32",
         "hwt-bf16", "hwt-bf16-adan"]
BATCH, SEQ, LOG_EVERY, LR, WARMUP, DECAY = 16, 512, 50, 5e-5, 30, 0.01
EXAMPLES, VALID_FRACTION = 5000, 0.05  # 4,500 training examples: 281 steps in an epoch


def shared_settings(data_path):
    return [f"data.format=tsv", f"data.path={data_path}", "data.min_freq=1",
            "data.max_vocab=30522", f"data.max_len={SEQ}", f"data.valid_fraction={VALID_FRACTION}",
            f"data.test_fraction={VALID_FRACTION}", f"train.batch_size={BATCH}",
            "train.device=cuda", f"train.log_every={LOG_EVERY}", f"optim.lr={LR}",
            f"optim.warmup_steps={WARMUP}", f"optim.weight_decay={DECAY}"]


def write_corpus(path, seed=7):
    """EXAMPLES lines of 520 random words out of 30,000 and a random label: every example is
    cut to 512 tokens, so no step has padding."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(30000)]
    with open(path, "w") as f:
        for _ in range(EXAMPLES):
            f.write(" ".join(rng.choices(words, k=520)) + "\t" + rng.choice(["pos", "neg"]) + "\n")


class Nvml:
    """The GPU's total-energy counter (mJ) and a 100 ms sampler of power and utilisation, read
    through libnvidia-ml as hwt's telemetry reads them; windows like hwt's."""

    class Util(ctypes.Structure):
        _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]

    def __init__(self, index=0):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        if self.lib.nvmlInit_v2() != 0:
            raise RuntimeError("nvmlInit failed")
        self.dev = ctypes.c_void_p()
        if self.lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(self.dev)) != 0:
            raise RuntimeError(f"no NVML device {index}")
        name = ctypes.create_string_buffer(96)
        self.lib.nvmlDeviceGetName(self.dev, name, 96)
        self.name = name.value.decode()
        self.open, self.done, self.samples = {}, {}, []
        self.stop = False
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def energy_j(self):
        mj = ctypes.c_ulonglong()
        if self.lib.nvmlDeviceGetTotalEnergyConsumption(self.dev, ctypes.byref(mj)) != 0:
            raise RuntimeError("the GPU has no total-energy counter")
        return mj.value / 1e3

    def loop(self):
        while not self.stop:
            mw, util = ctypes.c_uint(), self.Util()
            self.lib.nvmlDeviceGetPowerUsage(self.dev, ctypes.byref(mw))
            self.lib.nvmlDeviceGetUtilizationRates(self.dev, ctypes.byref(util))
            self.samples.append((time.perf_counter(), mw.value / 1e3, util.gpu))
            time.sleep(0.1)

    def begin(self, name):
        self.open[name] = (time.perf_counter(), self.energy_j())

    def end(self, name):
        t0, e0 = self.open.pop(name)
        t1, e1 = time.perf_counter(), self.energy_j()
        inside = [s for s in self.samples if t0 <= s[0] <= t1] or self.samples[-1:]
        w = self.done.setdefault(name, {"seconds": 0.0, "gpu_energy_j": 0.0, "power": [],
                                        "util": []})
        w["seconds"] += t1 - t0
        w["gpu_energy_j"] += e1 - e0
        w["power"] += [s[1] for s in inside]
        w["util"] += [s[2] for s in inside]

    def window(self, name):
        w = self.done[name]
        mean = lambda v: sum(v) / len(v) if v else None
        return {"seconds": w["seconds"], "gpu_energy_j": w["gpu_energy_j"],
                "gpu_energy_method": "counter", "gpu_power_mean_w": mean(w["power"]),
                "gpu_util_mean_pct": mean(w["util"]),
                "gpu_util_peak_pct": max(w["util"]) if w["util"] else None}


def torch_row(name, out, steps, like):
    """One PyTorch row, written as an hwt run folder (run.json, metrics.jsonl)."""
    import torch
    import torch.nn.functional as F
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from train_step import Encoder

    precision, compiled = TORCH_ROWS[name]
    hwt_run = json.load(open(like))
    cfg, data = hwt_run["config"], hwt_run["data"]
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 is IEEE fp32, as the thesis's baseline
    torch.backends.cudnn.allow_tf32 = False
    nv = Nvml(0)
    nv.begin("total")
    torch.manual_seed(0)
    dev = "cuda"
    model = Encoder(vocab=cfg["model.vocab_size"], ctx=cfg["model.max_seq"],
                    d=cfg["model.hidden"], layers=cfg["model.layers"], heads=cfg["model.heads"],
                    ffn=cfg["model.ffn"], labels=cfg["model.num_labels"], drop=0.1).to(dev)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    other = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": DECAY},
                             {"params": other, "weight_decay": 0.0}], lr=LR, fused=True)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / WARMUP if s < WARMUP else max(0.0, (steps - s) / (steps - WARMUP)))
    run = torch.compile(model) if compiled else model
    vocab, labels = cfg["model.vocab_size"], cfg["model.num_labels"]
    autocast = lambda: torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16")

    def batch():
        return (torch.randint(0, vocab, (BATCH, SEQ), device=dev),
                torch.randint(0, labels, (BATCH,), device=dev))

    def step():
        x, y = batch()
        with autocast():
            loss = run(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        return loss

    model.train()
    lines = []
    nv.begin("train")
    t_log = time.perf_counter()
    for k in range(1, steps + 1):
        loss = step()
        if k % LOG_EVERY == 0 or k == steps:
            value = loss.item()  # synchronises, as hwt's loss readback at a log line
            now = time.perf_counter()
            if k == LOG_EVERY:
                nv.begin("steady")
            elif k == steps:
                nv.end("steady")
            lines.append({"step": k, "loss": value,
                          "tokens_per_s": (k - (lines[-1]["step"] if lines else 0)) * BATCH * SEQ
                          / (now - t_log)})
            t_log = now
    nv.end("train")

    nv.begin("eval")
    model.eval()
    eval_batches = 2 * math.ceil(data["valid_examples"] / BATCH) + math.ceil(
        data["test_examples"] / BATCH)
    with torch.no_grad():
        for _ in range(eval_batches):
            x, y = batch()
            with autocast():
                run(x, y).item()
    nv.end("eval")
    os.makedirs(out, exist_ok=True)
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()},
               os.path.join(out, "checkpoint.pt"))
    torch.save(model.state_dict(), os.path.join(out, "best.pt"))
    torch.cuda.synchronize()
    nv.end("total")

    price = hwt_run["telemetry"]["price_per_gpu_hour"]
    train, total = nv.window("train"), nv.window("total")
    steady = nv.window("steady")
    run_config = dict(cfg, **{"train.precision": precision, "optim.name": "adamw",
                              "train.max_steps": steps})
    record = {
        "config": run_config, "data": data, "implementation": f"PyTorch {torch.__version__}" + (
            " torch.compile" if compiled else " eager"),
        "results": {"steps": steps, "tokens_trained": steps * BATCH * SEQ},
        "timing": {"train_s": train["seconds"], "eval_s": nv.window("eval")["seconds"],
                   "total_s": total["seconds"]},
        "telemetry": {"gpu": {"name": nv.name, "index": 0}, "train": train,
                      "eval": nv.window("eval"), "total": total, "steady": steady,
                      "price_per_gpu_hour": price, "price_source": "as the hwt rows",
                      "cost_usd": {"train": train["seconds"] / 3600 * price,
                                   "total": total["seconds"] / 3600 * price}}}
    with open(os.path.join(out, "run.json"), "w") as f:
        json.dump(record, f, indent=1)
    with open(os.path.join(out, "metrics.jsonl"), "w") as f:
        f.writelines(json.dumps(l) + "\n" for l in lines)
    nv.stop = True


def steady(folder):
    """Seconds and joules of the steps after the first logged interval, and how many steps."""
    run = json.load(open(os.path.join(folder, "run.json")))
    if "steady" in run["telemetry"]:
        w = run["telemetry"]["steady"]
        return w["seconds"], w["gpu_energy_j"], run["results"]["steps"] - LOG_EVERY
    lines = [json.loads(l) for l in open(os.path.join(folder, "metrics.jsonl"))]
    lines = [l for l in lines if "tokens_per_s" in l]
    secs = joules = 0.0
    for prev, line in zip(lines, lines[1:]):
        secs += (line["step"] - prev["step"]) * BATCH * SEQ / line["tokens_per_s"]
        joules += line["gpu_energy_j"]
    return secs, joules, lines[-1]["step"] - lines[0]["step"]


def table(out):
    runs = os.path.join(out, "runs")
    cmp = json.load(open(os.path.join(out, "compare", "compare.json")))
    scored = {r["run"]: r["scores"] for r in cmp["runs"]}
    sets = [s["name"] for s in cmp["weight_sets"]]
    # MFU over the steady steps: hwt's traced FLOPs of the model (run.json "mfu", over its whole
    # training window) scaled to each row's steady step time; PyTorch rows take the hwt row of
    # the same peak (fp32, or bf16 for autocast), as they train the same model.
    mfu_of, rows = {}, []
    for name in ORDER:
        folder = os.path.join(runs, name)
        if not os.path.exists(os.path.join(folder, "run.json")):
            continue
        run = json.load(open(os.path.join(folder, "run.json")))
        tel = run["telemetry"]
        secs, joules, n = steady(folder)
        if tel.get("mfu") is not None:
            mfu_of.setdefault(run["config"]["train.precision"],
                              tel["mfu"] * tel["train"]["seconds"] / run["results"]["steps"])
        rows.append((name, run, tel, secs / n, joules / n))
    print("| row | steady s / 1,000 steps | steady kJ / 1,000 steps | MFU (steady) | whole run: "
          "train s | energy kJ | cost USD | mean power W | utilisation % |")
    print("|---|---|---|---|---|---|---|---|---|")
    base = rows[0][3] if rows else 1
    for name, run, tel, step_s, step_j in rows:
        mfu_step_s = mfu_of.get(run["config"]["train.precision"])
        mfu = f"{100 * mfu_step_s / step_s:.1f}%" if mfu_step_s else "—"
        print(f"| {name} | {1e3 * step_s:.1f} ({base / step_s:.2f}×) | {step_j:.1f} | {mfu} | "
              f"{tel['train']['seconds']:.1f} | {tel['total']['gpu_energy_j'] / 1e3:.1f} | "
              f"{tel['cost_usd']['total']:.4f} | {tel['train']['gpu_power_mean_w']:.0f} | "
              f"{tel['train']['gpu_util_mean_pct']:.1f} |")
    print()
    print("| row | " + " | ".join(sets) + " |")
    print("|---|" + "---|" * len(sets))
    for name, *_ in rows:
        print(f"| {name} | " + " | ".join(
            f"{scored[name][s]['score']:.3f} (#{scored[name][s]['rank']})" for s in sets) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hwt", help="the hwt binary (a CUDA build)")
    ap.add_argument("--out", help="a new folder for the data, the runs and the comparison")
    ap.add_argument("--steps", type=int, default=250)
    ap.add_argument("--table", metavar="DIR", help="print the tables of a finished --out")
    ap.add_argument("--torch-row", help=argparse.SUPPRESS)
    ap.add_argument("--like", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.table:
        table(a.table)
        return 0
    if a.torch_row:
        torch_row(a.torch_row, a.out, a.steps, a.like)
        return 0
    if not a.hwt or not a.out:
        ap.error("give --hwt and --out (or --table DIR)")
    if os.path.exists(a.out):
        ap.error(f"--out {a.out} exists: give a new folder")
    os.makedirs(os.path.join(a.out, "data"))
    corpus = os.path.join(a.out, "data", "train.tsv")
    write_corpus(corpus)
    plan = os.path.join(a.out, "plan.toml")
    with open(plan, "w") as f:
        f.write('base = "bert_base"\n')
        f.write("set = [" + ", ".join(f'"{s}"' for s in shared_settings(corpus)) + "]\n")
        f.write(f"steps = {a.steps}\n")
        for name, sets in HWT_ROWS.items():
            f.write(f'\n[[run]]\nname = "{name}"\nset = [' +
                    ", ".join(f'"{s}"' for s in sets) + "]\n")
    runs = os.path.join(a.out, "runs")
    subprocess.run([a.hwt, "compare", "--plan", plan, "--out", runs], check=True)
    for name in TORCH_ROWS:
        print(f"== {name}", flush=True)
        subprocess.run([sys.executable, __file__, "--torch-row", name, "--steps", str(a.steps),
                        "--out", os.path.join(runs, name),
                        "--like", os.path.join(runs, "hwt-bf16", "run.json")], check=True)
    subprocess.run([a.hwt, "compare", "--out", os.path.join(a.out, "compare")] +
                   [os.path.join(runs, n) for n in ORDER], check=True)
    table(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
