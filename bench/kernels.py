"""PyTorch counterparts of bench_kernels on the same GPU in the same run: device copy,
optimizer steps over the GPT-2 124M parameter set (fused AdamW, a torch._foreach Adan),
layer_norm, causal SDPA (flash) forward/backward and cross-entropy at GPT-2 shapes (bf16), and
grouped-query SDPA on its flash backend at bench_kernels' attention_grouped shapes.
Timed as bench_kernels times hwt (DeviceTiming in src/measure/device_time.h): after warm-up
calls, batches of back-to-back calls lasting at least 2 ms (at most 200 calls) between two
synchronisations, host clock, the median batch's time per call. Prints one JSON line per
measurement.
"""
import json
import math
import time

import torch
import torch.nn.functional as F


def bench(fn, warm=3, batches=20, min_batch_s=2e-3, max_calls=200):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    once = max(time.perf_counter() - t0, 1e-7)
    calls = min(max(math.ceil(min_batch_s / once), 1), max_calls)
    per_call = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        per_call.append((time.perf_counter() - t0) / calls * 1e3)
    per_call.sort()
    return per_call[len(per_call) // 2]


def emit(**kw):
    print(json.dumps({"bench": "kernel", "impl": "torch", **kw}), flush=True)


def adan_foreach(p, g, m, v, n, prev, lr=1e-4, b=(0.98, 0.92, 0.99), eps=1e-8, wd=0.02, k=2):
    """Adan written with torch._foreach ops (what a PyTorch user has without a fused kernel)."""
    d = torch._foreach_sub(g, prev)
    torch._foreach_mul_(m, b[0]); torch._foreach_add_(m, g, alpha=1 - b[0])
    torch._foreach_mul_(v, b[1]); torch._foreach_add_(v, d, alpha=1 - b[1])
    u = torch._foreach_add(g, d, alpha=b[1])
    torch._foreach_mul_(n, b[2]); torch._foreach_addcmul_(n, u, u, value=1 - b[2])
    den = torch._foreach_sqrt(n)
    torch._foreach_div_(den, (1 - b[2] ** k) ** 0.5); torch._foreach_add_(den, eps)
    torch._foreach_addcdiv_(p, m, den, value=-lr / (1 - b[0] ** k))
    torch._foreach_addcdiv_(p, v, den, value=-lr * b[1] / (1 - b[1] ** k))
    torch._foreach_div_(p, 1 + lr * wd)
    for a, c in zip(prev, g):
        a.copy_(c)


def main():
    dev = "cuda"
    x = torch.randn(1 << 28, device=dev)
    y = torch.empty_like(x)
    ms = bench(lambda: y.copy_(x))
    emit(op="copy 1 GiB", ms=ms, GBps=round(2 * x.numel() * 4 / ms / 1e6))
    del x, y
    shapes = [(50304, 768), (1024, 768)] + [(2304, 768), (2304,), (768, 768), (768,), (3072, 768),
                                           (3072,), (768, 3072), (768,), (768,), (768,), (768,),
                                           (768,)] * 12 + [(768,), (768,)]
    ps = [torch.randn(s, device=dev) for s in shapes]
    n = sum(p.numel() for p in ps)
    for p in ps:
        p.grad = torch.randn_like(p)
    opt = torch.optim.AdamW(ps, lr=1e-4, fused=True)
    ms = bench(opt.step)
    emit(op="adamw_step 124M fused", ms=ms, GBps=round(28 * n / ms / 1e6), params=n)
    st = [[torch.zeros_like(p) for p in ps] for _ in range(4)]
    gs = [p.grad for p in ps]
    ms = bench(lambda: adan_foreach(ps, gs, *st))
    emit(op="adan_step 124M foreach", ms=ms, GBps=round(44 * n / ms / 1e6), params=n)
    del ps, st, gs, opt

    B, T, H, D, C, V = 16, 1024, 12, 64, 768, 50304
    bf = torch.bfloat16
    h = torch.randn(B * T, C, device=dev, dtype=bf, requires_grad=True)
    ln = torch.nn.LayerNorm(C, device=dev, dtype=bf)
    ms = bench(lambda: ln(h))
    emit(op="layernorm_forward", ms=ms, GBps=round(2 * h.numel() * 2 / ms / 1e6))
    out = ln(h)
    go = torch.randn_like(out)
    ms = bench(lambda: torch.autograd.grad(out, (h,), go, retain_graph=True))
    emit(op="layernorm_backward (input grad)", ms=ms)
    q, k, v = (torch.randn(B, H, T, D, device=dev, dtype=bf, requires_grad=True) for _ in range(3))
    ms = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
    fl = 4 * B * H * T * T * D / 2
    emit(op="attention_forward causal (sdpa)", ms=ms, TFLOPs=round(fl / ms / 1e9, 1))
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    do = torch.randn_like(o)
    ms = bench(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True))
    emit(op="attention_backward causal (sdpa)", ms=ms, TFLOPs=round(2.5 * fl / ms / 1e9, 1))
    del q, k, v, o, do
    logits = torch.randn(B * T, V, device=dev, dtype=bf, requires_grad=True)
    tgt = torch.randint(0, V, (B * T,), device=dev)

    def ce():
        loss = F.cross_entropy(logits, tgt)
        torch.autograd.grad(loss, (logits,))
    ms = bench(ce)
    emit(op="cross_entropy+grad vocab 50304", ms=ms, GBps=round(3 * logits.numel() * 2 / ms / 1e6))
    del logits, tgt
    attention_head_sizes(dev)
    attention_grouped(dev)


