"""Blend a refitted recognizer head with the head it was fitted from, in weight space: alpha * fitted + (1 - alpha) *
shipped, for the CTC head's weight and bias alike.

    python -m models.recognizer.mix --fitted DIR --alpha 0.5 --out models/weights/rec_fax [--base ppocrv4_rec]

A head refitted on the generator's lines reads them better and forgets the characters they never hold; the blend
keeps part of each (docs/decisions.md, "Capture recognizers"). ``--fitted`` is a folder that
``models.recognizer.train`` exported; ``--out`` gets the complete inference model, the dictionary and a
``training.json`` holding the fitted head's record and this command.
"""
from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

log = logging.getLogger("models.recognizer.mix")


def blend(fitted: tuple[np.ndarray, np.ndarray], shipped: tuple[np.ndarray, np.ndarray],
          alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(weight, bias) at ``alpha`` of the way from the shipped head to the fitted one."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha {alpha} is not in [0, 1]")
    if any(f.shape != s.shape for f, s in zip(fitted, shipped)):
        raise ValueError("the fitted head and the shipped head differ in shape")
    weight, bias = (alpha * f.astype(np.float64) + (1.0 - alpha) * s.astype(np.float64) for f, s in zip(fitted, shipped))
    return weight.astype(fitted[0].dtype), bias.astype(fitted[1].dtype)


def main(argv: Optional[Sequence[str]] = None) -> int:
    from models.recognizer.head import HeadModel
    from stages.contracts.registry import resolve_model

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fitted", type=Path, required=True, help="a head exported by models.recognizer.train")
    p.add_argument("--alpha", type=float, required=True, help="the fitted head's share (0: the shipped head)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--base", default="ppocrv4_rec", help="registry key of the recognizer the head was fitted from")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if not 0.0 <= args.alpha <= 1.0:
        p.error(f"--alpha {args.alpha} is not in [0, 1]")
    base = resolve_model(args.base, "rec", None, None)
    shipped = HeadModel(base.directory)
    fitted = HeadModel(args.fitted)
    weight, bias = blend(fitted.weights(), shipped.weights(), args.alpha)
    shipped.export(args.out, weight, bias)
    (args.out / "ppocr_keys_v1.txt").write_text("".join(c + "\n" for c in base.characters), encoding="utf-8")
    record_path = args.fitted / "training.json"
    record = json.loads(record_path.read_text(encoding="utf-8")) if record_path.is_file() else {}
    command = "python -m models.recognizer.mix " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    record = {**record, "commands": list(record.get("commands", [])) + [command], "base": args.base,
              "mix": {"alpha": args.alpha}}
    (args.out / "training.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    log.info("wrote %s: %.2f of the fitted head, %.2f of %s's", args.out, args.alpha, 1 - args.alpha, args.base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
