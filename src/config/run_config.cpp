#include "config/run_config.h"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <sstream>
#include <string_view>
#include <variant>

#include "config/freeze_spec.h"
#include "core/paths.h"
#include "core/text_number.h"
#include "core/toml_reader.h"

namespace hwt {
namespace {

using Keys = ConfigKeys<RunConfig>;
using R = RunConfig;

// model.tt.<kind>.{in,out,ranks}: the tensor-train layers (docs/tensor_train.md).
void add_tt_keys(Keys& k) {
  k.add(
      "model.tt.embedding.in",
      "TTM token embedding: vocabulary factors, one per core (their product at least the "
      "vocabulary); empty keeps the table dense",
      [](R & c) -> auto& { return c.model.tt.embedding.in; });
  k.add(
      "model.tt.embedding.out", "TTM token embedding: factors of model.hidden, one per core",
      [](R & c) -> auto& { return c.model.tt.embedding.out; });
  k.add(
      "model.tt.embedding.ranks",
      "TTM token embedding: ranks between consecutive cores (one fewer than the cores)",
      [](R & c) -> auto& { return c.model.tt.embedding.ranks; });
  k.add(
      "model.tt.attention.in",
      "TT attention projections: input factors (product model.hidden); empty keeps them dense",
      [](R & c) -> auto& { return c.model.tt.attention.in; });
  k.add(
      "model.tt.attention.out",
      "TT attention projections: output factors (product model.hidden); the fused q, k, v "
      "projection triples the first",
      [](R & c) -> auto& { return c.model.tt.attention.out; });
  k.add(
      "model.tt.attention.ranks",
      "TT attention projections: ranks between consecutive cores, out cores first, then in "
      "cores (len(out) + len(in) - 1 of them)",
      [](R & c) -> auto& { return c.model.tt.attention.ranks; });
  k.add(
      "model.tt.ffn.in",
      "TT feed-forward: factors of model.hidden (the first layer's input, the second's output); "
      "empty keeps it dense",
      [](R & c) -> auto& { return c.model.tt.ffn.in; });
  k.add(
      "model.tt.ffn.out",
      "TT feed-forward: factors of model.ffn (the first layer's output, the second's input)",
      [](R & c) -> auto& { return c.model.tt.ffn.out; });
  k.add(
      "model.tt.ffn.ranks",
      "TT feed-forward: ranks between consecutive cores of the first layer, out cores first (the "
      "second layer swaps the out and in parts, each keeping its ranks)",
      [](R & c) -> auto& { return c.model.tt.ffn.ranks; });
}

// model.prune.*: DynaTran and DynaProp thresholds (docs/training.md).
void add_prune_keys(Keys& k) {
  k.add(
      "model.prune.tau_infer",
      "DynaTran: in inference (hwt eval, hwt predict, evaluations during training) set "
      "activations with abs(x) <= this to zero at Q, K, V, the attention context and every block's "
      "dense-layer output; 0: off",
      [](R & c) -> auto& { return c.model.prune.tau_infer; });
  k.add(
      "model.prune.tau_train",
      "DynaProp: set parameter gradients with abs(g) <= this (after unscaling and clipping) to "
      "zero "
      "before each optimizer step; 0: off",
      [](R & c) -> auto& { return c.model.prune.tau_train; });
  k.add(
      "model.prune.tau_act_grad",
      "Set activation gradients with abs(g) <= this to zero where the blocks' dense layers' "
      "backward writes them (the input gradients of qkv, attn.out, fc1, fc2); 0: off",
      [](R & c) -> auto& { return c.model.prune.tau_act_grad; });
}

void add_model_keys(Keys& k) {
  k.add(
      "model.vocab_size",
      "Vocabulary size; 0 takes the tokenizer's size (analyses, which do not read the data: "
      "data.max_vocab for a word tokenizer, 50257 for gpt2, 30522 (BERT's) otherwise, hf "
      "included)",
      [](R & c) -> auto& { return c.model.vocab_size; });
  k.add(
      "model.vocab_multiple",
      "LM: store the token embedding and LM head with rows padded to a multiple of this (1: none), "
      "so the logits GEMMs run aligned; padding rows stay zero, are never predicted, and "
      "checkpoints keep the true vocabulary",
      [](R & c) -> auto& { return c.model.vocab_multiple; });
  k.add(
      "model.max_seq", "Longest sequence (learned position embeddings)",
      [](R & c) -> auto& { return c.model.max_seq; });
  k.add(
      "model.hidden", "Hidden size", [](R & c) -> auto& { return c.model.hidden; });
  k.add(
      "model.hidden_multiple",
      "Store the hidden (residual) width, and each attention head, padded to a multiple of this "
      "(1: none), so every GEMM runs aligned; the padding is zero, exact (layer norms use the "
      "true width), and checkpoints keep the true width",
      [](R & c) -> auto& { return c.model.hidden_multiple; });
  k.add(
      "model.heads", "Attention heads (must divide model.hidden)",
      [](R & c) -> auto& { return c.model.heads; });
  k.add(
      "model.kv_heads",
      "K/V heads: fewer than model.heads (dividing it) is grouped-query attention, 1 multi-query; "
      "0: as many as heads",
      [](R & c) -> auto& { return c.model.kv_heads; });
  k.add(
      "model.ffn", "Feed-forward width (of the gate and of the up projection in a gated MLP)",
      [](R & c) -> auto& { return c.model.ffn; });
  k.add(
      "model.ffn_multiple",
      "Store the feed-forward width padded to a multiple of this (1: none), so the FFN GEMMs run "
      "aligned; the padding is zero, exact (same outputs and gradients), and checkpoints keep "
      "the true width",
      [](R & c) -> auto& { return c.model.ffn_multiple; });
  k.add(
      "model.layers", "Transformer blocks", [](R & c) -> auto& { return c.model.layers; });
  k.add(
      "model.dropout", "Dropout on embeddings and on each sublayer output",
      [](R & c) -> auto& { return c.model.dropout; });
  k.add(
      "model.attn_dropout", "Dropout on attention probabilities",
      [](R & c) -> auto& { return c.model.attn_dropout; });
  k.add_choice(
      "model.norm", "Layernorm placement: pre (GPT-2) or post (BERT)",
      [](R & c) -> auto& { return c.model.norm; },
      std::vector<std::pair<std::string, NormPlacement>>{{"pre", NormPlacement::Pre},
                                                         {"post", NormPlacement::Post}});
  k.add(
      "model.parallel_residual",
      "Attention and MLP both read the block input, x + attn(ln1(x)) + mlp(ln2(x)) (GPT-NeoX, "
      "Pythia; pre-norm)",
      [](R & c) -> auto& { return c.model.parallel_residual; });
  k.add(
      "model.qk_norm",
      "RMSNorm over each query and key head before the rotation, one gamma per head size, "
      "epsilon model.ln_eps (Qwen3)",
      [](R & c) -> auto& { return c.model.qk_norm; });
  k.add_choice(
      "model.norm_kind",
      "Normalisation: layernorm (GPT-2, BERT) or rmsnorm (Llama), epsilon "
      "model.ln_eps",
      [](R & c) -> auto& { return c.model.norm_kind; },
      std::vector<std::pair<std::string, NormKind>>{{"layernorm", NormKind::LayerNorm},
                                                    {"rmsnorm", NormKind::RmsNorm}});
  k.add_choice(
      "model.position",
      "Positions: learned (a table, model.max_seq rows), rope (rotary embeddings of q and k) or "
      "none",
      [](R & c) -> auto& { return c.model.position; },
      std::vector<std::pair<std::string, Position>>{
          {"learned", Position::Learned}, {"rope", Position::Rope}, {"none", Position::None}});
  k.add(
      "model.rope_theta", "Rotary embeddings: base of the angle frequencies",
      [](R & c) -> auto& { return c.model.rope.theta; });
  k.add(
      "model.rotary_fraction",
      "Rotary embeddings: share of each head that turns (GPT-NeoX, Pythia: 0.25)",
      [](R & c) -> auto& { return c.model.rope.fraction; });
  k.add(
      "model.rope_scaling_factor",
      "Rotary embeddings: Llama 3's frequency scaling factor (Llama 3.1: 8, 3.2: 32; 0: off)",
      [](R & c) -> auto& { return c.model.rope.scaling_factor; });
  k.add(
      "model.rope_low_freq_factor", "Llama 3 frequency scaling: low_freq_factor",
      [](R & c) -> auto& { return c.model.rope.low_freq_factor; });
  k.add(
      "model.rope_high_freq_factor", "Llama 3 frequency scaling: high_freq_factor",
      [](R & c) -> auto& { return c.model.rope.high_freq_factor; });
  k.add(
      "model.rope_original_max_seq", "Llama 3 frequency scaling: original_max_position_embeddings",
      [](R & c) -> auto& { return c.model.rope.original_max_seq; });
  k.add(
      "model.bias", "Biases on the blocks' linear maps (Llama, Mistral: false)",
      [](R & c) -> auto& { return c.model.bias; });
  k.add(
      "model.qkv_bias", "Q, K and V keep biases when model.bias is false (Qwen2)",
      [](R & c) -> auto& { return c.model.qkv_bias; });
  k.add(
      "model.causal", "Causal (decoder) attention instead of bidirectional with padding mask",
      [](R & c) -> auto& { return c.model.causal; });
  k.add_choice(
      "model.activation",
      "Feed-forward activation; swiglu (SiLU gate, Llama) and geglu (tanh-GELU gate, Gemma) are "
      "gated: act(x·Wgateᵀ) · (x·Wupᵀ), one GEMM for both",
      [](R & c) -> auto& { return c.model.activation; },
      std::vector<std::pair<std::string, Activation>>{{"gelu", Activation::Gelu},
                                                      {"gelu_tanh", Activation::GeluTanh},
                                                      {"relu", Activation::Relu},
                                                      {"swiglu", Activation::SwiGlu},
                                                      {"geglu", Activation::GeGlu}});
  k.add(
      "model.tie_embeddings", "LM head reuses the token embedding matrix",
      [](R & c) -> auto& { return c.model.tie_embeddings; });
  k.add_choice(
      "model.head",
      "Task head: classify (sequence), tokens (per token), joint (both, losses "
      "summed), lm (next token)",
      [](R & c) -> auto& { return c.model.head; },
      {Task::Classify, Task::Tokens, Task::Joint, Task::Lm}, task_name);
  k.add_choice(
      "model.pooling", "Sequence representation: first token ([CLS]) or mean",
      [](R & c) -> auto& { return c.model.pooling; },
      std::vector<std::pair<std::string, Pooling>>{{"first", Pooling::First},
                                                   {"mean", Pooling::Mean}});
  k.add(
      "model.num_labels", "Sequence classes; 0 takes them from the data",
      [](R & c) -> auto& { return c.model.num_labels; });
  k.add(
      "model.num_token_labels", "Token classes; 0 takes them from the data",
      [](R & c) -> auto& { return c.model.num_token_labels; });
  k.add(
      "model.ln_eps", "Layernorm epsilon", [](R & c) -> auto& { return c.model.ln_eps; });
  k.add(
      "model.init_std", "Standard deviation of the normal weight initialisation",
      [](R & c) -> auto& { return c.model.init_std; });
  add_tt_keys(k);
  add_prune_keys(k);
}

void add_data_keys(Keys& k) {
  k.add_choice(
      "data.format",
      "spam (SpamAssassin folders), jointbert (seq.in/label/seq.out), tsv, csv, "
      "jsonl (text + label), text (plain text for LM), sotu (State of the Union addresses from "
      "npm, for LM)",
      [](R & c) -> auto& { return c.data.format; },
      {DataFormat::Spam, DataFormat::JointBert, DataFormat::Tsv, DataFormat::Csv, DataFormat::Jsonl,
       DataFormat::Text, DataFormat::Sotu},
      format_name);
  k.add(
      "data.path", "Dataset file or folder; empty uses the installed default dataset",
      [](R & c) -> auto& { return c.data.path; });
  k.add(
      "data.valid_path", "Validation file; empty splits it off the training data",
      [](R & c) -> auto& { return c.data.valid_path; });
  k.add(
      "data.test_path", "Test file; empty splits it off the training data",
      [](R & c) -> auto& { return c.data.test_path; });
  k.add(
      "data.text_field", "Text column / field name (csv, jsonl; tsv uses column 1)",
      [](R & c) -> auto& { return c.data.text_field; });
  k.add(
      "data.label_field", "Label column / field name (csv, jsonl; tsv uses column 2)",
      [](R & c) -> auto& { return c.data.label_field; });
  k.add_choice(
      "data.tokenizer",
      "word (vocabulary from training data), char (bytes seen in training data), gpt2 "
      "(GPT-2's byte-level BPE, 50257 tokens; data.format=text or sotu), wordpiece (BERT's "
      "WordPiece with the vocabulary in data.vocab; data.lowercase picks uncased or cased) or hf "
      "(a Hugging Face tokenizer.json in data.vocab: byte-level or SentencePiece-style BPE; "
      "data.format=text or sotu)",
      [](R & c) -> auto& { return c.data.tokenizer; },
      std::vector<std::pair<std::string, TokenizerKind>>{{"word", TokenizerKind::Word},
                                                         {"char", TokenizerKind::Char},
                                                         {"gpt2", TokenizerKind::Gpt2},
                                                         {"wordpiece", TokenizerKind::WordPiece},
                                                         {"hf", TokenizerKind::Hf}});
  k.add(
      "data.vocab",
      "wordpiece: BERT's vocab.txt (one token a line, id = line number); hf: a Hugging Face "
      "tokenizer.json; found as data.path is",
      [](R & c) -> auto& { return c.data.vocab; });
  k.add(
      "data.lowercase",
      "Lowercase text before word tokenisation (wordpiece: an uncased model's, accents stripped)",
      [](R & c) -> auto& { return c.data.lowercase; });
  k.add(
      "data.min_freq", "Words seen fewer times in training become [UNK]",
      [](R & c) -> auto& { return c.data.min_freq; });
  k.add(
      "data.max_vocab", "Largest word vocabulary (most frequent kept)",
      [](R & c) -> auto& { return c.data.max_vocab; });
  k.add(
      "data.max_len", "Tokens per example including [CLS] (longer ones are cut); LM context",
      [](R & c) -> auto& { return c.data.max_len; });
  k.add(
      "data.valid_fraction", "Share of training data held out for validation when no file",
      [](R & c) -> auto& { return c.data.valid_fraction; });
  k.add(
      "data.test_fraction", "Share of training data held out for test when no file",
      [](R & c) -> auto& { return c.data.test_fraction; });
  k.add_choice(
      "data.unseen_labels",
      "A label in validation/test data that training never saw: error, or unk "
      "(scored as wrong, the JointBERT convention)",
      [](R & c) -> auto& { return c.data.unseen_labels; },
      std::vector<std::pair<std::string, UnseenLabels>>{{"error", UnseenLabels::Error},
                                                        {"unk", UnseenLabels::Unk}});
  k.add(
      "data.word_dropout",
      "Probability that a training input token becomes [UNK] (teaches tagging of unseen words)",
      [](R & c) -> auto& { return c.data.word_dropout; });
  k.add(
      "data.max_examples", "Use only the first N examples of each split; 0 uses all",
      [](R & c) -> auto& { return c.data.max_examples; });
  k.add(
      "data.seed", "Seed of the train/validation/test split",
      [](R & c) -> auto& { return c.data.seed; });
  k.add(
      "data.cache_dir",
      "LM (text, sotu): folder of token shards, each corpus encoded once and memory-mapped by "
      "later runs; empty: tokens/ in $HWT_CACHE_DIR, else $XDG_CACHE_HOME/hwt, else "
      "~/.cache/hwt; \"off\": encode in memory at every start",
      [](R & c) -> auto& { return c.data.cache_dir; });
}

void add_train_keys(Keys& k) {
  k.add_choice(
      "train.device", "auto (GPU when present), cpu or cuda",
      [](R & c) -> auto& { return c.train.device; },
      std::vector<std::pair<std::string, DeviceChoice>>{
          {"auto", DeviceChoice::Auto}, {"cpu", DeviceChoice::Cpu}, {"cuda", DeviceChoice::Cuda}});
  k.add(
      "train.threads",
      "CPU threads; 0 uses every core; more than 4 per core are capped to that, with a warning",
      [](R & c) -> auto& { return c.train.threads; });
  k.add_choice(
      "train.precision",
      "fp32, tf32, bf16, fp16 or fp8 (GPU only beyond fp32, except fp8, whose GEMMs the CPU runs "
      "on fp8 operands with fp32 activations as the GPU's reference). fp8: the linear layers' "
      "GEMMs read E4M3 inputs and weights and E5M2 gradients, each with a delayed scale, where "
      "every dimension is a multiple of 16; everything else as bf16",
      [](R & c) -> auto& { return c.train.precision; },
      {Precision::Fp32, Precision::Tf32, Precision::Bf16, Precision::Fp16, Precision::Fp8},
      precision_name);
  k.add(
      "train.fp8_history",
      "fp8: steps of amax history per tensor that its scale is chosen from (Transformer "
      "Engine's default)",
      [](R & c) -> auto& { return c.train.fp8_history; });
  k.add_choice(
      "train.fp8_amax",
      "fp8: max sets each scale from the largest amax of the history, most_recent from the last "
      "step's",
      [](R & c) -> auto& { return c.train.fp8_amax; },
      std::vector<std::pair<std::string, AmaxAlgorithm>>{
          {"max", AmaxAlgorithm::Max}, {"most_recent", AmaxAlgorithm::MostRecent}});
  k.add(
      "train.fp8_margin",
      "fp8: each scale leaves a headroom of 2^margin below the format's largest value",
      [](R & c) -> auto& { return c.train.fp8_margin; });
  k.add_choice(
      "train.fp8_products",
      "fp8: chosen runs a product in fp8 where the GPU's shape model expects it to gain (hwt shape "
      "--precision fp8 lists why each other stays in bf16), all wherever its dimensions allow",
      [](R & c) -> auto& { return c.train.fp8_products; },
      std::vector<std::pair<std::string, Fp8Products>>{{"chosen", Fp8Products::Chosen},
                                                       {"all", Fp8Products::All}});
  k.add(
      "train.gemm_autotune",
      "GPU: time cuBLASLt's first 8 algorithms for each GEMM shape on its first call and keep the "
      "fastest (about 1-2% faster steps; separate runs may then differ in rounding)",
      [](R & c) -> auto& { return c.train.gemm_autotune; });
  k.add(
      "train.deterministic_attention",
      "GPU: the attention backward sums query gradients in a fixed order, so runs repeat bit for "
      "bit; false adds them with atomics inside the key/value gradient kernel (faster steps, "
      "rounding varies from run to run)",
      [](R & c) -> auto& { return c.train.deterministic_attention; });
  k.add(
      "train.cuda_graph",
      "GPU: launch each micro-batch's forward and backward as one captured CUDA graph instead "
      "of kernel by kernel (same results bit for bit); logged steps and micro-batches of a shape "
      "no earlier step had (so the whole first step) run uncaptured. No effect on the CPU",
      [](R & c) -> auto& { return c.train.cuda_graph; });
  k.add_choice(
      "train.recompute",
      "Activation recomputation, each mode recomputing in the backward what the one before it "
      "does and more: none keeps every block's activations; norm_act recomputes the norms' "
      "outputs and the MLP activation (an ungated MLP's first GEMM, whose epilogue it is); "
      "attention also the attention sublayer (q, k, v projection and attention); full the whole "
      "block, keeping only its output (about a third more block compute)",
      [](R & c) -> auto& { return c.train.recompute; },
      {Recompute::None, Recompute::NormAct, Recompute::Attention, Recompute::Full}, recompute_name);
  k.add(
      "train.batch_size", "Examples per micro-batch",
      [](R & c) -> auto& { return c.train.batch_size; });
  k.add(
      "train.grad_accum", "Micro-batches per optimizer step",
      [](R & c) -> auto& { return c.train.grad_accum; });
  k.add(
      "train.epochs", "Passes over the training data (when train.max_steps is 0)",
      [](R & c) -> auto& { return c.train.epochs; });
  k.add(
      "train.max_steps", "Optimizer steps; 0 lets train.epochs decide",
      [](R & c) -> auto& { return c.train.max_steps; });
  k.add(
      "train.time_limit", "Stop training after this many seconds; 0: no limit",
      [](R & c) -> auto& { return c.train.time_limit; });
  k.add(
      "train.log_every", "Steps between metrics.jsonl lines",
      [](R & c) -> auto& { return c.train.log_every; });
  k.add(
      "train.eval_every", "Steps between evaluations; 0 evaluates once per epoch",
      [](R & c) -> auto& { return c.train.eval_every; });
  k.add(
      "train.eval_batches", "Batches per periodic evaluation; 0 uses the whole set",
      [](R & c) -> auto& { return c.train.eval_batches; });
  k.add(
      "train.checkpoint_every",
      "Steps between checkpoint-step<N>.safetensors files; checkpoint.safetensors is always "
      "written at the end",
      [](R & c) -> auto& { return c.train.checkpoint_every; });
  k.add(
      "train.early_stop_patience", "Stop after this many evaluations without improvement; 0: off",
      [](R & c) -> auto& { return c.train.early_stop_patience; });
  k.add(
      "train.max_grad_norm", "Clip the global gradient norm to this; 0: no clipping",
      [](R & c) -> auto& { return c.train.max_grad_norm; });
  k.add(
      "train.seed", "Seed of initialisation, shuffling and dropout",
      [](R & c) -> auto& { return c.train.seed; });
  k.add(
      "train.freeze",
      "Parts not trained, comma-separated: embeddings, layers:A-B (blocks A to B, from 0; "
      "layers:N one block), final_norm, head; their weights stay bit for bit as loaded",
      [](R & c) -> auto& { return c.train.freeze; });
  k.add(
      "train.telemetry",
      "Sample GPU power, energy, utilisation, clock, temperature and memory (NVML) and CPU "
      "package energy (RAPL) every 100 ms into run.json and metrics.jsonl; false measures "
      "nothing (to time telemetry's own overhead)",
      [](R & c) -> auto& { return c.train.telemetry; });
  k.add(
      "train.tensorboard",
      "Also write a TensorBoard event file into the output folder: every metrics.jsonl number as "
      "a scalar (train/loss, valid/accuracy, …), the config as text, and histograms of the "
      "weights and gradients at each evaluation (`tensorboard --logdir runs`)",
      [](R & c) -> auto& { return c.train.tensorboard; });
  k.add(
      "train.zero",
      "Data parallel: 1 shards the optimizer state across ranks (ZeRO stage 1: reduce-scatter "
      "of gradients, each rank updates its shard, all-gather of parameters); 0: every rank "
      "keeps all of it",
      [](R & c) -> auto& { return c.train.zero; });
  k.add(
      "train.bucket_mb",
      "Data parallel: gradients are all-reduced in buckets of about this many MB, each as soon "
      "as the backward pass has written it",
      [](R & c) -> auto& { return c.train.bucket_mb; });
  k.add_choice(
      "train.grad_reduce", "Data parallel: fp32 or bf16, the dtype gradients are summed in",
      [](R & c) -> auto& { return c.train.grad_reduce; },
      std::vector<std::pair<std::string, GradReduce>>{{"fp32", GradReduce::Fp32},
                                                      {"bf16", GradReduce::Bf16}});
  k.add(
      "train.collective_timeout",
      "Data parallel: seconds a collective may wait on another rank before every rank stops "
      "with an error",
      [](R & c) -> auto& { return c.train.collective_timeout; });
}

void add_optim_keys(Keys& k) {
  k.add_choice(
      "optim.name", "adamw, adan or sgd", [](R & c) -> auto& { return c.optim.name; },
      std::vector<std::pair<std::string, OptimizerKind>>{{"adamw", OptimizerKind::AdamW},
                                                         {"adan", OptimizerKind::Adan},
                                                         {"sgd", OptimizerKind::Sgd}});
  k.add(
      "optim.lr", "Peak learning rate", [](R & c) -> auto& { return c.optim.lr; });
  k.add(
      "optim.weight_decay", "Weight decay on matrices and embeddings (not biases, norms)",
      [](R & c) -> auto& { return c.optim.weight_decay; });
  k.add(
      "optim.eps", "Denominator epsilon (AdamW, Adan)", [](R & c) -> auto& { return c.optim.eps; });
  k.add(
      "optim.adamw.beta1", "AdamW first-moment decay",
      [](R & c) -> auto& { return c.optim.adamw_beta1; });
  k.add(
      "optim.adamw.beta2", "AdamW second-moment decay",
      [](R & c) -> auto& { return c.optim.adamw_beta2; });
  k.add(
      "optim.adan.beta1",
      "Adan gradient-average decay (sail-sg/Adan's convention: 1 - the paper's beta)",
      [](R & c) -> auto& { return c.optim.adan_beta1; });
  k.add(
      "optim.adan.beta2", "Adan gradient-difference decay",
      [](R & c) -> auto& { return c.optim.adan_beta2; });
  k.add(
      "optim.adan.beta3", "Adan second-moment decay",
      [](R & c) -> auto& { return c.optim.adan_beta3; });
  k.add(
      "optim.adan.no_prox", "Adan decoupled decay (multiply) instead of proximal (divide)",
      [](R & c) -> auto& { return c.optim.adan_no_prox; });
  k.add(
      "optim.sgd.momentum", "SGD momentum", [](R & c) -> auto& { return c.optim.sgd_momentum; });
  k.add(
      "optim.sgd.nesterov", "SGD Nesterov momentum",
      [](R & c) -> auto& { return c.optim.sgd_nesterov; });
  k.add_choice(
      "optim.schedule", "Learning-rate decay after warmup: constant, linear or cosine",
      [](R & c) -> auto& { return c.optim.schedule; },
      std::vector<std::pair<std::string, Schedule>>{{"constant", Schedule::Constant},
                                                    {"linear", Schedule::Linear},
                                                    {"cosine", Schedule::Cosine}});
  k.add(
      "optim.warmup_steps", "Linear warmup steps",
      [](R & c) -> auto& { return c.optim.warmup_steps; });
  k.add(
      "optim.min_lr_ratio", "Final learning rate as a fraction of optim.lr",
      [](R & c) -> auto& { return c.optim.min_lr_ratio; });
}

Keys build_keys() {
  Keys k;
  add_model_keys(k);
  add_data_keys(k);
  add_train_keys(k);
  add_optim_keys(k);
  return k;
}

const ConfigKey<R>* find_key(std::string_view name) {
  for (const auto& k : run_config_keys())
    if (k.name == name) return &k;
  return nullptr;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

[[noreturn]] void unknown_key(std::string_view name) {
  const ConfigKey<R>* best = nullptr;
  size_t best_d = 4;
  for (const auto& k : run_config_keys()) {
    const size_t d = edit_distance(name, k.name);
    if (d < best_d) best_d = d, best = &k;
  }
  if (best) fail_input("unknown config key '{}' (did you mean '{}'?)", name, best->name);
  fail_input("unknown config key '{}' (see docs/config.md)", name);
}

void set_key(RunConfig& c, std::string_view name, const nlohmann::json& v) {
  const ConfigKey<R>* k = find_key(name);
  if (!k) unknown_key(name);
  k->set(c, v);
}

void apply_table(RunConfig& c, const TomlReader& t) {
  for (const std::string& name : t.keys()) {
    if (t.is_table(name)) {
      apply_table(c, t.table(name));
      continue;
    }
    const std::string key = t.path(name);
    const ConfigKey<R>* k = find_key(key);
    if (!k) unknown_key(key);
    if (k->type == "ints")
      k->set(c, t.integers(name));
    else
      k->set(c, std::visit([](const auto& v) { return nlohmann::json(v); }, t.scalar(name)));
  }
}

// Parses an override's text by the key's type: --set model.hidden=512.
nlohmann::json parse_override_value(const ConfigKey<R>& k, const std::string& text) {
  if (k.type == "int") {
    int64_t v = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size())
      fail_input("--set {}: expected an integer, got '{}'", k.name, text);
    return v;
  }
  if (k.type == "float") {
    if (const auto v = parse_whole_double(text)) return *v;
    fail_input("--set {}: expected a number, got '{}'", k.name, text);
  }
  if (k.type == "ints") {  // "8,8,12" or "[8, 8, 12]"; "" or "[]" is the empty list
    std::string list = text;
    if (list.size() >= 2 && list.front() == '[' && list.back() == ']')
      list = list.substr(1, list.size() - 2);
    nlohmann::json v = nlohmann::json::array();
    if (list.find_first_not_of(' ') == std::string::npos) return v;
    std::stringstream items(list);
    for (std::string item; std::getline(items, item, ',');) {
      item.erase(0, item.find_first_not_of(' '));
      item.erase(item.find_last_not_of(' ') + 1);
      int64_t x = 0;
      const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), x);
      if (item.empty() || ec != std::errc() || p != item.data() + item.size())
        fail_input("--set {}: expected integers separated by commas, got '{}'", k.name, text);
      v.push_back(x);
    }
    return v;
  }
  if (k.type == "bool") {
    if (text == "true" || text == "1") return true;
    if (text == "false" || text == "0") return false;
    fail_input("--set {}: expected true or false, got '{}'", k.name, text);
  }
  std::string s = text;
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
    s = s.substr(1, s.size() - 2);
  // Config values go into run.json and checkpoint metadata, and JSON holds only UTF-8 (TOML
  // files are checked by their parser; --set values are bytes from the command line).
  nlohmann::json v = s;
  try {
    (void)v.dump();
  } catch (const nlohmann::json::type_error&) {
    fail_input("--set {}: the value is not valid UTF-8", k.name);
  }
  return v;
}

