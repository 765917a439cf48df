"""Fine-tune a capture's recognizer past a cut in its network: the backbone's last stage(s), the neck
(convolutions and SVTR attention) and the CTC head.

    python -m models.recognizer.train_tail --base ppocrv4_rec_fax --cut h6 --train DIR --dev DIR --work DIR --out DIR [--resume]

The starting model (``--base``, a registry key) is replayed from the cut (``--cut``: ``neck``, the backbone's output;
``hN``, the first variable of height N inside the backbone; ``input``) in dynamic-mode Paddle
(``models.recognizer.replay``); what lies before the cut stays as shipped and its features of every training row
are computed once and cached in ``--work``. Rows are a page's line crops packed as the product's recognizer packs them
(``models.recognizer.rows``; lines cut as in ``models.recognizer.lines``). After every epoch a checkpoint (weights
and optimizer state) goes to ``--work`` and ``--resume`` continues from it; the epoch with the lowest dev character
error rate is exported to ``--out`` as a complete inference model with its dictionary and a ``training.json``.
"""
from __future__ import annotations

import argparse
import json
import logging
import pickle
import shlex
import sys
from itertools import groupby
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
from tqdm import tqdm

from models.recognizer.head import HeadModel
from models.recognizer.lines import line_samples
from models.recognizer.tail import error_rate, train_epoch
from models.recognizer.replay import ProgramReplay, cut_variable, logits_var
from models.recognizer.rows import Row, backbone_rows
from models.recognizer.train import dictionary_encoder, parse_training_arguments
from stages.contracts.config import load_config
from stages.contracts.registry import resolve_model
from stages.contracts.types import CAPTURES
from stages.detection.detector import TextDetector

log = logging.getLogger("models.recognizer.train_tail")
_IMAGES = (".png", ".jpg", ".jpeg")


def _rows(name: str, pages: Path, work: Path, model: HeadModel, cut: str, encode, limit: int,
          capture: str) -> list[Row]:
    cache = work / f"rows_{name}_{pages.name}_{limit or 'all'}_{cut}.pkl"
    if cache.is_file():
        with cache.open("rb") as f:
            return pickle.load(f)
    files = sorted(f for f in pages.iterdir() if f.suffix.lower() in _IMAGES)[: limit or None]
    config = load_config(None)
    detector = TextDetector(config.detection, config.predictor)
    predictor = None if cut == "input" else model.predictor_until(cut_variable(model.program, cut))
    rows: list[Row] = []
    with tqdm(total=len(files), desc=f"{name} pages", unit="page") as bar:
        for path in files:
            for _, samples in groupby(line_samples([path], config, detector, capture), key=lambda s: s.page):
                kept = [(s.crop, encode(s.text)) for s in samples]
                kept = [(c, lab) for c, lab in kept if lab]
                if kept:
                    rows.extend(backbone_rows([c for c, _ in kept], [lab for _, lab in kept],
                                              config.recognition, predictor))
            bar.update(1)
    with cache.open("wb") as f:
        pickle.dump(rows, f)
    log.info("%s: %d rows, %d lines from %d pages", name, len(rows), sum(len(r.members) for r in rows), len(files))
    return rows


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", default="ppocrv4_rec_fax", help="registry key of the recognizer to start from")
    p.add_argument("--train", type=Path, required=True)
    p.add_argument("--dev", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--work", type=Path, required=True, help="row cache and checkpoint (kept outside git)")
    p.add_argument("--cut", default="neck", help="where training starts: neck, hN (inside the backbone) or input")
    p.add_argument("--capture", choices=[c for c in CAPTURES if c != "scan"], default="fax")
    p.add_argument("--batch", type=int, default=16, help="rows per step")
    args = parse_training_arguments(p, argv, epochs=4, lr=2e-4, l2=1e-2)

    base = resolve_model(args.base, "rec", None, None)
    encode = dictionary_encoder(base.characters)
    model = HeadModel(base.directory)
    made = base.directory / "training.json"
    base_training = json.loads(made.read_text(encoding="utf-8")) if made.is_file() else None
    train_rows = _rows("train", args.train, args.work, model, args.cut, encode, args.limit_pages, args.capture)
    dev_rows = _rows("dev", args.dev, args.work, model, args.cut, encode, 0, args.capture)

    import paddle

    paddle.disable_static()
    paddle.seed(args.seed)
    replay = ProgramReplay(model.program, model.scope, cut_variable(model.program, args.cut),
                           logits_var(model.program))
    start = replay.parameters_numpy()
    optimizer = paddle.optimizer.Adam(learning_rate=args.lr, parameters=replay.parameters())
    checkpoint = args.work / f"checkpoint_{args.cut}.pkl"
    epoch0, history = 0, []
    commands = ["python -m models.recognizer.train_tail " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))]
    if args.resume and checkpoint.is_file():
        with checkpoint.open("rb") as f:
            ck = pickle.load(f)
        for name, value in ck["weights"].items():
            replay.params[name].set_value(value)
        optimizer.set_state_dict({k: paddle.to_tensor(v) if isinstance(v, np.ndarray) else v
                                  for k, v in ck["optimizer"].items()})
        epoch0, history, commands = ck["epoch"], ck["history"], ck["commands"] + commands
        log.info("resumed after epoch %d", epoch0)
    base_cer = round(error_rate(replay, dev_rows), 5) if not history else history[0]["dev_cer_start"]
    log.info("dev CER at the start: %.4f (%d lines)", base_cer, sum(len(r.members) for r in dev_rows))
    rng = np.random.default_rng(args.seed + epoch0)
    for epoch in range(epoch0, args.epochs):
        with tqdm(total=len(train_rows), desc=f"epoch {epoch + 1}/{args.epochs}", unit="row") as bar:
            loss = train_epoch(replay, optimizer, start, train_rows, rng, args.l2, args.batch, progress=bar.update)
        cer = round(error_rate(replay, dev_rows), 5)
        history.append({"epoch": epoch + 1, "loss": round(loss, 4), "dev_cer": cer, "dev_cer_start": base_cer})
        log.info("epoch %d: train CTC loss %.3f, dev CER %.4f", epoch + 1, loss, cer)
        state = {k: (v.numpy() if hasattr(v, "numpy") else v) for k, v in optimizer.state_dict().items()}
        with checkpoint.open("wb") as f:
            pickle.dump({"weights": replay.parameters_numpy(), "optimizer": state, "epoch": epoch + 1,
                         "history": history, "commands": commands}, f)
        if cer <= min(h["dev_cer"] for h in history) and cer < base_cer:
            model.export_params(args.out, replay.parameters_numpy())
            (args.out / "ppocr_keys_v1.txt").write_text("".join(c + "\n" for c in base.characters), encoding="utf-8")
            (args.out / "training.json").write_text(json.dumps({
                "commands": commands, "base": args.base, "trained": f"everything after the cut {args.cut}", "capture": args.capture,
                "train_lines": sum(len(r.members) for r in train_rows),
                "dev_lines": sum(len(r.members) for r in dev_rows),
                "dev_cer_start": base_cer, "history": history, "base_training": base_training,
            }, indent=2) + "\n", encoding="utf-8")
            log.info("exported epoch %d to %s", epoch + 1, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
