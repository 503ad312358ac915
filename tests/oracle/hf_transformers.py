"""Parity fixtures made by transformers itself (run where it is installed: the GPU machine).

  hf_transformers.py import OUT_DIR      one folder per case: a small random model of each
                                         architecture hwt imports, saved with save_pretrained,
                                         and expected.json
  hf_transformers.py export DIR...       for folders `hwt export` wrote: load each with
                                         from_pretrained and write its expected.json there
  hf_transformers.py finetune OUT_DIR    a small Llama saved in OUT_DIR/finetune_llama, then
                                         fine-tuned for 50 AdamW steps on random batches:
                                         finetune.json holds the batches, the optimizer's
                                         settings and the loss of every step

expected.json holds what transformers computes in float32 on the CPU for the prompt `ids`: the
logits of every position (flattened, [len(ids), classes]), the language-model loss with
labels = ids (a causal LM's shifted mean cross-entropy), the 64 greedy tokens generate() gives
after the prompt (causal LMs), the smallest gap between the first and second logit over those
steps (how far a rounding difference is from changing a token), and the keys from_pretrained
reported missing, unexpected or mismatched. tests/interop_transformers_test.cpp reads them;
tests/fixtures/hf_transformers holds one run's output for the CPU CI.

The cases vary what real checkpoints vary: tied and untied heads, K/V head counts (MHA, GQA,
MQA), rope theta and Llama 3's scaling, attention biases (Llama's attention_bias, Qwen2's q/k/v
biases), GPT-NeoX's partial rotary and sequential or parallel residual, vocabularies that are
not multiples of 64, and weights stored in bf16.
"""
import json
import os
import sys
import traceback

import torch
import transformers as tf

GREEDY = 64
PROMPT = 8


def small(**kw):
    """Fields every case shares: unit-scale logits (initializer_range 0.1), no dropout."""
    base = dict(initializer_range=0.1)
    base.update(kw)
    return base


def llama_like(vocab, kv, **kw):
    return small(vocab_size=vocab, hidden_size=64, intermediate_size=176, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=kv, max_position_embeddings=128,
                 rms_norm_eps=1e-5, hidden_act="silu", **kw)


CASES = {
    "gpt2": (tf.GPT2LMHeadModel, tf.GPT2Config, small(
        vocab_size=1000, n_positions=128, n_embd=64, n_layer=2, n_head=4,
        activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)),
    "llama_tied_gqa": (tf.LlamaForCausalLM, tf.LlamaConfig, llama_like(
        517, 2, tie_word_embeddings=True, rope_theta=10000.0)),
    "llama3_scaled_mqa": (tf.LlamaForCausalLM, tf.LlamaConfig, llama_like(
        301, 1, tie_word_embeddings=False, rope_theta=500000.0,
        rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                      "high_freq_factor": 4.0, "original_max_position_embeddings": 32})),
    "llama_attention_bias_mha": (tf.LlamaForCausalLM, tf.LlamaConfig, llama_like(
        301, 4, tie_word_embeddings=False, attention_bias=True, mlp_bias=True,
        rope_theta=10000.0)),
    "llama_bf16": (tf.LlamaForCausalLM, tf.LlamaConfig, llama_like(
        517, 2, tie_word_embeddings=False, rope_theta=10000.0)),
    "mistral": (tf.MistralForCausalLM, tf.MistralConfig, llama_like(
        301, 2, tie_word_embeddings=False, rope_theta=10000.0, sliding_window=128)),
    "qwen2": (tf.Qwen2ForCausalLM, tf.Qwen2Config, llama_like(
        517, 2, tie_word_embeddings=True, rope_theta=1000000.0, use_sliding_window=False)),
    "gpt_neox_parallel": (tf.GPTNeoXForCausalLM, tf.GPTNeoXConfig, small(
        vocab_size=301, hidden_size=64, intermediate_size=256, num_hidden_layers=2,
        num_attention_heads=4, max_position_embeddings=128, rotary_pct=0.25,
        rotary_emb_base=10000, use_parallel_residual=True, tie_word_embeddings=False,
        hidden_act="gelu", hidden_dropout=0.0, attention_dropout=0.0)),
    "gpt_neox_sequential": (tf.GPTNeoXForCausalLM, tf.GPTNeoXConfig, small(
        vocab_size=517, hidden_size=64, intermediate_size=256, num_hidden_layers=2,
        num_attention_heads=4, max_position_embeddings=128, rotary_pct=0.5,
        rotary_emb_base=10000, use_parallel_residual=False, tie_word_embeddings=False,
        hidden_act="gelu", hidden_dropout=0.0, attention_dropout=0.0)),
    "bert_tokens": (tf.BertForTokenClassification, tf.BertConfig, small(
        vocab_size=301, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=256, max_position_embeddings=64, num_labels=5,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)),
}


def greedy_with_margin(model, ids):
    """Greedy tokens by a full forward per step (argmax of the last row: what generate() does
    with do_sample=False), the smallest top-1/top-2 gap over the steps, and whether generate()
    with its KV cache gives the same tokens (its end-of-text token switched off, as hwt's test
    generates a fixed count)."""
    seq, margin = list(ids), float("inf")
    with torch.no_grad():
        for _ in range(GREEDY):
            top = model(torch.tensor([seq])).logits[0, -1].topk(2)
            margin = min(margin, float(top.values[0] - top.values[1]))
            seq.append(int(top.indices[0]))
    tokens = seq[len(ids):]
    model.generation_config.eos_token_id = None
    prompt = torch.tensor([ids])
    out = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=GREEDY,
                         do_sample=False, num_beams=1, pad_token_id=0)
    return tokens, margin, out[0, len(ids):].tolist() == tokens


