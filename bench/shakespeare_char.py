"""PyTorch on the run of configs/shakespeare_char.toml, for the comparison with `hwt train` in the
same call (bench/shakespeare_vs_torch.sh): the same model (6 layers, 6 heads, 384 wide, context
256, tied embeddings, dropout 0.2, bf16 autocast) compiled with torch.compile, batch 64, AdamW
(lr 1e-3 with 100 warm-up steps and a cosine to 1e-4, beta2 0.99, weight decay 0.1 on matrices,
gradients clipped to 1.0), 5000 steps; every 250 steps, the loss over all non-overlapping
256-character windows of the last 10% of the text, as hwt evaluates its validation split. Compilation of the training and evaluation graphs happens before the clock starts.
Prints one JSON line.
    python3 bench/shakespeare_char.py --data input.txt [--steps N]
"""
import argparse
import json
import math
import time

import torch

from train_step import GPT

B, T = 64, 256


def learning_rate(step, steps, lr=1e-3, min_lr=1e-4, warmup=100):
    if step <= warmup:
        return lr * step / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return min_lr + 0.5 * (lr - min_lr) * (1 + math.cos(math.pi * progress))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="tiny Shakespeare input.txt")
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--eval-every", type=int, default=250)
    args = ap.parse_args()
    torch.manual_seed(1234)
    dev = "cuda"
    text = open(args.data, encoding="utf-8").read()
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    ids = torch.tensor([index[c] for c in text], dtype=torch.long, device=dev)
    split = int(0.9 * len(ids))
    train, valid = ids[:split], ids[split:]
    offsets = torch.arange(T, device=dev)

    def batch(data):
        start = torch.randint(len(data) - T - 1, (B, 1), device=dev)
        return data[start + offsets], data[start + offsets + 1]

    windows = (len(valid) - 1) // T
    valid_x = valid[:windows * T].view(windows, T)
    valid_y = valid[1:windows * T + 1].view(windows, T)

    model = GPT(vocab=len(chars), ctx=T, d=384, layers=6, heads=6, drop=0.2).to(dev)
    # Static shapes: the evaluation's last, shorter batch gets a graph of its own instead of
    # turning the training graph into a dynamic-shape one.
    run = torch.compile(model, dynamic=False)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    other = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": other, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.99), fused=True)

    def train_step(step):
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, args.steps)
        x, y = batch(train)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = run(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    @torch.no_grad()
    def evaluate():
        model.eval()
        total = torch.zeros((), device=dev)
        for i in range(0, windows, B):
            x, y = valid_x[i:i + B], valid_y[i:i + B]
            with torch.autocast("cuda", dtype=torch.bfloat16):
                total += run(x, y).float() * len(x)
        model.train()
        return total.item() / windows

    # Compile the graphs (training with dropout, evaluation without) before timing; a backward
    # without an optimizer step leaves the weights as they were.
    t0 = time.perf_counter()
    x, y = batch(train)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        run(x, y).backward()
    opt.zero_grad(set_to_none=True)
    evaluate()  # full batches and the last, shorter one
    torch.cuda.synchronize()
    compile_s = time.perf_counter() - t0

    eval_s = 0.0
    curve = []
    start = time.perf_counter()
    for step in range(1, args.steps + 1):
        train_step(step)
        if step % args.eval_every == 0 or step == args.steps:
            torch.cuda.synchronize()
            t = time.perf_counter()
            curve.append((step, round(evaluate(), 4)))
            eval_s += time.perf_counter() - t
    torch.cuda.synchronize()
    total_s = time.perf_counter() - start
    train_s = total_s - eval_s
    best = min(curve, key=lambda c: c[1])
    print(json.dumps({
        "bench": "shakespeare_char", "impl": "torch_compile", "torch": torch.__version__,
        "steps": args.steps, "total_s": round(total_s, 2), "train_s": round(train_s, 2),
        "eval_s": round(eval_s, 2), "compile_s_excluded": round(compile_s, 1),
        "ms_per_step": round(1e3 * train_s / args.steps, 3), "best_valid": best[1],
        "best_step": best[0], "final_valid": curve[-1][1], "curve": curve}), flush=True)


if __name__ == "__main__":
    main()
