"""PyTorch oracle for hwt's whole-model parity tests (run with Debian's /usr/bin/python3, torch 1.13).

Reads a JSON case written by tests/torch_parity_test.cpp: the model config, every parameter
under hwt's names, batches and optimizer settings. Rebuilds the same transformer with plain
torch ops in float64 from the parts' definitions (LayerNorm or RMSNorm, learned or rotary
positions, QK-norm, multi-head or grouped-query attention, GELU/ReLU or gated SwiGLU/GeGLU MLPs, with
or without biases), then writes the logits, every parameter gradient of the first batch and
the loss of each of N optimizer steps (AdamW via torch.optim, Adan written from Xie et al. 2022 and sail-sg/Adan).

With "bf16" the same model runs in PyTorch's mixed precision, rounded where hwt rounds: fp32
weights and optimizer, the forward under bf16 autocast (on the GPU when there is one), the
residual stream stored in bf16, norms computed in fp32. Its distance from the float64 run is
the bf16 error of the case itself, the yardstick for hwt's.

usage: torch_transformer.py CASE.json OUT.json [bf16]
"""
import json
import math
import sys

import torch
import torch.nn.functional as F

BF16 = sys.argv[3:] == ["bf16"]
DEVICE = "cuda" if BF16 and torch.cuda.is_available() else "cpu"
torch.set_default_dtype(torch.float32 if BF16 else torch.float64)


def tensor(data, dtype=None):
    return torch.tensor(data, dtype=dtype, device=DEVICE)


def arange(n):
    return torch.arange(n, device=DEVICE)


def stored(x):
    """x as the residual stream keeps it: bf16 in the bf16 run, as hwt stores activations."""
    return x.to(torch.bfloat16) if BF16 else x


def activation(name, x):
    if name == "gelu":
        return F.gelu(x)
    if name == "gelu_tanh":
        return F.gelu(x, approximate="tanh")
    if name == "relu":
        return F.relu(x)
    raise ValueError(name)


def mlp_activation(name, h):
    """The MLP's activation of the first projection's output; gated kinds split it (gate | up)."""
    if name in ("swiglu", "geglu"):
        gate, up = h.chunk(2, dim=-1)
        g = F.silu(gate) if name == "swiglu" else F.gelu(gate, approximate="tanh")
        return g * up
    return activation(name, h)


