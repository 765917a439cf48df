"""Train a capture's recognizer: PP-OCRv4's CTC head re-fitted on line crops of synthetic faxes, photos or scans.

    python -m models.recognizer.train --train DIR --dev DIR --out models/weights/rec_fax --work DIR [--resume]
    python -m models.recognizer.train --capture photo --train DIR --dev DIR --out models/weights/rec_photo --work DIR
    python -m models.recognizer.train --capture scan --train DIR --dev DIR --out models/weights/rec_scan --work DIR

``--train``/``--dev``: folders of ``docpipe synth … --variants fax`` (or ``photo``, ``scan``) pages (image + truth JSON);
only pages the product's normalizer marks as that capture are used. The backbone stays
as shipped; only the head (channels x classes) moves, by Adam on the CTC loss with an L2 pull towards the shipped
head and ``--distill`` times the divergence of each frame's class probabilities from the shipped head's (without
it, the head forgets the characters no training line holds). Line features are cached in ``--work``; a checkpoint
is written there after every epoch and ``--resume`` continues from it. The model with the lowest dev character
error rate (greedy decoding) is exported to ``--out`` as a complete Paddle inference model with its dictionary and a
``training.json`` of how it was made.
"""
from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np
from tqdm import tqdm

from models.recognizer.fit import HeadState, error_rate, train_epoch
from models.recognizer.head import HeadModel
from models.recognizer.lines import line_samples
from stages.contracts.config import load_config
from stages.contracts.registry import resolve_model
from stages.contracts.types import CAPTURES
from stages.detection.detector import TextDetector

log = logging.getLogger("models.recognizer.train")
_CHUNK = 25
_IMAGES = (".png", ".jpg", ".jpeg")


def _features(name: str, pages: Path, work: Path, head: HeadModel, encode, limit: int,
              capture: str) -> tuple[list, list]:
    cache = work / f"{name}_{pages.name}_{limit or 'all'}_features.npz"
    if cache.is_file():
        data = np.load(cache, allow_pickle=True)
        return list(data["feats"]), [list(x) for x in data["labels"]]
    files = sorted(f for f in pages.iterdir() if f.suffix.lower() in _IMAGES)[: limit or None]
    feats, labels, seen = [], [], 0
    config = load_config(None)
    detector = TextDetector(config.detection, config.predictor)
    with tqdm(total=len(files), desc=f"{name} pages", unit="page") as bar:
        for start in range(0, len(files), _CHUNK):  # a chunk of pages at a time: crops are large, features small
            chunk = files[start:start + _CHUNK]
            samples = list(line_samples(chunk, config, detector, capture))
            kept = [(s, encode(s.text)) for s in samples]
            kept = [(s, lab) for s, lab in kept if lab]
            for f, (_, lab) in zip(head.features([s.crop for s, _ in kept]), kept):
                feats.append(f.astype(np.float16))
                labels.append(lab)
            seen += len(samples)
            bar.update(len(chunk))
    np.savez(cache, feats=np.array(feats, dtype=object), labels=np.array(labels, dtype=object))
    log.info("%s: %d lines from %d pages (%d without a dictionary character dropped)", name, len(feats), len(files),
             seen - len(feats))
    return feats, labels


def dictionary_encoder(characters: Sequence[str]) -> Callable[[str], Optional[list[int]]]:
    """Text -> the recognizer's class indices (blank is 0, the space last); None when a character is not in it."""
    index = {ch: i for i, ch in enumerate(characters, start=1)}
    index.setdefault(" ", len(characters) + 1)

    def encode(text: str) -> Optional[list[int]]:
        return [index[c] for c in text] if all(c in index for c in text) else None

    return encode


