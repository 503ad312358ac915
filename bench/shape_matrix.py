"""Shape matrix (issue 18): hwt against torch.compile on 16 model shapes, in the same call on the
same GPU, one row after the other: bench_train_step for hwt, then bench/train_step.py --compile for
PyTorch, each timing the median of --steps training steps after warm-up (compilation excluded).

The rows span vocabularies 50257/50304/32000/30522, head sizes 64/80/96/128 (and 125), hidden sizes
512-2560 (1000 among them), sequences 128-2048, decoders (pre-LN GPT LM, GELU tanh, tied
embeddings: configs/gpt2_124m.toml with --set overrides) and encoders (BERT-like post-LN sequence
classifier: configs/bert_base.toml), bf16 and fp32. fp32 rows run hwt with train.precision=tf32
and PyTorch in fp32 with TF32 matrix products. Both sides: dropout off, AdamW (lr 1e-4, betas 0.9
/ 0.999, eps 1e-8, weight decay 0.1 on matrices and embeddings), gradients clipped to 1.0, random
tokens, the same batch and sequence. Layer counts keep each row to 8K-16K tokens per step and a
compilation of well under a minute.

    python3 bench/shape_matrix.py --hwt-bench BIN [--rows 0-7] [--out DIR] [--python PY]
        [--steps N] [--timeout S] [--hwt-set key=value ...] [--dry-run]
    python3 bench/shape_matrix.py --table DIR/results.jsonl [FILE_OR_DIR ...]

--rows takes indices and ranges (0-7, 8-15, 3,5,9-11) so the matrix can be split across calls.
Each row appends one JSON line to DIR/results.jsonl as soon as it is measured (the two sides'
output, or the error of a side that failed: out of memory, unsupported, timed out) and each
side's output to DIR/logs/ (row03-hwt.out, row03-hwt.err, ...); progress goes to stderr, and
the markdown table of the rows run to stdout at the end. --table merges result files (a row
measured twice: the later line counts) into one table with compile/hwt per row (above 1: hwt
faster), their median and minimum. hwt stores an LM's vocabulary padded to model.vocab_multiple
(128); PyTorch runs it as given, as its users write it. --dry-run prints the rows and the exact
commands without running them. The binary and the Python can also come from the HWT_BENCH and
PYTHON environment variables.
"""
import argparse
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Row:
    kind: str       # "decoder" (GPT-like LM) or "encoder" (BERT-like sequence classifier)
    precision: str  # "bf16", or "fp32": hwt in tf32, PyTorch in fp32 with TF32 matrix products
    vocab: int
    hidden: int
    heads: int
    layers: int
    seq: int
    batch: int
    note: str = ""

    @property
    def head_dim(self):
        return self.hidden // self.heads

    @property
    def ffn(self):
        return 4 * self.hidden

    def describe(self):
        text = (f"{self.kind} V{self.vocab} h{self.hidden} ({self.heads}×{self.head_dim}) "
                f"L{self.layers}")
        return f"{text}; {self.note}" if self.note else text


ROWS = [
    Row("decoder", "bf16", 50304, 768, 12, 6, 1024, 16, "GPT-2 small width"),
    Row("encoder", "bf16", 30522, 768, 12, 6, 128, 128, "BERT-base width"),
    Row("decoder", "bf16", 50257, 1024, 16, 6, 1024, 16, "GPT-2 medium width, GPT-2's vocabulary"),
    Row("decoder", "fp32", 50304, 768, 12, 6, 1024, 8),
    Row("decoder", "bf16", 32000, 2048, 16, 4, 2048, 4, "LLaMA-like vocabulary and head size"),
    Row("encoder", "fp32", 30522, 1024, 16, 6, 512, 16, "BERT-large width"),
    # 1000 has no head count giving an aligned head size; 125 is also off every tensor-core
    # attention kernel's sizes, so both sides take a generic attention path.
    Row("decoder", "bf16", 32000, 1000, 8, 6, 512, 32, "unaligned: hidden 1000, head 125"),
    Row("encoder", "bf16", 30522, 1536, 16, 4, 512, 32),
    Row("decoder", "bf16", 50304, 2560, 32, 4, 2048, 4, "Pythia-2.8B width"),
    Row("encoder", "bf16", 30522, 1024, 8, 6, 1024, 16),
    Row("decoder", "fp32", 32000, 2048, 16, 4, 1024, 8),
    Row("decoder", "bf16", 50304, 512, 8, 6, 512, 32),
    Row("decoder", "bf16", 30522, 1536, 16, 4, 128, 128, "BERT's vocabulary, short context"),
    Row("encoder", "fp32", 30522, 768, 12, 6, 128, 64),
    Row("decoder", "fp32", 50257, 1536, 12, 4, 2048, 4),
    Row("encoder", "bf16", 32000, 2560, 32, 4, 1024, 8),
]


