"""Latency of exported extractor variants in ``paddle.inference`` (training venv: builds with PaddleNLP).

    .venv-train/bin/python -m models.extractor.bench --out /tmp/extractor_bench [--threads 1 2]

Each variant is built with random weights, exported like a trained model (``export.export_model``) and
timed on full windows ``[batch, max_len]`` of random characters and page-like boxes; prints a markdown table.
"""
from __future__ import annotations

import argparse
import itertools
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from models.extractor.export import export_model, make_predictor
from models.extractor.model import ArchitectureSpec, build_model, count_parameters
from stages.extraction.ernie_features import Vocab

# name -> (1D relative bias, 2D spatial bias, lookup instead of one-hot)
BIAS_MODES = {
    "off": (False, False, True),
    "onehot": (True, True, False),
    "lookup": (True, True, True),
    "lookup2d": (False, True, True),
}


def _page_like_inputs(
    max_len: int, vocab_size: int, batch: int = 1, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    ids = rng.integers(4, vocab_size, (batch, max_len)).astype(np.int64)
    i = np.arange(max_len)
    x0 = (i % 40) * 24 + 20
    y0 = (i // 40) * 30 + 20
    bbox = np.stack([x0, y0, x0 + 20, y0 + 24], -1)[None].repeat(batch, 0).astype(np.int64)
    return ids, np.clip(bbox, 0, 1000), np.ones((batch, max_len), np.int64)


class _Timed:
    """A predictor with bound handles; :meth:`once` runs one window batch and returns milliseconds."""

    def __init__(self, model_dir: Path, threads: int, inputs: tuple[np.ndarray, ...]) -> None:
        self.pred = make_predictor(model_dir, threads=threads)
        self.inputs = inputs
        self.handles = [self.pred.get_input_handle(n) for n in self.pred.get_input_names()]
        self.out = self.pred.get_output_handle(self.pred.get_output_names()[0])
        self.times: list[float] = []

    def once(self, record: bool = True) -> None:
        t0 = time.perf_counter()
        for h, v in zip(self.handles, self.inputs):
            h.copy_from_cpu(v)
        self.pred.run()
        self.out.copy_to_cpu()
        if record:
            self.times.append((time.perf_counter() - t0) * 1000)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None, help="write results.json here")
    ap.add_argument("--hidden", type=int, nargs="+", default=[128, 256])
    ap.add_argument("--layers", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--max-len", type=int, nargs="+", default=[256, 512])
    ap.add_argument("--bias", nargs="+", default=list(BIAS_MODES), choices=list(BIAS_MODES))
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--batch", type=int, default=1, help="windows per run (ms are reported per run)")
    args = ap.parse_args(argv)
    vocab_size = len(Vocab.from_ocr_dictionary())
    variants = []
    with tempfile.TemporaryDirectory() as tmp:
        for hidden, layers, max_len, bias in itertools.product(args.hidden, args.layers, args.max_len, args.bias):
            rel1d, rel2d, lookup = BIAS_MODES[bias]
            spec = ArchitectureSpec(
                vocab_size=vocab_size, hidden_size=hidden, num_layers=layers, num_heads=4,
                intermediate_size=4 * hidden, max_position_embeddings=512,
                relative_attention_bias=rel1d, spatial_attention_bias=rel2d, lookup_rel_pos=lookup,
            )
            model = build_model(spec)
            model.eval()
            d = Path(tmp) / f"h{hidden}_l{layers}_{max_len}_{bias}"
            export_model(model, d)
            inputs = _page_like_inputs(max_len, vocab_size, args.batch)
            timed = [_Timed(d, t, inputs) for t in args.threads]
            for t in timed:
                for _ in range(3):
                    t.once(record=False)
            variants.append((dict(hidden=hidden, layers=layers, max_len=max_len, bias=bias,
                                  params=count_parameters(model)), timed))
        # interleave the variants so load from other processes hits them all alike
        for _ in range(args.runs):
            for _, timed in variants:
                for t in timed:
                    t.once()
    rows = []
    print(f"batch {args.batch}, {args.runs} interleaved runs, ms per run: median (min)")
    print("| hidden | layers | max_len | rel. biases | params | " + " | ".join(f"{t} thr" for t in args.threads) + " |")
    print("|---" * (5 + len(args.threads)) + "|")
    for row, timed in variants:
        med = [statistics.median(t.times) for t in timed]
        low = [min(t.times) for t in timed]
        row["ms_median"] = {str(t): round(m, 2) for t, m in zip(args.threads, med)}
        row["ms_min"] = {str(t): round(m, 2) for t, m in zip(args.threads, low)}
        rows.append(row)
        print(f"| {row['hidden']} | {row['layers']} | {row['max_len']} | {row['bias']} | "
              f"{row['params'] / 1e6:.2f} M | " + " | ".join(f"{m:.1f} ({n:.1f})" for m, n in zip(med, low)) + " |")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "results.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
