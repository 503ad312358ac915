"""PyTorch baselines for bench_train_step on the same GPU in the same run, eager or with
torch.compile. Prints one JSON line per measurement (median step time, as bench_train_step).
  --model gpt2     pre-LN GPT (GELU tanh, tied input and output embeddings) as hwt's decoder
                   presets: GPT-2 124M, B16 T1024, unless the shape options say otherwise
  --model encoder  the encoder of hwt's bert_base preset with the shape options: post-LN, exact
                   GELU, layernorm epsilon 1e-12, the first token's state classified into 2
                   classes (no token-type embeddings, no pooler layer); dropout off
  --model bert     Hugging Face BertForSequenceClassification, BERT-base, B32 T128, dropout 0.1
                   (the shape options do not apply)
  --model llama    Hugging Face LlamaForCausalLM (SDPA attention) with the shape options and
                   --kv-heads, --untied: RMSNorm, rotary positions, SwiGLU, no biases, as hwt's
                   presets in Llama's block (e.g. SmolLM-135M: --hidden 576 --heads 9
                   --kv-heads 3 --ffn 1536 --layers 30 --vocab 49152)
bf16 autocast, or fp32 with TF32 matrix products (--precision fp32, as hwt's
train.precision=tf32). Fused AdamW, lr 1e-4, weight decay 0.1 on matrices and embeddings (as hwt
applies it), gradients clipped to 1.0. --vocab 50257 is GPT-2's own vocabulary (as PyTorch users
write it), 50304 the padded one. bench/shape_matrix.py runs this across model shapes.
    python3 bench/train_step.py [--model gpt2|encoder|bert|llama] [--compile] [--steps N]
        [--precision bf16|fp32] [--vocab V] [--hidden H] [--heads N] [--kv-heads N]
        [--layers L] [--ffn F] [--untied] [--seq T] [--batch B]
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
    """Pre-LN (GPT-2) or post-LN (BERT) block, causal or bidirectional (no padding)."""

    def __init__(self, d, heads, ffn, drop=0.0, causal=True, post_ln=False, gelu="tanh",
                 eps=1e-5):
        super().__init__()
        self.heads, self.p, self.causal, self.post_ln = heads, drop, causal, post_ln
        self.gelu = gelu  # "tanh" (GPT-2) or "none" (exact, BERT)
        self.ln1, self.ln2 = nn.LayerNorm(d, eps=eps), nn.LayerNorm(d, eps=eps)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, ffn), nn.Linear(ffn, d)

    def attention(self, x, p):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, 2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=self.causal)
        return dropout(self.proj(a.transpose(1, 2).reshape(b, t, c)), p)

    def mlp(self, x, p):
        return dropout(self.out(F.gelu(self.fc(x), approximate=self.gelu)), p)

    def forward(self, x):
        p = self.p if self.training else 0.0
        if self.post_ln:
            x = self.ln1(x + self.attention(x, p))
            return self.ln2(x + self.mlp(x, p))
        x = x + self.attention(self.ln1(x), p)
        return x + self.mlp(self.ln2(x), p)


def init_gpt2(model):
    """GPT-2's initialisation, as hwt's: N(0, 0.02) weights, zero biases."""
    for m in model.modules():
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.bias)


class GPT(nn.Module):
    """Pre-LN GPT with tied input and output embeddings, as hwt's decoder presets."""

    def __init__(self, vocab=50304, ctx=1024, d=768, layers=12, heads=12, drop=0.0, ffn=None):
        super().__init__()
        self.p = drop
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, heads, ffn or 4 * d, drop) for _ in range(layers))
        self.lnf = nn.LayerNorm(d)
        init_gpt2(self)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        x = dropout(x, self.p if self.training else 0.0)
        for blk in self.blocks:
            x = blk(x)
        logits = F.linear(self.lnf(x), self.wte.weight)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


class Encoder(nn.Module):
    """hwt's encoder as its bert_base preset configures it (model.norm = "post"): layernorm after
    the embeddings and after each residual sum, the first token's final state classified."""

    def __init__(self, vocab=30522, ctx=512, d=768, layers=12, heads=12, ffn=None, labels=2,
                 drop=0.0):
        super().__init__()
        self.p = drop
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.ln = nn.LayerNorm(d, eps=1e-12)
        self.blocks = nn.ModuleList(
            Block(d, heads, ffn or 4 * d, drop, causal=False, post_ln=True, gelu="none",
                  eps=1e-12)
            for _ in range(layers))
        self.classifier = nn.Linear(d, labels)
        init_gpt2(self)

    def forward(self, idx, labels):
        x = self.ln(self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device)))
        x = dropout(x, self.p if self.training else 0.0)
        for blk in self.blocks:
            x = blk(x)
        return F.cross_entropy(self.classifier(x[:, 0]), labels)


