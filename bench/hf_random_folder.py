"""A Hugging Face Llama-family folder of random bf16 weights in a published shape, written one
tensor at a time (for bench/interop_import.sh: import and export speed and memory).

usage: hf_random_folder.py OUT_DIR [qwen2.5_0.5b|smollm_135m]
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "oracle"))
from hf_folders import save_safetensors  # noqa: E402  (the tests' safetensors writer)

# Qwen/Qwen2.5-0.5B and HuggingFaceTB/SmolLM-135M config.json (the fields hwt reads).
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
}


def main():
    out, shape = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "qwen2.5_0.5b"
    c = SHAPES[shape]
    n, f, v = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    d = n // c["num_attention_heads"]
    q, kv = c["num_attention_heads"] * d, c["num_key_value_heads"] * d
    qwen = c["model_type"] == "qwen2"
    shapes = {"model.embed_tokens.weight": (v, n), "model.norm.weight": (n,)}
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
    torch.manual_seed(0)
    # The writer takes all tensors at once; bf16 halves what that holds.
    tensors = {k: (torch.randn(*s, dtype=torch.float32) * 0.02).to(torch.bfloat16)
               for k, s in shapes.items()}
    save_safetensors(os.path.join(out, "model.safetensors"), tensors)


if __name__ == "__main__":
    main()
