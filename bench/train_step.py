"""PyTorch baselines for bench_train_step on the same GPU in the same run: GPT-2 124M
(B16 T1024, bf16 autocast, fused AdamW) and HF BERT-base sequence classification (B32 T128),
each eager and with torch.compile. Prints one JSON line per measurement. --vocab sets GPT-2's
vocabulary as PyTorch users write it (50257 is GPT-2's own; 50304 the padded one).
    python3 bench/train_step.py --model gpt2|bert [--vocab V] [--compile] [--steps N]
"""
import argparse
import json
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def dropout(x, p):
    return F.dropout(x, p) if p > 0 else x  # no kernel at all when off, as in the GPT-2 runs


class Block(nn.Module):
    def __init__(self, d, heads, drop):
        super().__init__()
        self.heads, self.p = heads, drop
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, c = x.shape
        p = self.p if self.training else 0.0
        q, k, v = self.qkv(self.ln1(x)).split(c, 2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        x = x + dropout(self.proj(a.transpose(1, 2).reshape(b, t, c)), p)
        return x + dropout(self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh")), p)


class GPT(nn.Module):
    """Pre-LN GPT with tied input and output embeddings, as hwt's decoder presets."""

    def __init__(self, vocab=50304, ctx=1024, d=768, layers=12, heads=12, drop=0.0):
        super().__init__()
        self.p = drop
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, heads, drop) for _ in range(layers))
        self.lnf = nn.LayerNorm(d)
        for m in self.modules():  # GPT-2's initialisation, as hwt's
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        x = dropout(x, self.p if self.training else 0.0)
        for blk in self.blocks:
            x = blk(x)
        logits = F.linear(self.lnf(x), self.wte.weight)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def measure(step, warm, steps):
    for _ in range(warm):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt2")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--vocab", type=int, default=50304, help="GPT-2 vocabulary")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = True
    dev = "cuda"
    if args.model == "gpt2":
        B, T = 16, 1024
        model = GPT(vocab=args.vocab).to(dev)
        ids = torch.randint(0, args.vocab, (B, T), device=dev)
        tgt = torch.randint(0, args.vocab, (B, T), device=dev)
        fwd = lambda m: m(ids, tgt)
    else:
        from transformers import BertConfig, BertForSequenceClassification
        B, T = 32, 128
        model = BertForSequenceClassification(BertConfig()).to(dev)
        ids = torch.randint(0, 30522, (B, T), device=dev)
        lab = torch.randint(0, 2, (B,), device=dev)
        fwd = lambda m: m(input_ids=ids, labels=lab).loss
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1, fused=True)
    run = torch.compile(model) if args.compile else model

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = fwd(run)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    torch.cuda.reset_peak_memory_stats()
    ms = measure(step, 5 if args.compile else 3, args.steps)
    print(json.dumps({
        "bench": "train_step", "impl": "torch_compile" if args.compile else "torch_eager",
        "model": args.model, "vocab": args.vocab if args.model == "gpt2" else 30522, "torch": torch.__version__, "batch": B, "seq": T, "ms": round(ms, 3),
        "tokens_per_s": round(B * T * 1000 / ms), "seq_per_s": round(B * 1000 / ms, 1),
        "peak_mem_GB": round(torch.cuda.max_memory_allocated() / 1e9, 3)}), flush=True)


if __name__ == "__main__":
    main()
