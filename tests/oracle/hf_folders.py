"""Small Hugging Face model folders for hwt's import tests (Debian's /usr/bin/python3, torch 1.13).

transformers is not installed here, so this writes each folder as save_pretrained would: a
config.json with the architecture's own fields, and the weights under the tensor names, shapes
and layouts of transformers' modeling files (models/gpt2, bert, llama, mistral, qwen2,
gpt_neox): GPT-2's Conv1D weights stored [in, out], GPT-NeoX's query_key_value interleaved per
head (q, k, v of head 0, then of head 1, ...), Llama's separate q/k/v and gate/up/down.
Weights are random, in F32, BF16 or F16, some folders sharded with model.safetensors.index.json.

Next to each folder's weights it writes expected.json: token ids and the logits the
architecture gives for them, computed in float64 with plain torch ops from those definitions
(rotate_half rotary embeddings, repeat_kv grouped-query attention, parallel residual, BERT's
token type 0 embedding) -- written from the transformers sources' structure, not from hwt.

usage: hf_folders.py OUT_DIR
"""
import json
import math
import os
import struct
import sys

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
DTYPES = {torch.float32: "F32", torch.bfloat16: "BF16", torch.float16: "F16"}


def save_safetensors(path, tensors):
    """tensors: {name: torch tensor}; the safetensors layout (8-byte length, JSON, data)."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        data = t.contiguous().view(torch.uint8).numpy().tobytes() if t.dtype != torch.bfloat16 \
            else t.contiguous().view(torch.int16).numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def write_folder(out, name, config, weights, dtype, shards=1, ids=None, logits=None,
                 file_name=lambda k: k):
    """Stores weights rounded to dtype (under file_name(key)); the logits must come from the
    rounded values, which it returns under their keys."""
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    rounded = {k: v.to(dtype) for k, v in weights.items()}
    stored = {file_name(k): v for k, v in rounded.items()}
    names = list(stored)
    if shards == 1:
        save_safetensors(os.path.join(d, "model.safetensors"), stored)
    else:
        weight_map, per = {}, math.ceil(len(names) / shards)
        for s in range(shards):
            file = "model-%05d-of-%05d.safetensors" % (s + 1, shards)
            part = {k: stored[k] for k in names[s * per:(s + 1) * per]}
            weight_map.update({k: file for k in part})
            save_safetensors(os.path.join(d, file), part)
        with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f)
    if ids is not None:
        with open(os.path.join(d, "expected.json"), "w") as f:
            json.dump({"ids": ids.tolist(), "logits": logits.flatten().tolist()}, f)
    return {k: v.to(torch.float64) for k, v in rounded.items()}


def rnd(*shape, std=0.2):
    return torch.randn(*shape) * std


def layer_norm(x, w, b, eps):
    return F.layer_norm(x, (x.shape[-1],), w, b, eps)


def rms_norm(x, w, eps):
    return w * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


def attention(q, k, v, causal):
    """q [heads, s, d], k and v [heads, s, d] (already repeated for grouped K/V)."""
    s = q.shape[1]
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        scores = scores.masked_fill(torch.triu(torch.ones(s, s, dtype=torch.bool), 1), -math.inf)
    return scores.softmax(-1) @ v


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), -1)


def rope(x, theta, rot, inv_freq=None):
    """HF's apply_rotary_pos_emb on the first rot dims of each head of x [heads, s, d]."""
    s = x.shape[1]
    if inv_freq is None:
        inv_freq = 1.0 / theta ** (torch.arange(0, rot, 2) / rot)
    freqs = torch.outer(torch.arange(s, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), -1)
    xr, xp = x[..., :rot], x[..., rot:]
    return torch.cat((xr * emb.cos() + rotate_half(xr) * emb.sin(), xp), -1)