def rope_inverse_frequencies(c, dim):
    """theta^(-2i/dim), with Llama 3's scaling (Meta's apply_scaling) when its factor is set."""
    inv = [c["rope_theta"] ** (-2 * i / dim) for i in range(dim // 2)]
    factor = c["rope_scaling_factor"]
    if factor == 0:
        return tensor(inv, torch.float64)
    old = c["rope_original_max_seq"]
    low, high = c["rope_low_freq_factor"], c["rope_high_freq_factor"]
    out = []
    for f in inv:
        wavelength = 2 * math.pi / f
        if wavelength < old / high:
            out.append(f)
        elif wavelength > old / low:
            out.append(f / factor)
        else:
            smooth = (old / wavelength - low) / (high - low)
            out.append((1 - smooth) * f / factor + smooth * f)
    return tensor(out, torch.float64)


def rotate(x, c):
    """Rotary embedding of x [B, heads, S, d] in the rotate-half layout (GPT-NeoX, Llama).

    The angles in float64 (as hwt computes its tables); cos, sin and the products in fp32 in the
    bf16 run, on q and k as stored, rounded once afterwards (by the attention's products under
    autocast), as hwt rotates them."""
    x = x.to(torch.get_default_dtype())
    S, d = x.shape[2], x.shape[3]
    dim = int(c["rotary_fraction"] * d)
    dim -= dim % 2
    angles = arange(S).double()[:, None] * rope_inverse_frequencies(c, dim)[None]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2, rest = x[..., :dim // 2], x[..., dim // 2:dim], x[..., dim:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin, rest], dim=-1)


class Transformer:
    def __init__(self, cfg, params):
        self.c = cfg
        self.p = {k: tensor(v["data"]).reshape(v["shape"]).requires_grad_(True)
                  for k, v in params.items()}

    def ln(self, x, name):
        x = x.to(torch.get_default_dtype())  # norms compute in fp32 from a bf16 input
        w = self.p[name + ".weight"]
        if self.c["norm_kind"] == "rmsnorm":
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.c["ln_eps"]) * w
        return F.layer_norm(x, (self.c["hidden"],), w, self.p[name + ".bias"], self.c["ln_eps"])

    def head_norm(self, x, name):
        """QK-norm in fp32, its output kept as hwt keeps it (bf16 in the bf16 run)."""
        x = x.to(torch.get_default_dtype())
        return stored(x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.c["ln_eps"])
                      * self.p[name + ".weight"])

    def linear(self, x, name):
        return F.linear(x, self.p[name + ".weight"], self.p.get(name + ".bias"))

    def attention(self, x, name, lengths):
        B, S, H = x.shape
        nh = self.c["heads"]
        kv = self.c["kv_heads"] or nh
        d = H // nh
        q, k, v = self.linear(x, name + ".qkv").split([nh * d, kv * d, kv * d], dim=2)
        q = q.view(B, S, nh, d).transpose(1, 2)
        k, v = (t.view(B, S, kv, d).transpose(1, 2) for t in (k, v))
        if self.c["qk_norm"]:  # RMSNorm over each head, before the rotation (Qwen3)
            q, k = (self.head_norm(t, name + part) for t, part in ((q, ".q_norm"), (k, ".k_norm")))
        if self.c["position"] == "rope":
            q, k = rotate(q, self.c), rotate(k, self.c)
        # Grouped-query attention: each K/V head serves nh / kv consecutive query heads.
        k, v = (t.repeat_interleave(nh // kv, dim=1) for t in (k, v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d)
        keys = arange(S)
        mask = keys[None, :] >= lengths[:, None]                     # [B, S] padded keys
        mask = mask[:, None, None, :].expand(B, 1, S, S)
        if self.c["causal"]:
            mask = mask | (keys[None, :] > keys[:, None])[None, None]
        scores = scores.masked_fill(mask, float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v
        return self.linear(y.transpose(1, 2).reshape(B, S, H), name + ".out")

    def forward(self, batch):
        B, S = batch["batch"], batch["seq"]
        ids = tensor(batch["ids"]).view(B, S)
        lengths = tensor(batch["lengths"])
        pre = self.c["norm"] == "pre"
        x = self.p["embed.tokens"][ids]
        if self.c["position"] == "learned":
            x = x + self.p["embed.positions"][:S][None]
        if not pre:
            x = self.ln(x, "embed.ln")
        x = stored(x)
        for i in range(self.c["layers"]):
            n = f"layers.{i}."
            if self.c["parallel_residual"]:
                a = self.attention(self.ln(x, n + "ln1"), n + "attn", lengths)
                f = mlp_activation(self.c["activation"],
                                   self.linear(self.ln(x, n + "ln2"), n + "mlp.fc1"))
                x = stored(x + a + self.linear(f, n + "mlp.fc2"))
            elif pre:
                x = stored(x + self.attention(self.ln(x, n + "ln1"), n + "attn", lengths))
                f = mlp_activation(self.c["activation"],
                                   self.linear(self.ln(x, n + "ln2"), n + "mlp.fc1"))
                x = stored(x + self.linear(f, n + "mlp.fc2"))
            else:
                x = stored(self.ln(x + self.attention(x, n + "attn", lengths), n + "ln1"))
                f = mlp_activation(self.c["activation"], self.linear(x, n + "mlp.fc1"))
                x = stored(self.ln(x + self.linear(f, n + "mlp.fc2"), n + "ln2"))
        if pre:
            x = self.ln(x, "final_ln")
        out, loss = {}, torch.zeros((), device=DEVICE)
        head = self.c["head"]
        if head in ("classify", "joint"):
            if self.c["pooling"] == "first":
                pooled = x[:, 0]
            else:
                valid = (arange(S)[None, :] < lengths[:, None]).to(x.dtype)
                pooled = (x * valid[..., None]).sum(1) / lengths[:, None].to(x.dtype)
            logits = self.linear(pooled, "head.classifier")
            out["seq_logits"] = logits
            loss = loss + F.cross_entropy(logits, tensor(batch["seq_labels"]), ignore_index=-1)
        if head in ("tokens", "joint", "lm"):
            if head == "lm":
                w = self.p["embed.tokens"] if self.c["tie_embeddings"] else self.p["head.lm.weight"]
                logits = F.linear(x, w)
            else:
                logits = self.linear(x, "head.tokens")
            logits = logits.reshape(B * S, -1)
            out["token_logits"] = logits
            loss = loss + F.cross_entropy(logits, tensor(batch["token_labels"]), ignore_index=-1)
        return out, loss


def run_forward(model, batch):
    if not BF16:
        return model.forward(batch)
    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        return model.forward(batch)


def flat(t):
    return t.detach().double().reshape(-1).tolist()


class Adan:
    """Adan as sail-sg/Adan computes it (code-convention betas, d_1 = 0, prox decay)."""

    def __init__(self, groups, lr, betas, eps, no_prox):
        self.groups, self.lr, self.b, self.eps, self.no_prox = groups, lr, betas, eps, no_prox
        self.k = 0
        self.state = {}

    @torch.no_grad()
    def step(self):
        self.k += 1
        b1, b2, b3 = self.b
        lr, k = self.lr, self.k
        for params, wd in self.groups:
            for p in params:
                g = p.grad
                s = self.state.setdefault(id(p), {"m": torch.zeros_like(p), "v": torch.zeros_like(p),
                                                   "n": torch.zeros_like(p), "prev": g.clone()})
                d = g - s["prev"] if k > 1 else torch.zeros_like(g)
                s["m"].mul_(b1).add_(g, alpha=1 - b1)
                s["v"].mul_(b2).add_(d, alpha=1 - b2)
                s["n"].mul_(b3).add_((g + b2 * d) ** 2, alpha=1 - b3)
                denom = s["n"].sqrt() / math.sqrt(1 - b3 ** k) + self.eps
                if self.no_prox:
                    p.mul_(1 - lr * wd)
                p.sub_(lr / (1 - b1 ** k) * s["m"] / denom + lr * b2 / (1 - b2 ** k) * s["v"] / denom)
                if not self.no_prox:
                    p.div_(1 + lr * wd)
                s["prev"] = g.clone()


def main():
    case = json.load(open(sys.argv[1]))
    model = Transformer(case["config"], case["params"])
    batches = case["batches"]
    result = {}

    out, loss = run_forward(model, batches[0])
    loss.backward()
    for k, v in out.items():
        result[k] = flat(v)
    result["loss"] = loss.item()
    result["grads"] = {k: flat(p.grad) for k, p in model.p.items()}

    o = case["optim"]
    decay = [model.p[n] for n in case["decay"]]
    no_decay = [p for n, p in model.p.items() if n not in set(case["decay"])]
    for p in model.p.values():
        p.grad = None
    if o["name"] == "adamw":
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": o["weight_decay"]},
                                 {"params": no_decay, "weight_decay": 0.0}],
                                lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"])
    else:
        opt = Adan([(decay, o["weight_decay"]), (no_decay, 0.0)], o["lr"],
                   (o["beta1"], o["beta2"], o["beta3"]), o["eps"], o["no_prox"])
    start = {k: p.detach().clone() for k, p in model.p.items()}
    losses = []
    for step in range(case["steps"]):
        for p in model.p.values():
            p.grad = None
        _, loss = run_forward(model, batches[step % len(batches)])
        loss.backward()
        if o["max_grad_norm"] > 0:
            torch.nn.utils.clip_grad_norm_(list(model.p.values()), o["max_grad_norm"])
        opt.step()
        losses.append(loss.item())
    result["losses"] = losses
    result["updates"] = {k: flat(p - start[k]) for k, p in model.p.items()}
    json.dump(result, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