def hwt_command(row, bench, steps, extra_sets):
    preset = "gpt2_124m" if row.kind == "decoder" else "bert_base"
    sets = {
        "model.vocab_size": row.vocab, "model.hidden": row.hidden, "model.heads": row.heads,
        "model.ffn": row.ffn, "model.layers": row.layers, "model.max_seq": row.seq,
        "data.max_len": row.seq,  # must not exceed model.max_seq, whatever the preset says
        "model.dropout": 0, "model.attn_dropout": 0,
        "train.precision": "bf16" if row.precision == "bf16" else "tf32",
        "optim.name": "adamw", "optim.weight_decay": 0.1,
    }
    cmd = [bench, "--config", str(ROOT / "configs" / f"{preset}.toml"), "--batch", str(row.batch),
           "--seq", str(row.seq), "--steps", str(steps)]
    for key, value in sets.items():
        cmd += ["--set", f"{key}={value}"]
    for kv in extra_sets:
        cmd += ["--set", kv]
    return cmd


def torch_command(row, python, steps):
    return [python, str(ROOT / "bench" / "train_step.py"), "--compile", "--steps", str(steps),
            "--model", "gpt2" if row.kind == "decoder" else "encoder",
            "--precision", row.precision, "--vocab", str(row.vocab), "--hidden", str(row.hidden),
            "--heads", str(row.heads), "--layers", str(row.layers), "--ffn", str(row.ffn),
            "--seq", str(row.seq), "--batch", str(row.batch)]


def run_side(cmd, log, timeout):
    """The benchmark's JSON line, or {"error": ...} with the last line it wrote to stderr.
    Its output goes to files (log.out, log.err), which no leftover process can hold up."""
    out_path, err_path = log.with_suffix(".out"), log.with_suffix(".err")
    with open(out_path, "w") as out, open(err_path, "w") as err:
        # A session of its own, so that a timeout also ends torch.compile's worker processes.
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return {"error": f"timed out after {timeout} s"}
    result = {}
    for line in out_path.read_text().splitlines():
        try:
            result = json.loads(line) if line.startswith("{") else result
        except ValueError:
            pass  # not the benchmark's JSON line
    if proc.returncode == 0 and "ms" in result:
        return result
    lines = [l.strip() for l in err_path.read_text().splitlines() if l.strip()]
    reason = result.get("skipped") or (lines[-1] if lines else "no output")
    return {"error": f"exit {proc.returncode}: {reason[:300]}", **result}


def measured(side):
    return side.get("ms") if "error" not in side else None


def run_rows(indices, args):
    out = Path(args.out)
    (out / "logs").mkdir(parents=True, exist_ok=True)
    results = out / "results.jsonl"
    start = time.monotonic()
    for k, i in enumerate(indices):
        row, t0 = ROWS[i], time.monotonic()
        print(f"[shape_matrix] row {i} ({k + 1}/{len(indices)}): {row.describe()}, "
              f"{row.precision}, B{row.batch} T{row.seq}", file=sys.stderr, flush=True)
        record = {"row": i, **asdict(row), "head_dim": row.head_dim, "ffn": row.ffn,
                  "describe": row.describe()}
        for side, cmd in (("hwt", hwt_command(row, args.hwt_bench, args.steps, args.hwt_set)),
                          ("torch", torch_command(row, args.python, args.steps))):
            record[side + "_cmd"] = shlex.join(cmd)
            record[side] = run_side(cmd, out / "logs" / f"row{i:02d}-{side}", args.timeout)
            ms = measured(record[side])
            extra = (f" (first step {record[side]['first_step_s']} s)"
                     if ms and "first_step_s" in record[side] else "")
            print(f"  {side}: " + (f"{ms:.3f} ms{extra}" if ms else record[side]["error"]),
                  file=sys.stderr, flush=True)
        with open(results, "a") as f:
            f.write(json.dumps(record) + "\n")
        hwt_ms, torch_ms = measured(record["hwt"]), measured(record["torch"])
        ratio = f"compile/hwt {torch_ms / hwt_ms:.2f}x, " if hwt_ms and torch_ms else ""
        print(f"  {ratio}row {time.monotonic() - t0:.0f} s, call {time.monotonic() - start:.0f} s",
              file=sys.stderr, flush=True)
    return results


