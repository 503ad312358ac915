"""PyTorch CPU baseline for bench/cpu_train_step.cpp: the same encoder (pre-LN, GELU, learned
positions, first-token classifier, dropout 0.1) trained with AdamW, fp32, on the same threads.
Run with Debian's /usr/bin/python3 (torch 1.13 on OpenBLAS).  Prints one JSON line."""
import argparse
import json
import time

import torch
import torch.nn as nn

p = argparse.ArgumentParser()
for name, default in [("threads", 2), ("layers", 4), ("hidden", 256), ("heads", 4), ("ffn", 1024),
                      ("batch", 32), ("seq", 32), ("steps", 20), ("vocab", 8000)]:
    p.add_argument("--" + name, type=int, default=default)
a = p.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(a.vocab, a.hidden)
        self.pos = nn.Embedding(a.seq, a.hidden)
        self.drop = nn.Dropout(0.1)
        layer = nn.TransformerEncoderLayer(a.hidden, a.heads, a.ffn, dropout=0.1, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.layers = nn.TransformerEncoder(layer, a.layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(a.hidden)
        self.cls = nn.Linear(a.hidden, 2)

    def forward(self, ids):
        x = self.drop(self.tok(ids) + self.pos(torch.arange(ids.shape[1]))[None])
        return self.cls(self.norm(self.layers(x))[:, 0])


model = Encoder()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
ids = torch.randint(3, a.vocab, (a.batch, a.seq))
labels = torch.arange(a.batch) % 2
times = []
for step in range(a.steps + 3):
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(ids), labels)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if step >= 3:
        times.append(1e3 * (time.perf_counter() - t0))
s = sorted(times)
print(json.dumps({"impl": "pytorch " + torch.__version__, "threads": a.threads,
                  "median_ms": s[len(s) // 2], "mean_ms": sum(times) / len(times), "steps": a.steps,
                  "params": sum(p.numel() for p in model.parameters())}))
