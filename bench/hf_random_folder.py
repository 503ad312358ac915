"""A Hugging Face Llama-family folder of random bf16 weights in a published shape (for
bench/interop_import.sh: import and export speed and memory), in shards of at most 5 GB with
model.safetensors.index.json past that, as save_pretrained writes them; one shard's tensors are
held in memory at a time.

usage: hf_random_folder.py OUT_DIR [qwen2.5_0.5b|smollm_135m|llama3_8b]
"""
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "oracle"))
from hf_folders import save_safetensors  # noqa: E402  (the tests' safetensors writer)

# Qwen/Qwen2.5-0.5B, HuggingFaceTB/SmolLM-135M and meta-llama/Meta-Llama-3-8B config.json (the
# fields hwt reads).
SHAPES = {
    "qwen2.5_0.5b": {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
                     "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
                     "num_attention_heads": 14, "num_key_value_heads": 2,
                     "max_position_embeddings": 32768, "rms_norm_eps": 1e-6,
                     "rope_theta": 1000000.0, "tie_word_embeddings": True,
                     "vocab_size": 151936, "hidden_act": "silu", "torch_dtype": "bfloat16"},
    "smollm_135m": {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                    "hidden_size": 576, "intermediate_size": 1536, "num_hidden_layers": 30,
                    "num_attention_heads": 9, "num_key_value_heads": 3,
                    "max_position_embeddings": 2048, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
                    "tie_word_embeddings": True, "vocab_size": 49152, "hidden_act": "silu",
                    "torch_dtype": "bfloat16"},
    "llama3_8b": {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                  "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
                  "num_attention_heads": 32, "num_key_value_heads": 8,
                  "max_position_embeddings": 8192, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
                  "tie_word_embeddings": False, "vocab_size": 128256, "hidden_act": "silu",
                  "torch_dtype": "bfloat16"},
}
SHARD_BYTES = 5 * 10**9  # save_pretrained's default max_shard_size, "5GB"


def main():
    out, shape = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "qwen2.5_0.5b"
    c = SHAPES[shape]
    n, f, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    d = n // c["num_attention_heads"]
    q, kv = c["num_attention_heads"] * d, c["num_key_value_heads"] * d
    qwen = c["model_type"] == "qwen2"
    shapes = {"model.embed_tokens.weight": (v, n), "model.norm.weight": (n,)}
    if not c["tie_word_embeddings"]:
        shapes["lm_head.weight"] = (v, n)
    for i in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % i
        shapes.update({p + "input_layernorm.weight": (n,), p + "post_attention_layernorm.weight": (n,),
                       p + "self_attn.q_proj.weight": (q, n), p + "self_attn.k_proj.weight": (kv, n),
                       p + "self_attn.v_proj.weight": (kv, n), p + "self_attn.o_proj.weight": (n, q),
                       p + "mlp.gate_proj.weight": (f, n), p + "mlp.up_proj.weight": (f, n),
                       p + "mlp.down_proj.weight": (n, f)})
        if qwen:
            shapes.update({p + "self_attn.q_proj.bias": (q,), p + "self_attn.k_proj.bias": (kv,),
                           p + "self_attn.v_proj.bias": (kv,)})
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as fh:
        json.dump(c, fh, indent=2)
    shards, size = [[]], 0
    for k, shape in shapes.items():
        b = 2 * math.prod(shape)
        if shards[-1] and size + b > SHARD_BYTES:
            shards.append([])
            size = 0
        shards[-1].append(k)
        size += b
    torch.manual_seed(0)
    weight_map = {}
    for i, keys in enumerate(shards):
        name = "model.safetensors" if len(shards) == 1 else \
            "model-%05d-of-%05d.safetensors" % (i + 1, len(shards))
        # The writer takes a shard's tensors at once; bf16 halves what that holds.
        tensors = {k: (torch.randn(*shapes[k], dtype=torch.float32) * 0.02).to(torch.bfloat16)
                   for k in keys}
        save_safetensors(os.path.join(out, name), tensors)
        weight_map.update({k: name for k in keys})
    if len(shards) > 1:
        total = sum(2 * math.prod(s) for s in shapes.values())
        with open(os.path.join(out, "model.safetensors.index.json"), "w") as fh:
            json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, fh, indent=2)


if __name__ == "__main__":
    main()