def logits_and_loss(model, ids, causal):
    x = torch.tensor([ids])
    with torch.no_grad():
        out = model(x, labels=x) if causal else model(x)
    return out.logits[0].float(), float(out.loss) if causal else None


def record(folder, model, info, ids, causal, greedy=True):
    logits, loss = logits_and_loss(model, ids, causal)
    e = {"source": "transformers " + tf.__version__ + ", torch " + torch.__version__,
         "architecture": type(model).__name__, "ids": ids,
         "logits": [float(v) for v in logits.flatten()], "classes": logits.shape[-1],
         "missing": sorted(info.get("missing_keys", [])),
         "unexpected": sorted(info.get("unexpected_keys", [])),
         "mismatched": sorted(str(m) for m in info.get("mismatched_keys", []))}
    if causal:
        e["loss"] = loss
        if greedy:
            e["greedy"], e["min_margin"], e["generate_agrees"] = greedy_with_margin(model, ids)
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump(e, f)
    return e


def prompt_for(vocab, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab, (PROMPT,), generator=g).tolist()


def make_import_case(out, name):
    cls, config_cls, fields = CASES[name]
    torch.manual_seed(sum(map(ord, name)))
    model = cls(config_cls(**fields)).eval()
    if name.endswith("_bf16"):
        model = model.to(torch.bfloat16)
    folder = os.path.join(out, name)
    model.save_pretrained(folder)  # safetensors, as transformers' default
    # Logits of the saved weights as from_pretrained gives them, in float32 (bf16 ones upcast).
    model, info = cls.from_pretrained(folder, output_loading_info=True)
    model = model.float().eval()
    causal = cls is not tf.BertForTokenClassification
    vocab = fields["vocab_size"]
    # A prompt whose greedy continuation is far from a tie (rounding must not decide a token).
    best = None
    for seed in range(20):
        ids = prompt_for(vocab, seed)
        e = record(folder, model, info, ids, causal)
        if not causal or e["min_margin"] > 2e-3:
            break
        if best is None or e["min_margin"] > best[1]:
            best = (ids, e["min_margin"])
    else:
        record(folder, model, info, best[0], causal)
    e = json.load(open(os.path.join(folder, "expected.json")))
    print("%-26s %-28s margin %s loss %s generate() agrees %s" % (
        name, e["architecture"], e.get("min_margin"), e.get("loss"), e.get("generate_agrees")),
        flush=True)


def export_check(folder):
    config = json.load(open(os.path.join(folder, "config.json")))
    cls = getattr(tf, config["architectures"][0])
    model, info = cls.from_pretrained(folder, output_loading_info=True)
    model = model.float().eval()
    causal = "CausalLM" in cls.__name__ or "LMHead" in cls.__name__
    vocab = config["vocab_size"]
    e = record(folder, model, info, prompt_for(vocab, 0), causal, greedy=False)
    print("%-26s %-28s missing %s unexpected %s mismatched %s" % (
        os.path.basename(folder), e["architecture"], e["missing"], e["unexpected"],
        e["mismatched"]), flush=True)


FINETUNE = dict(steps=50, batch=4, seq=16, lr=1e-3, beta1=0.9, beta2=0.95, eps=1e-8)


def finetune(out):
    """50 steps of torch.optim.AdamW (no weight decay: hwt leaves norms and biases out of it,
    which this test has no need to mirror; constant rate; no clipping) on the causal LM loss
    with labels = inputs, in float32 on the CPU."""
    cls, config_cls, fields = CASES["llama_tied_gqa"]
    torch.manual_seed(11)
    folder = os.path.join(out, "finetune_llama")
    cls(config_cls(**fields)).save_pretrained(folder)
    model = cls.from_pretrained(folder).float().train()
    f = FINETUNE
    g = torch.Generator().manual_seed(12)
    batches = [torch.randint(0, fields["vocab_size"], (f["batch"], f["seq"]), generator=g)
               for _ in range(f["steps"])]
    opt = torch.optim.AdamW(model.parameters(), lr=f["lr"], betas=(f["beta1"], f["beta2"]),
                            eps=f["eps"], weight_decay=0.0)
    losses = []
    for x in batches:
        loss = model(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
    with open(os.path.join(folder, "finetune.json"), "w") as fh:
        json.dump(dict(f, source="transformers " + tf.__version__ + ", torch " + torch.__version__,
                       batches=[b.tolist() for b in batches], losses=losses), fh)
    print("finetune_llama losses %.5f -> %.5f" % (losses[0], losses[-1]), flush=True)


def main():
    torch.set_num_threads(min(8, os.cpu_count() or 1))
    mode, args = sys.argv[1], sys.argv[2:]
    failed = 0
    if mode == "finetune":
        finetune(args[0])
    elif mode == "import":
        names = args[1:] or list(CASES)
        for name in names:
            try:
                make_import_case(args[0], name)
            except Exception:
                failed += 1
                print("FAILED %s" % name, flush=True)
                traceback.print_exc()
    else:
        for folder in args:
            try:
                export_check(folder)
            except Exception:
                failed += 1
                print("FAILED %s" % folder, flush=True)
                traceback.print_exc()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