def load_records(paths):
    by_row = {}
    for p in map(Path, paths):
        for line in open(p / "results.jsonl" if p.is_dir() else p):
            if line.strip():
                record = json.loads(line)
                by_row[record["row"]] = record
    return [by_row[i] for i in sorted(by_row)]


def cell(side):
    ms = measured(side)
    return f"{ms:.3f}" if ms else "error: " + side["error"].replace("|", "/")[:120]


def table(records):
    lines = ["| # | model | precision | batch × seq | parameters | hwt ms/step | "
             "torch.compile ms/step | compile / hwt |", "|---|---|---|---|---|---|---|---|"]
    ratios = []
    for r in records:
        hwt_ms, torch_ms = measured(r["hwt"]), measured(r["torch"])
        ratio = torch_ms / hwt_ms if hwt_ms and torch_ms else None
        if ratio:
            ratios.append((ratio, r))
        params = {side: r[side].get("params") for side in ("hwt", "torch")}
        shown = next((p for p in params.values() if p), None)
        text = f"{shown / 1e6:.1f}M" if shown else "—"
        if all(params.values()) and params["hwt"] != params["torch"]:
            text = f"{params['hwt']:,} (PyTorch {params['torch']:,})"  # the models differ
        precision = "bf16" if r["precision"] == "bf16" else "fp32 (TF32 GEMMs)"
        lines.append(f"| {r['row']} | {r['describe']} | {precision} | {r['batch']} × {r['seq']} | "
                     f"{text} | {cell(r['hwt'])} | {cell(r['torch'])} | "
                     f"{f'{ratio:.2f}×' if ratio else '—'} |")
    lines.append("")
    if ratios:
        low, low_row = min(ratios, key=lambda x: x[0])
        lines.append(f"compile / hwt over the {len(ratios)} rows measured on both sides: median "
                     f"{statistics.median(x for x, _ in ratios):.2f}×, minimum {low:.2f}× "
                     f"(row {low_row['row']}). Above 1×: hwt is faster.")
    else:
        lines.append("No row was measured on both sides.")
    return "\n".join(lines)


def row_indices(spec):
    picked = []
    for part in spec.split(","):
        first, _, last = part.partition("-")
        lo, hi = int(first), int(last or first)
        if not 0 <= lo <= hi < len(ROWS):
            raise argparse.ArgumentTypeError(f"rows {part}: the matrix has rows 0-{len(ROWS) - 1}")
        picked += range(lo, hi + 1)
    return picked


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hwt-bench",
                    default=os.environ.get("HWT_BENCH", "build/bench/bench_train_step"),
                    help="bench_train_step binary (env HWT_BENCH)")
    ap.add_argument("--python", default=os.environ.get("PYTHON", sys.executable),
                    help="Python with PyTorch for bench/train_step.py (env PYTHON)")
    ap.add_argument("--rows", type=row_indices, default=list(range(len(ROWS))),
                    help="rows to run: 0-7, 8-15, 3,5,9-11 (default: all)")
    ap.add_argument("--out", default="/tmp/shape_matrix", help="results.jsonl and logs/ go here")
    ap.add_argument("--steps", type=int, default=20, help="timed steps per side")
    ap.add_argument("--timeout", type=int, default=150, help="seconds per side and row")
    ap.add_argument("--hwt-set", action="append", default=[], metavar="KEY=VALUE",
                    help="an extra config override for every hwt row (repeatable)")
    ap.add_argument("--dry-run", action="store_true", help="print the rows and commands only")
    ap.add_argument("--table", nargs="+", metavar="FILE_OR_DIR",
                    help="merge result files into a markdown table (nothing is run)")
    args = ap.parse_args()
    if args.table:
        print(table(load_records(args.table)))
        return
    if args.dry_run:
        for i in args.rows:
            row = ROWS[i]
            print(f"# row {i}: {row.describe()}, {row.precision}, B{row.batch} T{row.seq} "
                  f"({row.batch * row.seq} tokens)")
            print(shlex.join(hwt_command(row, args.hwt_bench, args.steps, args.hwt_set)))
            print(shlex.join(torch_command(row, args.python, args.steps)))
        return
    if not os.access(args.hwt_bench, os.X_OK):
        ap.error(f"--hwt-bench {args.hwt_bench} is not an executable")
    results = run_rows(args.rows, args)
    print(table([r for r in load_records([results]) if r["row"] in args.rows]))


if __name__ == "__main__":
    main()