def parse_training_arguments(p: argparse.ArgumentParser, argv: Optional[Sequence[str]], epochs: int, lr: float,
                             l2: float) -> argparse.Namespace:
    """The options every recognizer trainer shares (epochs, learning rate, the pull towards the starting weights,
    page limit, seed, resume), parsed with ``p``'s own; logging set up and ``--work`` made."""
    p.add_argument("--epochs", type=int, default=epochs)
    p.add_argument("--lr", type=float, default=lr)
    p.add_argument("--l2", type=float, default=l2, help="pull towards the starting weights")
    p.add_argument("--limit-pages", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resume", action="store_true")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args.work.mkdir(parents=True, exist_ok=True)
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", type=Path, required=True)
    p.add_argument("--dev", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--work", type=Path, required=True, help="feature cache and checkpoint (kept outside git)")
    p.add_argument("--capture", choices=list(CAPTURES), default="fax",
                   help="the pages whose lines are learnt")
    p.add_argument("--base", default="ppocrv4_rec", help="registry key of the recognizer whose head is re-fitted")
    p.add_argument("--distill", type=float, default=1.0,
                   help="weight of the divergence from the shipped head's class probabilities per frame (0: CTC alone, "
                        "which forgets the characters no training line holds)")
    args = parse_training_arguments(p, argv, epochs=3, lr=1e-3, l2=1e-3)

    base = resolve_model(args.base, "rec", None, None)
    encode = dictionary_encoder(base.characters)
    head = HeadModel(base.directory)
    init = head.weights()
    train_f, train_l = _features("train", args.train, args.work, head, encode, args.limit_pages, args.capture)
    dev_f, dev_l = _features("dev", args.dev, args.work, head, encode, 0, args.capture)
    train_f = [f.astype(np.float32) for f in train_f]
    dev_f = [f.astype(np.float32) for f in dev_f]
    w0, b0 = (x.astype(np.float64) for x in init)
    checkpoint = args.work / "checkpoint.npz"
    state, epoch0, history = HeadState(w0.copy(), b0.copy()), 0, []
    if args.resume and checkpoint.is_file():
        ck = np.load(checkpoint, allow_pickle=True)
        state = HeadState(ck["weight"], ck["bias"], int(ck["step"]), list(ck["moments"]))
        epoch0, history = int(ck["epoch"]), json.loads(str(ck["history"]))
        log.info("resumed after epoch %d", epoch0)
    command = "python -m models.recognizer.train " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    commands = [command]
    if args.resume and checkpoint.is_file() and "commands" in ck.files:
        commands = json.loads(str(ck["commands"])) + commands
    base_cer = error_rate(w0, b0, dev_f, dev_l)
    log.info("dev CER of the shipped head: %.4f (%d lines)", base_cer, len(dev_f))
    rng = np.random.default_rng(args.seed + epoch0)
    for epoch in range(epoch0, args.epochs):
        with tqdm(total=len(train_f), desc=f"epoch {epoch + 1}/{args.epochs}", unit="line") as bar:
            loss = train_epoch(state, (w0, b0), train_f, train_l, rng, args.lr, args.l2, progress=bar.update,
                               distill=args.distill)
        cer = error_rate(state.weight, state.bias, dev_f, dev_l)
        cer = round(cer, 5)  # compared as recorded
        history.append({"epoch": epoch + 1, "loss": round(loss, 4), "dev_cer": cer})
        log.info("epoch %d: train CTC loss %.3f, dev CER %.4f", epoch + 1, loss, cer)
        np.savez(checkpoint, weight=state.weight, bias=state.bias, step=state.step,
                 moments=np.array(state.moments, dtype=object), epoch=epoch + 1, history=json.dumps(history),
                 commands=json.dumps(commands))
        if cer <= min(h["dev_cer"] for h in history):
            head.export(args.out, state.weight, state.bias)
            (args.out / "ppocr_keys_v1.txt").write_text("".join(c + "\n" for c in base.characters), encoding="utf-8")
            (args.out / "training.json").write_text(json.dumps({
                "commands": commands,
                "base": args.base, "capture": args.capture, "train_lines": len(train_f), "dev_lines": len(dev_f),
                "distill": args.distill,
                "dev_cer_shipped_head": round(base_cer, 5), "history": history,
            }, indent=2) + "\n", encoding="utf-8")
            log.info("exported the head of epoch %d to %s", epoch + 1, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