def measure(step, warm, steps):
    """Median milliseconds of `steps` steps after `warm` untimed ones, and the seconds of the
    first step (with --compile, the compilation)."""
    t0 = time.perf_counter()
    step()
    torch.cuda.synchronize()
    first_s = time.perf_counter() - t0
    for _ in range(warm - 1):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return times[len(times) // 2], first_s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt2", choices=["gpt2", "encoder", "bert", "llama"])
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--precision", default="bf16", choices=["bf16", "fp32"],
                    help="fp32: TF32 matrix products")
    shape = ap.add_argument_group("shape of gpt2 and encoder (defaults: GPT-2 124M)")
    shape.add_argument("--vocab", type=int, default=50304)
    shape.add_argument("--hidden", type=int, default=768)
    shape.add_argument("--heads", type=int, default=12)
    shape.add_argument("--layers", type=int, default=12)
    shape.add_argument("--ffn", type=int, default=0, help="0: 4 x hidden")
    shape.add_argument("--seq", type=int, default=1024)
    shape.add_argument("--batch", type=int, default=16)
    shape.add_argument("--kv-heads", type=int, default=0, help="llama: 0 = heads")
    shape.add_argument("--untied", action="store_true", help="llama: separate LM head")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    dev = "cuda"
    B, T, V = args.batch, args.seq, args.vocab
    dims = dict(d=args.hidden, layers=args.layers, heads=args.heads,
                ffn=args.ffn or 4 * args.hidden)
    ids = lambda vocab: torch.randint(0, vocab, (B, T), device=dev)
    if args.model == "gpt2":
        model = GPT(vocab=V, ctx=T, **dims).to(dev)
        x, y = ids(V), ids(V)
        fwd = lambda m: m(x, y)
    elif args.model == "encoder":
        model = Encoder(vocab=V, ctx=T, **dims).to(dev)
        x, y = ids(V), torch.randint(0, 2, (B,), device=dev)
        fwd = lambda m: m(x, y)
    elif args.model == "llama":
        from transformers import LlamaConfig, LlamaForCausalLM
        config = LlamaConfig(vocab_size=V, hidden_size=args.hidden,
                             intermediate_size=dims["ffn"], num_hidden_layers=args.layers,
                             num_attention_heads=args.heads,
                             num_key_value_heads=args.kv_heads or args.heads,
                             max_position_embeddings=T, tie_word_embeddings=not args.untied,
                             attn_implementation="sdpa")
        model = LlamaForCausalLM(config).to(dev)
        x, y = ids(V), ids(V)
        fwd = lambda m: m(input_ids=x, labels=y).loss
    else:
        from transformers import BertConfig, BertForSequenceClassification
        config = BertConfig()
        B, T, V = 32, 128, config.vocab_size
        dims = dict(d=config.hidden_size, layers=config.num_hidden_layers,
                    heads=config.num_attention_heads, ffn=config.intermediate_size)
        model = BertForSequenceClassification(config).to(dev)
        x, y = ids(V), torch.randint(0, 2, (B,), device=dev)
        fwd = lambda m: m(input_ids=x, labels=y).loss
    model.train()
    decay = [p for p in model.parameters() if p.dim() >= 2]
    other = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": other, "weight_decay": 0.0}], lr=1e-4, fused=True)
    run = torch.compile(model) if args.compile else model

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.precision == "bf16"):
            loss = fwd(run)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    torch.cuda.reset_peak_memory_stats()
    ms, first_s = measure(step, 5 if args.compile else 3, args.steps)
    print(json.dumps({
        "bench": "train_step", "impl": "torch_compile" if args.compile else "torch_eager",
        "model": args.model, "precision": args.precision, "vocab": V, "hidden": dims["d"],
        "heads": dims["heads"], "layers": dims["layers"], "ffn": dims["ffn"],
        "kv_heads": args.kv_heads or dims["heads"],
        "params": sum(p.numel() for p in model.parameters()), "torch": torch.__version__,
        "batch": B, "seq": T, "ms": round(ms, 3), "first_step_s": round(first_s, 2),
        "tokens_per_s": round(B * T * 1000 / ms), "seq_per_s": round(B * 1000 / ms, 1),
        "peak_mem_GB": round(torch.cuda.max_memory_allocated() / 1e9, 3)}), flush=True)


if __name__ == "__main__":
    main()