// A key's value (bool, integer, number, string or list of integers) into table t.
void insert_toml(toml::table& t, std::string_view key, const nlohmann::json& v) {
  if (v.is_boolean()) {
    t.insert(key, v.get<bool>());
  } else if (v.is_number_integer()) {
    t.insert(key, v.get<int64_t>());
  } else if (v.is_number()) {
    t.insert(key, v.get<double>());
  } else if (v.is_string()) {
    t.insert(key, v.get<std::string>());
  } else {
    HWT_CHECK(v.is_array(), "config value {} has no TOML form", v.dump());
    toml::array list;
    for (const nlohmann::json& e : v) list.push_back(e.get<int64_t>());
    t.insert(key, std::move(list));
  }
}

}  // namespace

const std::vector<ConfigKey<RunConfig>>& run_config_keys() {
  static const Keys keys = build_keys();
  return keys.keys();
}

void apply_override(RunConfig& c, const std::string& kv) {
  const size_t eq = kv.find('=');
  if (eq == std::string::npos || eq == 0) fail_input("--set expects key=value, got '{}'", kv);
  const std::string key = kv.substr(0, eq);
  const ConfigKey<R>* k = find_key(key);
  if (!k) unknown_key(key);
  k->set(c, parse_override_value(*k, kv.substr(eq + 1)));
}

