"""Reads a run's event files with TensorBoard's own reader (EventAccumulator, every event kept)
and prints what it found as one JSON object: scalars {tag: {step: value}}, histograms
{tag: [sample count of each step]}, text {tag: first string}. For tests/tensorboard_test.cpp,
where TensorBoard is installed (the GPU machine).

usage: tensorboard_read.py RUN_DIR
"""
import json
import sys

from tensorboard.backend.event_processing import event_accumulator as ea


def main():
    acc = ea.EventAccumulator(sys.argv[1], size_guidance={
        ea.SCALARS: 0, ea.HISTOGRAMS: 0, ea.TENSORS: 0, ea.COMPRESSED_HISTOGRAMS: 0})
    acc.Reload()
    tags = acc.Tags()
    out = {"scalars": {}, "histograms": {}, "text": {}}
    for tag in tags.get(ea.SCALARS, []):
        out["scalars"][tag] = {str(e.step): e.value for e in acc.Scalars(tag)}
    for tag in tags.get(ea.HISTOGRAMS, []):
        out["histograms"][tag] = [e.histogram_value.num for e in acc.Histograms(tag)]
    for tag in tags.get(ea.TENSORS, []):
        t = acc.Tensors(tag)[0].tensor_proto
        if t.string_val:
            out["text"][tag] = t.string_val[0].decode()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
