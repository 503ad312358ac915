"""PyTorch CPU baseline for bench/cpu_train_step.cpp: the same model trained with AdamW, fp32,
gradient clipping at 1, on the same threads. Without --config, the encoder the C++ side builds
without one (pre-LN, GELU, learned positions, first-token classifier, dropout 0.1); with
--config, that config's model as `HWT config --config NAME` folds it: the pre-LN GELU encoder
classifier (the default job) or the Llama block as a causal language model (RMSNorm, rotary
positions, grouped-query attention, SwiGLU, no biases, tied embeddings).
Run with Debian's /usr/bin/python3 (torch 1.13 on OpenBLAS).  Prints one JSON line."""
import argparse
import json
import math
import os
import subprocess
import time
import tomllib

import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
for name, default in [("threads", 2), ("layers", 4), ("hidden", 256), ("heads", 4), ("ffn", 1024),
                      ("batch", None), ("seq", None), ("steps", 20), ("vocab", 8000)]:
    p.add_argument("--" + name, type=int, default=default)
p.add_argument("--config", help="a config's model, as bench_cpu_train_step --config")
p.add_argument("--hwt", default="build/hwt", help="the hwt binary that folds --config")
p.add_argument("--profile", action="store_true", help="accepted for symmetry; ignored")
a = p.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(0)

m = {"layers": a.layers, "hidden": a.hidden, "heads": a.heads, "kv_heads": 0, "ffn": a.ffn,
     "norm_kind": "layernorm", "position": "learned", "activation": "gelu", "bias": True,
     "causal": False, "head": "classify", "dropout": 0.1, "attn_dropout": 0.1,
     "tie_embeddings": True, "ln_eps": 1e-5, "rope_theta": 10000.0, "rotary_fraction": 1.0,
     "norm": "pre", "pooling": "first", "qk_norm": False, "parallel_residual": False}
batch, seq = 32, 32
if a.config:
    folded = tomllib.loads(subprocess.run([a.hwt, "config", "--config", a.config], check=True,
                                          capture_output=True, text=True).stdout)
    m.update({k: v for k, v in folded["model"].items() if k in m})
    batch, seq = folded["train"]["batch_size"], folded["data"]["max_len"]
batch, seq = a.batch or batch, a.seq or seq
encoder = (m["norm_kind"], m["position"], m["activation"], m["head"], m["causal"]) == \
    ("layernorm", "learned", "gelu", "classify", False)
llama = (m["norm_kind"], m["position"], m["activation"], m["head"], m["causal"], m["bias"]) == \
    ("rmsnorm", "rope", "swiglu", "lm", True, False)
unsupported = [k for k in ("qk_norm", "parallel_residual") if m[k]]
if m["norm"] != "pre" or m["pooling"] != "first" or m["rotary_fraction"] != 1.0:
    unsupported.append("norm/pooling/rotary_fraction")
if not (encoder or llama) or unsupported:
    raise SystemExit(f"cpu_train_step.py: no PyTorch twin for this model ({unsupported or m})")


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        h = m["hidden"]
        self.tok = nn.Embedding(a.vocab, h)
        self.pos = nn.Embedding(seq, h)
        self.drop = nn.Dropout(m["dropout"])
        layer = nn.TransformerEncoderLayer(h, m["heads"], m["ffn"], dropout=m["dropout"],
                                           activation="gelu", batch_first=True, norm_first=True,
                                           layer_norm_eps=m["ln_eps"])
        self.layers = nn.TransformerEncoder(layer, m["layers"], enable_nested_tensor=False)
        self.norm = nn.LayerNorm(h, eps=m["ln_eps"])
        self.cls = nn.Linear(h, 2)

    def forward(self, ids):
        x = self.drop(self.tok(ids) + self.pos(torch.arange(ids.shape[1]))[None])
        return self.cls(self.norm(self.layers(x))[:, 0])


class RMSNorm(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + m["ln_eps"]) * self.weight


def rotate(x, cos, sin):  # rotary positions, halves convention (Llama in transformers)
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


class LlamaBlock(nn.Module):
    def __init__(self):
        super().__init__()
        h, self.heads = m["hidden"], m["heads"]
        self.kv = m["kv_heads"] or self.heads
        self.d = h // self.heads
        self.n1, self.n2 = RMSNorm(h), RMSNorm(h)
        self.qkv = nn.Linear(h, (self.heads + 2 * self.kv) * self.d, bias=False)
        self.o = nn.Linear(h, h, bias=False)
        self.gate_up = nn.Linear(h, 2 * m["ffn"], bias=False)
        self.down = nn.Linear(m["ffn"], h, bias=False)

    def forward(self, x, cos, sin, mask):
        B, S, _ = x.shape
        q, k, v = self.qkv(self.n1(x)).split(
            [self.heads * self.d, self.kv * self.d, self.kv * self.d], dim=-1)
        q = rotate(q.view(B, S, self.heads, self.d).transpose(1, 2), cos, sin)
        k = rotate(k.view(B, S, self.kv, self.d).transpose(1, 2), cos, sin)
        v = v.view(B, S, self.kv, self.d).transpose(1, 2)
        group = self.heads // self.kv
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(self.d)
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, S, -1)
        x = x + self.o(y)
        gate, up = self.gate_up(self.n2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


class LlamaLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(a.vocab, m["hidden"])
        self.blocks = nn.ModuleList(LlamaBlock() for _ in range(m["layers"]))
        self.norm = RMSNorm(m["hidden"])
        d = m["hidden"] // m["heads"]
        inv = 1.0 / (m["rope_theta"] ** (torch.arange(0, d, 2).float() / d))
        ang = torch.outer(torch.arange(seq).float(), inv)
        self.cos, self.sin = torch.cat((ang, ang), -1).cos(), torch.cat((ang, ang), -1).sin()
        self.mask = torch.ones(seq, seq, dtype=torch.bool).triu(1)

    def forward(self, ids):
        x = self.tok(ids)
        for blk in self.blocks:
            x = blk(x, self.cos, self.sin, self.mask)
        return self.norm(x) @ self.tok.weight.t()  # tied embeddings


model = Encoder() if encoder else LlamaLM()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
# The C++ side's ids: 3 + SplitMix64(i) mod (vocab - 3); any fixed ids do the same work.
ids = torch.randint(3, a.vocab, (batch, seq))
if encoder:
    labels = torch.arange(batch) % 2
else:  # next-token targets, the last position ignored
    labels = torch.cat((ids[:, 1:], torch.full((batch, 1), -1)), dim=1)
times = []
for step in range(a.steps + 3):
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    out = model(ids)
    loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), labels.reshape(-1), ignore_index=-1)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if step >= 3:
        times.append(1e3 * (time.perf_counter() - t0))
s = sorted(times)
print(json.dumps({"impl": "pytorch " + torch.__version__, "threads": a.threads,
                  "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "default"),
                  "median_ms": s[len(s) // 2], "mean_ms": sum(times) / len(times),
                  "steps": a.steps, "params": sum(p.numel() for p in model.parameters())}))