RunConfig load_run_config(const std::string& config, const std::vector<std::string>& overrides) {
  RunConfig c;
  if (!config.empty())
    apply_table(c,
                TomlReader::from_file(resolve_named_file(config, "configs", "--config"), "config"));
  for (const std::string& kv : overrides) apply_override(c, kv);
  validate(c);
  return c;
}

void validate(const RunConfig& c) {
  // Infinity is meant only as a limit that never comes; any other rate, size or probability set
  // to it is a mistake.
  for (const auto& k : run_config_keys())
    if (k.type == "float" && k.name != "train.time_limit")
      if (const double v = k.get(c).get<double>(); !std::isfinite(v))
        fail_input("config {}: expected a finite number, got {}", k.name, v);
  validate(c.model);
  parse_freeze(c.train.freeze, c.model.layers);
  const DataConfig& d = c.data;
  const TrainConfig& t = c.train;
  if (d.max_len < 2) fail_input("config data.max_len={} must be at least 2", d.max_len);
  if (d.min_freq < 1) fail_input("config data.min_freq={} must be at least 1", d.min_freq);
  if (d.max_vocab < 4) fail_input("config data.max_vocab={} must be at least 4", d.max_vocab);
  if (d.valid_fraction < 0 || d.test_fraction < 0 || d.valid_fraction + d.test_fraction >= 1)
    fail_input("config data.valid_fraction={} and data.test_fraction={} must be >= 0 and sum < 1",
               d.valid_fraction, d.test_fraction);
  if (d.max_examples < 0) fail_input("config data.max_examples must not be negative");
  if (d.word_dropout < 0 || d.word_dropout >= 1)
    fail_input("config data.word_dropout={} must be in [0, 1)", d.word_dropout);
  // GPT-2's ids and a tokenizer.json's have no [PAD], [CLS] or [UNK] that examples and word
  // dropout can count on.
  const bool lm_only = d.tokenizer == TokenizerKind::Gpt2 || d.tokenizer == TokenizerKind::Hf;
  const std::string_view lm_name = d.tokenizer == TokenizerKind::Gpt2 ? "gpt2" : "hf";
  if (lm_only && !is_lm_format(d.format))
    fail_input("config data.tokenizer=\"{}\" needs data.format=\"text\" or \"sotu\" (got \"{}\")",
               lm_name, format_name(d.format));
  if (lm_only && d.word_dropout > 0)
    fail_input("config data.word_dropout needs a tokenizer with [UNK], not data.tokenizer=\"{}\"",
               lm_name);
  if (d.tokenizer == TokenizerKind::Hf && d.vocab.empty())
    fail_input("config data.tokenizer=\"hf\" needs data.vocab (a tokenizer.json)");
  if (d.tokenizer == TokenizerKind::WordPiece && d.vocab.empty())
    fail_input("config data.tokenizer=\"wordpiece\" needs data.vocab (BERT's vocab.txt)");
  // Word pieces do not line up with the per-word tags of token labels.
  if (d.tokenizer == TokenizerKind::WordPiece && has_token_labels(c.model.head))
    fail_input(
        "config data.tokenizer=\"wordpiece\" cannot be used with model.head={} (its tags "
        "are per word, not per word piece)",
        task_name(c.model.head));
  if (d.max_len > c.model.max_seq)
    fail_input("config data.max_len={} exceeds model.max_seq={}", d.max_len, c.model.max_seq);
  if (t.batch_size < 1) fail_input("config train.batch_size={} must be positive", t.batch_size);
  if (t.grad_accum < 1) fail_input("config train.grad_accum={} must be positive", t.grad_accum);
  if (t.epochs < 1 && t.max_steps < 1)
    fail_input("config needs train.epochs >= 1 or train.max_steps >= 1");
  if (t.log_every < 1) fail_input("config train.log_every={} must be at least 1", t.log_every);
  for (const auto& [key, v] : {std::pair<const char*, double>{"train.max_steps", t.max_steps},
                               {"train.eval_every", t.eval_every},
                               {"train.checkpoint_every", t.checkpoint_every},
                               {"train.eval_batches", t.eval_batches},
                               {"train.early_stop_patience", t.early_stop_patience},
                               {"train.threads", t.threads},
                               {"train.time_limit", t.time_limit}})
    if (v < 0) fail_input("config {}={} must not be negative", key, v);
  if (t.max_grad_norm < 0) fail_input("config train.max_grad_norm must not be negative");
  if (t.fp8_history < 1)
    fail_input("config train.fp8_history={} must be at least 1", t.fp8_history);
  if (t.fp8_margin < 0 || t.fp8_margin > 64)
    fail_input("config train.fp8_margin={} must be from 0 to 64", t.fp8_margin);
  if (t.zero != 0 && t.zero != 1) fail_input("config train.zero={} must be 0 or 1", t.zero);
  if (!(t.bucket_mb > 0)) fail_input("config train.bucket_mb={} must be positive", t.bucket_mb);
  if (!(t.collective_timeout > 0))
    fail_input("config train.collective_timeout={} must be positive", t.collective_timeout);
  const OptimConfig& o = c.optim;
  if (!(o.lr > 0)) fail_input("config optim.lr={} must be positive", o.lr);
  if (o.weight_decay < 0) fail_input("config optim.weight_decay must not be negative");
  if (o.warmup_steps < 0) fail_input("config optim.warmup_steps must not be negative");
  if (o.min_lr_ratio < 0 || o.min_lr_ratio > 1)
    fail_input("config optim.min_lr_ratio={} must be in [0, 1]", o.min_lr_ratio);
  for (double b : {o.adamw_beta1, o.adamw_beta2, o.adan_beta1, o.adan_beta2, o.adan_beta3})
    if (b < 0 || b >= 1) fail_input("config optim betas must be in [0, 1), got {}", b);
}