def attention_head_sizes(dev):
    """Causal SDPA at bench_kernels' head-size shapes: B8 T1024, 16 heads, bf16 at every head
    size hwt builds kernels for; fp32 with TF32 allowed at 64 and 128."""
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    B, T, H = 8, 1024, 16
    for dt, sizes in ((torch.bfloat16, (32, 64, 80, 96, 128, 256)), (torch.float32, (64, 128))):
        for D in sizes:
            tag = f"causal {'bf16' if dt == torch.bfloat16 else 'tf32'} D{D}"
            q, k, v = (torch.randn(B, H, T, D, device=dev, dtype=dt, requires_grad=True)
                       for _ in range(3))
            fl = 4 * B * H * T * T * D / 2
            ms = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
            emit(op=f"attention_forward {tag} (sdpa)", ms=ms, TFLOPs=round(fl / ms / 1e9, 1))
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            do = torch.randn_like(o)
            ms = bench(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True))
            emit(op=f"attention_backward {tag} (sdpa)", ms=ms, TFLOPs=round(2.5 * fl / ms / 1e9, 1))
            del q, k, v, o, do


def attention_grouped(dev):
    """Causal bf16 SDPA with enable_gqa at bench_kernels' attention_grouped shapes: B8 T1024, 16
    query heads of size 64 and 128 over 16, 8, 4, 2 and 1 K/V heads, restricted to the flash
    backend (a shape it refuses is reported, not timed on another backend). Forward, backward
    (autograd.grad of a kept forward) and forward + backward."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    B, T, H = 8, 1024, 16
    for D in (64, 128):
        for kv in (16, 8, 4, 2, 1):
            tag = f"causal bf16 D{D} kv{kv}"
            q = torch.randn(B, H, T, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
            k, v = (torch.randn(B, kv, T, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
                    for _ in range(2))
            fl = 4 * B * H * T * T * D / 2

            def fwd():
                return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                try:
                    o = fwd()
                except RuntimeError as e:
                    emit(op=f"attention_forward {tag} (sdpa flash)", error=str(e).splitlines()[0])
                    continue
                do = torch.randn_like(o)
                ms = bench(fwd)
                emit(op=f"attention_forward {tag} (sdpa flash)", ms=ms,
                     TFLOPs=round(fl / ms / 1e9, 1))
                ms = bench(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True))
                emit(op=f"attention_backward {tag} (sdpa flash)", ms=ms,
                     TFLOPs=round(2.5 * fl / ms / 1e9, 1))
                ms = bench(lambda: torch.autograd.grad(fwd(), (q, k, v), do))
                emit(op=f"attention_forward+backward {tag} (sdpa flash)", ms=ms,
                     TFLOPs=round(3.5 * fl / ms / 1e9, 1))
            del q, k, v, o, do


if __name__ == "__main__":
    main()