def llama3_inv_freq(theta, dim, factor, low, high, old):
    """transformers' _compute_llama3_parameters."""
    inv = 1.0 / theta ** (torch.arange(0, dim, 2) / dim)
    low_wavelen, high_wavelen = old / low, old / high
    wavelen = 2 * math.pi / inv
    out = torch.where(wavelen > low_wavelen, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * out / factor + smooth * out
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    return torch.where(medium, smoothed, out)


def heads(x, n):  # [s, n*d] -> [n, s, d]
    return x.view(x.shape[0], n, -1).transpose(0, 1)


def merge(x):  # [n, s, d] -> [s, n*d]
    return x.transpose(0, 1).reshape(x.shape[1], -1)


def gpt2(out, name, t):
    """t: where the base model lies in tensor names ("transformer."; "" as the Hub's gpt2 has it)."""
    n, layers, nh, ffn, vocab, pos = 24, 2, 3, 40, 67, 16
    c = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": vocab,
         "n_positions": pos, "n_embd": n, "n_layer": layers, "n_head": nh, "n_inner": ffn,
         "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5, "resid_pdrop": 0.1,
         "embd_pdrop": 0.1, "attn_pdrop": 0.1, "tie_word_embeddings": True}
    w = {t + "wte.weight": rnd(vocab, n), t + "wpe.weight": rnd(pos, n)}
    for i in range(layers):
        p = t + "h.%d." % i
        w.update({p + "ln_1.weight": 1 + rnd(n), p + "ln_1.bias": rnd(n),
                  p + "attn.c_attn.weight": rnd(n, 3 * n), p + "attn.c_attn.bias": rnd(3 * n),
                  p + "attn.c_proj.weight": rnd(n, n), p + "attn.c_proj.bias": rnd(n),
                  p + "ln_2.weight": 1 + rnd(n), p + "ln_2.bias": rnd(n),
                  p + "mlp.c_fc.weight": rnd(n, ffn), p + "mlp.c_fc.bias": rnd(ffn),
                  p + "mlp.c_proj.weight": rnd(ffn, n), p + "mlp.c_proj.bias": rnd(n),
                  # the causal-mask buffer files saved before transformers 4.x hold
                  p + "attn.bias": torch.tril(torch.ones(pos, pos)).view(1, 1, pos, pos)})
    w.update({t + "ln_f.weight": 1 + rnd(n), t + "ln_f.bias": rnd(n)})
    ids = torch.randint(0, vocab, (11,))
    w = write_folder(out, name, c, w, torch.float32)
    x = w[t + "wte.weight"][ids] + w[t + "wpe.weight"][: len(ids)]
    for i in range(layers):
        p = t + "h.%d." % i
        a = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], 1e-5)
        q, k, v = (a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]).split(n, -1)
        ctx = merge(attention(heads(q, nh), heads(k, nh), heads(v, nh), True))
        x = x + ctx @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        m = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], 1e-5)
        hdn = F.gelu(m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"], approximate="tanh")
        x = x + hdn @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    x = layer_norm(x, w[t + "ln_f.weight"], w[t + "ln_f.bias"], 1e-5)
    logits = x @ w[t + "wte.weight"].T
    write_folder(out, name, c, w, torch.float32, ids=ids, logits=logits)


def llama_family(out, name, arch, model_type, extra, qkv_bias, tied, dtype, shards, scaling):
    n, layers, nh, kv, ffn, vocab, pos, theta, eps = 32, 2, 4, 2, 48, 75, 64, 5000.0, 1e-6
    d = n // nh
    c = {"architectures": [arch], "model_type": model_type, "vocab_size": vocab,
         "hidden_size": n, "intermediate_size": ffn, "num_hidden_layers": layers,
         "num_attention_heads": nh, "num_key_value_heads": kv, "hidden_act": "silu",
         "max_position_embeddings": pos, "rms_norm_eps": eps, "rope_theta": theta,
         "tie_word_embeddings": tied, "torch_dtype": "bfloat16"}
    c.update(extra)
    if scaling:
        c["rope_scaling"] = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                             "high_freq_factor": 4.0, "original_max_position_embeddings": 16}
    w = {"model.embed_tokens.weight": rnd(vocab, n)}
    for i in range(layers):
        p = "model.layers.%d." % i
        w.update({p + "input_layernorm.weight": 1 + rnd(n),
                  p + "self_attn.q_proj.weight": rnd(nh * d, n),
                  p + "self_attn.k_proj.weight": rnd(kv * d, n),
                  p + "self_attn.v_proj.weight": rnd(kv * d, n),
                  p + "self_attn.o_proj.weight": rnd(n, nh * d),
                  p + "post_attention_layernorm.weight": 1 + rnd(n),
                  p + "mlp.gate_proj.weight": rnd(ffn, n), p + "mlp.up_proj.weight": rnd(ffn, n),
                  p + "mlp.down_proj.weight": rnd(n, ffn)})
        if qkv_bias:
            w.update({p + "self_attn.q_proj.bias": rnd(nh * d),
                      p + "self_attn.k_proj.bias": rnd(kv * d),
                      p + "self_attn.v_proj.bias": rnd(kv * d)})
    w["model.norm.weight"] = 1 + rnd(n)
    if not tied:
        w["lm_head.weight"] = rnd(vocab, n)
    ids = torch.randint(0, vocab, (13,))
    w = write_folder(out, name, c, w, dtype, shards)
    inv = llama3_inv_freq(theta, d, 8.0, 1.0, 4.0, 16) if scaling else None
    x = w["model.embed_tokens.weight"][ids]
    for i in range(layers):
        p = "model.layers.%d." % i
        a = rms_norm(x, w[p + "input_layernorm.weight"], eps)

        def proj(which):
            y = a @ w[p + "self_attn.%s_proj.weight" % which].T
            return y + w[p + "self_attn.%s_proj.bias" % which] if qkv_bias else y
        q = rope(heads(proj("q"), nh), theta, d, inv)
        k = rope(heads(proj("k"), kv), theta, d, inv).repeat_interleave(nh // kv, 0)
        v = heads(proj("v"), kv).repeat_interleave(nh // kv, 0)
        x = x + merge(attention(q, k, v, True)) @ w[p + "self_attn.o_proj.weight"].T
        m = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        g = F.silu(m @ w[p + "mlp.gate_proj.weight"].T) * (m @ w[p + "mlp.up_proj.weight"].T)
        x = x + g @ w[p + "mlp.down_proj.weight"].T
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = w["model.embed_tokens.weight"] if tied else w["lm_head.weight"]
    write_folder(out, name, c, w, dtype, shards, ids=ids, logits=x @ head.T)


def gpt_neox(out):
    n, layers, nh, ffn, vocab, pos, pct, base, eps = 32, 2, 4, 64, 70, 64, 0.5, 10000.0, 1e-5
    d = n // nh
    rot = int(d * pct)
    c = {"architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox", "vocab_size": vocab,
         "hidden_size": n, "num_hidden_layers": layers, "num_attention_heads": nh,
         "intermediate_size": ffn, "hidden_act": "gelu", "rotary_pct": pct,
         "rotary_emb_base": base, "max_position_embeddings": pos, "layer_norm_eps": eps,
         "use_parallel_residual": True, "tie_word_embeddings": False}
    w = {"gpt_neox.embed_in.weight": rnd(vocab, n)}
    for i in range(layers):
        p = "gpt_neox.layers.%d." % i
        w.update({p + "input_layernorm.weight": 1 + rnd(n), p + "input_layernorm.bias": rnd(n),
                  p + "post_attention_layernorm.weight": 1 + rnd(n),
                  p + "post_attention_layernorm.bias": rnd(n),
                  p + "attention.query_key_value.weight": rnd(3 * n, n),
                  p + "attention.query_key_value.bias": rnd(3 * n),
                  p + "attention.dense.weight": rnd(n, n), p + "attention.dense.bias": rnd(n),
                  p + "mlp.dense_h_to_4h.weight": rnd(ffn, n), p + "mlp.dense_h_to_4h.bias": rnd(ffn),
                  p + "mlp.dense_4h_to_h.weight": rnd(n, ffn), p + "mlp.dense_4h_to_h.bias": rnd(n),
                  p + "attention.rotary_emb.inv_freq": 1.0 / base ** (torch.arange(0, rot, 2) / rot)})
    w.update({"gpt_neox.final_layer_norm.weight": 1 + rnd(n),
              "gpt_neox.final_layer_norm.bias": rnd(n), "embed_out.weight": rnd(vocab, n)})
    ids = torch.randint(0, vocab, (9,))
    w = write_folder(out, "gpt_neox", c, w, torch.float16)
    x = w["gpt_neox.embed_in.weight"][ids]
    for i in range(layers):
        p = "gpt_neox.layers.%d." % i
        a = layer_norm(x, w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"], eps)
        qkv = a @ w[p + "attention.query_key_value.weight"].T + w[p + "attention.query_key_value.bias"]
        qkv = qkv.view(len(ids), nh, 3 * d).transpose(0, 1)  # per head: its q, k, v
        q, k, v = qkv[..., :d], qkv[..., d:2 * d], qkv[..., 2 * d:]
        ctx = merge(attention(rope(q, base, rot), rope(k, base, rot), v, True))
        attn = ctx @ w[p + "attention.dense.weight"].T + w[p + "attention.dense.bias"]
        m = layer_norm(x, w[p + "post_attention_layernorm.weight"],
                       w[p + "post_attention_layernorm.bias"], eps)
        hdn = F.gelu(m @ w[p + "mlp.dense_h_to_4h.weight"].T + w[p + "mlp.dense_h_to_4h.bias"])
        x = x + attn + hdn @ w[p + "mlp.dense_4h_to_h.weight"].T + w[p + "mlp.dense_4h_to_h.bias"]
    x = layer_norm(x, w["gpt_neox.final_layer_norm.weight"], w["gpt_neox.final_layer_norm.bias"], eps)
    write_folder(out, "gpt_neox", c, w, torch.float16, ids=ids, logits=x @ w["embed_out.weight"].T)


def tensorflow_names(key):
    """LayerNorm weights as BERT checkpoints converted from Google's name them."""
    return key.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")


# BERT's specials, the words of tests/cli_util.h's tiny_sentiment_tsv, then pieces: a vocab.txt
# of the fixtures' 50 tokens, so that a fine-tune on that data sees known words.
BERT_VOCAB = (["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
              + "good great fine lovely happy superb bad awful poor sad terrible ugly the movie "
                "was very and plot acting".split()
              + ["##" + c for c in "abcdefghijklmnopqrstuvwxyz"])


def write_bert_tokenizer(d, lower_case):
    """vocab.txt, and tokenizer_config.json where lower_case is not None (else BertTokenizer's
    default, lower-cased, applies)."""
    with open(os.path.join(d, "vocab.txt"), "w") as f:
        f.write("".join(t + "\n" for t in BERT_VOCAB))
    if lower_case is not None:
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            json.dump({"do_lower_case": lower_case, "tokenizer_class": "BertTokenizer"}, f)


def bert(out, name, arch, prefix, head, file_name=lambda k: k, lower_case=None):
    n, layers, nh, ffn, vocab, pos, types, eps, labels = 24, 2, 4, 36, 50, 20, 2, 1e-12, 5
    c = {"architectures": [arch], "model_type": "bert", "vocab_size": vocab, "hidden_size": n,
         "num_hidden_layers": layers, "num_attention_heads": nh, "intermediate_size": ffn,
         "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
         "max_position_embeddings": pos, "type_vocab_size": types, "layer_norm_eps": eps,
         "position_embedding_type": "absolute",
         "id2label": {str(i): "TAG_%d" % i for i in range(labels)},
         "label2id": {"TAG_%d" % i: i for i in range(labels)}}
    b = prefix
    w = {b + "embeddings.word_embeddings.weight": rnd(vocab, n),
         b + "embeddings.position_embeddings.weight": rnd(pos, n),
         b + "embeddings.token_type_embeddings.weight": rnd(types, n),
         b + "embeddings.LayerNorm.weight": 1 + rnd(n), b + "embeddings.LayerNorm.bias": rnd(n)}
    for i in range(layers):
        p = b + "encoder.layer.%d." % i
        for part in ["attention.self.query", "attention.self.key", "attention.self.value",
                     "attention.output.dense"]:
            w.update({p + part + ".weight": rnd(n, n), p + part + ".bias": rnd(n)})
        w.update({p + "attention.output.LayerNorm.weight": 1 + rnd(n),
                  p + "attention.output.LayerNorm.bias": rnd(n),
                  p + "intermediate.dense.weight": rnd(ffn, n), p + "intermediate.dense.bias": rnd(ffn),
                  p + "output.dense.weight": rnd(n, ffn), p + "output.dense.bias": rnd(n),
                  p + "output.LayerNorm.weight": 1 + rnd(n), p + "output.LayerNorm.bias": rnd(n)})
    if head == "token":
        w.update({"classifier.weight": rnd(labels, n), "classifier.bias": rnd(labels)})
    else:
        w.update({b + "pooler.dense.weight": rnd(n, n), b + "pooler.dense.bias": rnd(n)})
    if head == "sequence":
        w.update({"classifier.weight": rnd(labels, n), "classifier.bias": rnd(labels)})
    ids = torch.randint(0, vocab, (10,))
    w = write_folder(out, name, c, w, torch.float32, file_name=file_name)
    e = b + "embeddings."
    x = (w[e + "word_embeddings.weight"][ids] + w[e + "token_type_embeddings.weight"][0]
         + w[e + "position_embeddings.weight"][: len(ids)])
    x = layer_norm(x, w[e + "LayerNorm.weight"], w[e + "LayerNorm.bias"], eps)
    for i in range(layers):
        p = b + "encoder.layer.%d." % i

        def lin(part, y):
            return y @ w[p + part + ".weight"].T + w[p + part + ".bias"]
        q, k, v = (heads(lin("attention.self." + s, x), nh) for s in ["query", "key", "value"])
        a = lin("attention.output.dense", merge(attention(q, k, v, False)))
        x = layer_norm(a + x, w[p + "attention.output.LayerNorm.weight"],
                       w[p + "attention.output.LayerNorm.bias"], eps)
        hdn = lin("output.dense", F.gelu(lin("intermediate.dense", x)))
        x = layer_norm(hdn + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
    if head == "token":
        logits = x @ w["classifier.weight"].T + w["classifier.bias"]
    else:  # hwt has no pooler: the encoder's output is what an import can be checked on
        logits = x
    write_folder(out, name, c, w, torch.float32, ids=ids, logits=logits, file_name=file_name)
    write_bert_tokenizer(os.path.join(out, name), lower_case)


def main():
    out = sys.argv[1]
    torch.manual_seed(2026)
    gpt2(out, "gpt2", "transformer.")
    gpt2(out, "gpt2_base_names", "")
    llama_family(out, "llama", "LlamaForCausalLM", "llama", {}, False, False, torch.bfloat16, 3, True)
    llama_family(out, "mistral", "MistralForCausalLM", "mistral", {"sliding_window": 32}, False,
                 True, torch.float32, 1, False)
    llama_family(out, "qwen2", "Qwen2ForCausalLM", "qwen2", {"use_sliding_window": False}, True,
                 True, torch.float16, 2, False)
    gpt_neox(out)
    bert(out, "bert_tokens", "BertForTokenClassification", "bert.", "token")
    bert(out, "bert_sequence", "BertForSequenceClassification", "bert.", "sequence",
         lower_case=False)
    bert(out, "bert_model", "BertModel", "", "none", tensorflow_names)


if __name__ == "__main__":
    main()
