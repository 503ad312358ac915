"""transformers' generate() beside bench_generate: the same random model (saved here with
save_pretrained for `hwt import`), the same prompts, greedy, on the GPU. Prints one JSON line
per batch with prefill and decode tokens/s and writes the tokens for comparison with hwt's.

Decode time is generate() of N new tokens less generate() of one (the prefill and its first
token), each the median of --repeats runs after a warm-up, synchronised around each call.

usage: generate_hf.py --model gpt2|smollm --save DIR [--batch 1,16] [--prompt 32] [--new 256]
                      [--tokens-out FILE]
"""
import argparse
import json
import statistics
import time

import torch
import transformers as tf


def build(name):
    if name == "gpt2":  # GPT-2 small as published: 124M parameters
        return tf.GPT2LMHeadModel(tf.GPT2Config())
    # HuggingFaceTB/SmolLM-135M's config.json
    return tf.LlamaForCausalLM(tf.LlamaConfig(
        vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
        num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=2048,
        rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=True, hidden_act="silu"))


def prompts(batch, length, vocab):
    """bench_generate's prompts: token t of prompt i is (7919 (i length + t) + 13) mod vocab."""
    return torch.tensor([[(7919 * (i * length + t) + 13) % vocab for t in range(length)]
                         for i in range(batch)])


def timed(model, ids, new):
    torch.cuda.synchronize()
    t = time.perf_counter()
    out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new,
                         do_sample=False, num_beams=1, pad_token_id=0)
    torch.cuda.synchronize()
    return time.perf_counter() - t, out


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--model", choices=["gpt2", "smollm"], required=True)
    a.add_argument("--save", required=True)
    a.add_argument("--batch", default="1,16")
    a.add_argument("--prompt", type=int, default=32)
    a.add_argument("--new", type=int, default=256)
    a.add_argument("--repeats", type=int, default=3)
    a.add_argument("--tokens-out")
    args = a.parse_args()
    torch.manual_seed(0)
    model = build(args.model).to(torch.bfloat16).eval()
    model.save_pretrained(args.save)
    model = model.cuda()
    model.generation_config.eos_token_id = None  # a fixed count of new tokens, as hwt's bench
    vocab = model.config.vocab_size
    tokens = {}
    with torch.no_grad():
        for item in args.batch.split(","):
            batch = int(item)
            ids = prompts(batch, args.prompt, vocab).cuda()
            timed(model, ids, 16)  # warm-up
            first = statistics.median(timed(model, ids, 1)[0] for _ in range(args.repeats))
            runs = [timed(model, ids, args.new) for _ in range(args.repeats)]
            total = statistics.median(t for t, _ in runs)
            out = runs[0][1]
            tokens[item] = out[:, args.prompt:].tolist()
            print(json.dumps({
                "path": "transformers_generate", "model": args.model, "dtype": "bf16",
                "batch": batch, "prompt": args.prompt, "new": args.new,
                "transformers": tf.__version__, "torch": torch.__version__,
                "prefill_tokens_per_s": batch * args.prompt / first,
                "decode_tokens_per_s": batch * (args.new - 1) / (total - first)}), flush=True)
    if args.tokens_out:
        with open(args.tokens_out, "w") as f:
            json.dump(tokens, f)


if __name__ == "__main__":
    main()
