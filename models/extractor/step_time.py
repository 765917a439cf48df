"""Training step time of model variants (relative-position biases on/off) on real windows (training venv).

    OMP_NUM_THREADS=1 .venv-train/bin/python -m models.extractor.step_time --data /tmp/synth/dev --steps 8

Each variant trains ``--steps`` steps (forward, backward, AdamW) on the same full batches of
``--batch-size`` windows cut from the given pages; prints the median seconds per step as JSON lines.
The variants are interleaved step by step so that load from other processes hits all of them alike.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

VARIANTS = {"both": (True, True), "no_1d": (False, True), "no_2d": (True, False), "none": (False, False)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.extractor.step_time", description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import numpy as np
    import paddle
    import paddle.nn.functional as F

    from models.extractor.data import batch_stream, load_docs, NoiseConfig
    from models.extractor.model import ArchitectureSpec, build_model
    from stages.extraction.ernie_features import IGNORE_LABEL, FeatureSpec, Vocab

    vocab = Vocab.from_ocr_dictionary()
    docs = load_docs(args.data, limit=40)
    stream = batch_stream(docs, vocab, 512, 448, FeatureSpec(), args.batch_size, np.random.default_rng(0), NoiseConfig())
    batches = []
    while len(batches) < args.steps + 1:
        b = next(stream)
        if b.input_ids.shape == (args.batch_size, 512):
            batches.append(b)
    runs = {}
    for name, (rel1d, rel2d) in VARIANTS.items():
        spec = ArchitectureSpec(vocab_size=len(vocab), hidden_size=args.hidden, num_layers=args.layers,
                         intermediate_size=4 * args.hidden, relative_attention_bias=rel1d, spatial_attention_bias=rel2d)
        model = build_model(spec)
        model.train()
        opt = paddle.optimizer.AdamW(learning_rate=1e-4, parameters=model.parameters())
        runs[name] = (model, opt, spec, [])
    for i, b in enumerate(batches):
        for name, (model, opt, spec, times) in runs.items():
            t0 = time.perf_counter()
            logits = model.logits(paddle.to_tensor(b.input_ids), paddle.to_tensor(b.bbox), paddle.to_tensor(b.attention_mask))
            loss = F.cross_entropy(logits.reshape([-1, spec.num_labels]), paddle.to_tensor(b.labels).reshape([-1, 1]),
                                   ignore_index=IGNORE_LABEL)
            loss.backward()
            opt.step()
            opt.clear_grad()
            if i:  # the first step warms up
                times.append(time.perf_counter() - t0)
    for name, (_, _, _, times) in runs.items():
        sys.stdout.write(json.dumps({"variant": name, "rel_1d": VARIANTS[name][0], "rel_2d": VARIANTS[name][1],
                                     "batch": [args.batch_size, 512], "threads": args.threads,
                                     "median_s": round(statistics.median(times), 3),
                                     "min_s": round(min(times), 3)}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