nlohmann::json to_json(const RunConfig& c) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& k : run_config_keys()) j[k.name] = k.get(c);
  return j;
}

RunConfig run_config_from_json(const nlohmann::json& j) {
  if (!j.is_object()) fail_input("config: expected a JSON object of key: value");
  RunConfig c;
  for (const auto& [key, value] : j.items()) set_key(c, key, value);
  validate(c);
  return c;
}

std::string to_toml(const RunConfig& c) {
  toml::table root;
  for (const auto& k : run_config_keys()) {
    // "model.tt.embedding.in": the value `in` of table [model.tt.embedding].
    toml::table* t = &root;
    std::string_view name = k.name;
    for (size_t dot = name.find('.'); dot != std::string_view::npos; dot = name.find('.')) {
      t = t->emplace<toml::table>(name.substr(0, dot)).first->second.as_table();
      name.remove_prefix(dot + 1);
    }
    insert_toml(*t, name, k.get(c));
  }
  // Double-quoted strings with their UTF-8 as it is; sub-tables unindented.
  std::ostringstream out;
  out << toml::toml_formatter(root, toml::format_flags::allow_unicode_strings);
  return out.str() + "\n";
}

std::string config_reference_markdown() {
  const RunConfig defaults;
  std::string out =
      "# Configuration keys\n\n"
      "Generated by `hwt config --reference`; a test keeps this file equal to that output.\n"
      "Set keys in a TOML file (`--config FILE.toml`, sections are the part before the first\n"
      "dot) or one at a time with `--set key=value`. Unknown keys are errors, and so are float\n"
      "values that are `nan`, or `inf` anywhere but `train.time_limit`.\n";
  std::string section;
  for (const auto& k : run_config_keys()) {
    const std::string sec = k.name.substr(0, k.name.find('.'));
    if (sec != section) {
      out +=
          fmt::format("\n## [{}]\n\n| key | type | default | meaning |\n|---|---|---|---|\n", sec);
      section = sec;
    }
    std::string type = k.type == "ints" ? "int list" : k.type;
    if (k.type == "choice") {
      type.clear();
      for (const auto& ch : k.choices) type += (type.empty() ? "" : " \\| ") + ch;
    }
    out += fmt::format("| `{}` | {} | `{}` | {} |\n", k.name, type, k.get(defaults).dump(), k.doc);
  }
  return out;
}

}  // namespace hwt
