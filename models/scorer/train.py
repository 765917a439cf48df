"""Train the learned extraction scorer on synthetic TRAIN pages and write it as a small text model.

    PYTHONPATH=$PWD python -m models.scorer.train --truth /work/data/learned/train_plain \\
        --ocr /work/data/learned/ocr/train_var --out models/weights/scorer

``--truth`` folders are read from their ground-truth lines (single pages), ``--ocr`` folders from OCR caches
(``python -m models.scorer.ocr_cache``). Per document a random part of the label lexicon is withheld
(``--withhold-share`` of the documents, a fraction in ``[--withhold-low, --withhold-high]``), so that the scorer
learns to use geometry, value types and similarity and not only exact labels. ERNIE-Layout runs on every document
as at runtime; on ``--ernie-drop`` of them its evidence is left out, so that the scorer also learns to decide
without it (a page the extractor fails on). ``training.json`` beside the model
records the command, the seeds and the data; ``rows.npz`` beside it keeps the training rows (features, labels,
document ids; :func:`save_rows`) so that an adapted folder refits the scorer with corrections weighted in
(``models/adapt/refit.py``) without featurizing the synthetic pages again."""
from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
import time
from datetime import date
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from models.scorer.data import load_documents, training_rows
from models.scorer.fit import PARAMS, ROUNDS, fit, model_text
from stages.extraction.learned.features import FEATURE_NAMES, FEATURE_VERSION
from stages.extraction.learned.scorer import MODEL_FILE
from stages.recognition.ctc import CharDict

log = logging.getLogger("models.scorer.train")

ROWS_FILE = "rows.npz"
MAX_ROWS_BYTES = 4_000_000  # above this, a fixed seeded share of the negatives is kept (recorded in the file)


def _write_rows(path: Path, x: np.ndarray, y: np.ndarray, doc: np.ndarray, names: Sequence[str],
                negative_share: float) -> None:
    np.savez_compressed(path, features=np.asarray(x, np.float32), labels=np.asarray(y, np.uint8),
                        doc=np.asarray(doc, np.int32), names=np.asarray(list(names)),
                        negative_share=np.float32(negative_share))


def save_rows(path: Path, x: np.ndarray, y: np.ndarray, names: Sequence[str], seed: int = 0) -> dict:
    """Write the training rows compactly (float32 features, uint8 labels, int32 document ids, compressed). When
    the file would exceed :data:`MAX_ROWS_BYTES`, all positives and a seeded share of the negatives are kept and
    the share is stored (``negative_share``: a refit weighs kept negatives by its inverse). Returns what was kept."""
    uniq = sorted(set(names))
    index = {n: i for i, n in enumerate(uniq)}
    doc = np.array([index[n] for n in names], np.int32)
    _write_rows(path, x, y, doc, uniq, 1.0)
    share = 1.0
    size = path.stat().st_size
    if size > MAX_ROWS_BYTES:
        share = MAX_ROWS_BYTES / size * 0.95
        keep = (y > 0) | (np.random.default_rng(seed).random(len(y)) < share)
        _write_rows(path, x[keep], y[keep], doc[keep], uniq, share)
    return {"file": path.name, "rows": int(np.load(path)["labels"].size), "negative_share": round(share, 4),
            "bytes": path.stat().st_size}


def load_rows(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(features, labels, weights) of a ``rows.npz``; kept negatives of a subsample weigh 1 / ``negative_share``."""
    with np.load(path) as data:
        x = data["features"].astype(np.float32)
        y = data["labels"].astype(np.float32)
        share = float(data["negative_share"])
    w = np.where(y > 0, 1.0, 1.0 / share).astype(np.float32)
    return x, y, w


def char_dict() -> CharDict:
    """The default recognizer's dictionary (for label re-reading, as at runtime)."""
    from stages.contracts.config import load_config
    from stages.contracts.registry import resolve_model

    rc = load_config(None).recognition
    model = resolve_model(rc.model, "rec", rc.model_dir, rc.dict_path)
    assert model.characters is not None
    return CharDict.from_chars(model.characters, use_space_char=True)


def _data_record(folder: Path) -> dict:
    """Where a folder's pages came from (the generator's split, seed and variants, from its ground truth)."""
    from models.scorer.ocr_cache import load_cached

    seeds, splits, variants, n = set(), set(), set(), 0
    truths = []
    for p in sorted(Path(folder).glob("*.json")):
        try:
            truths.append(json.loads(p.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError):
            continue
    truths += [load_cached(p).truth for p in sorted(Path(folder).glob("*.pkl"))]
    for t in truths:
        n += 1
        seeds.add(t.get("seed"))
        splits.add(t.get("split"))
        if t.get("variant"):
            variants.add(t["variant"])
    return {"folder": str(folder), "documents": n, "seeds": sorted(s for s in seeds if s is not None),
            "splits": sorted(s for s in splits if s), "variants": sorted(variants)}


def extractor(model_dir: Optional[Path] = None):
    """The default config's ERNIE-Layout extractor (its evidence enters the features, as at runtime)."""
    from stages.contracts.config import load_config
    from stages.extraction.ernie import ErnieExtractor

    return ErnieExtractor(load_config(None).predictor, model_dir=model_dir)


def collect(truth: Sequence[Path], ocr: Sequence[Path], seed: int, share: float, low: float, high: float,
            today: date, ernie_drop: float = 0.0, ernie_dir: Optional[Path] = None, novel: float = 0.0,
            novel_stem: float = 0.0) -> tuple[np.ndarray, np.ndarray, list[str]]:
    docs = load_documents(truth, ocr)
    chars = char_dict()
    ernie = extractor(ernie_dir)
    xs, ys, names = [], [], []
    t0 = time.perf_counter()
    for i, (name, x, y) in enumerate(training_rows(docs, today, seed, share, low, high, chars, ernie, ernie_drop,
                                                   novel, novel_stem=novel_stem)):
        xs.append(x)
        ys.append(y)
        names += [name] * len(y)
        if (i + 1) % 50 == 0:
            log.info("%d/%d documents featurized (%.0f ms each)", i + 1, len(docs),
                     1000 * (time.perf_counter() - t0) / (i + 1))
    return np.concatenate(xs), np.concatenate(ys), names


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--truth", type=Path, action="append", default=[], help="synthetic train folder (ground-truth lines)")
    ap.add_argument("--ocr", type=Path, action="append", default=[], help="OCR cache folder of synthetic train pages")
    ap.add_argument("--out", type=Path, default=Path("models/weights/scorer"))
    ap.add_argument("--seed", type=int, default=0, help="seed of the withheld wordings and of LightGBM")
    ap.add_argument("--withhold-share", type=float, default=0.5)
    ap.add_argument("--withhold-low", type=float, default=0.2)
    ap.add_argument("--withhold-high", type=float, default=0.6)
    ap.add_argument("--ernie-drop", type=float, default=0.15,
                    help="share of documents featurized without ERNIE-Layout's evidence (its failure path)")
    ap.add_argument("--ernie-dir", type=Path, default=None, help="ERNIE-Layout export (default: the shipped one)")
    ap.add_argument("--novel", type=float, default=0.0,
                    help="share of documents whose labels of 1-3 fields are printed in novel wordings")
    ap.add_argument("--novel-stem", type=float, default=0.0,
                    help="share of those documents whose new wordings keep the labels' attribute (证件号码, 日期) "
                         "and replace only the role word or head")
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ap.add_argument("--today", default="2026-06-01", help="the date normalizers compare against (reproducibility)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    for folder in args.truth + args.ocr:
        if any(part == "test" for part in _data_record(folder)["splits"]):
            ap.error(f"{folder} holds test-split pages; the scorer trains on the train split only")
    x, y, names = collect(args.truth, args.ocr, args.seed, args.withhold_share, args.withhold_low,
                          args.withhold_high, date.fromisoformat(args.today), args.ernie_drop, args.ernie_dir,
                          args.novel, args.novel_stem)
    log.info("%d candidates from %d documents, %d positive", len(y), len(set(names)), int(y.sum()))
    scorer = fit(x, y, seed=args.seed, rounds=args.rounds)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / MODEL_FILE).write_text(model_text(scorer), encoding="utf-8")
    rows = save_rows(args.out / ROWS_FILE, x, y, names, args.seed)
    log.info("wrote %s: %d rows, %d bytes", rows["file"], rows["rows"], rows["bytes"])
    import lightgbm

    record = {
        "command": "PYTHONPATH=$PWD python -m models.scorer.train " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:])),
        "seed": args.seed, "today": args.today,
        "withhold": {"share": args.withhold_share, "low": args.withhold_low, "high": args.withhold_high},
        "ernie_drop": args.ernie_drop, "novel": args.novel, "novel_stem": args.novel_stem, "ernie_dir": str(args.ernie_dir) if args.ernie_dir else None,
        "truth_lines": [_data_record(f) for f in args.truth], "ocr_caches": [_data_record(f) for f in args.ocr],
        "candidates": int(len(y)), "positives": int(y.sum()), "documents": len(set(names)),
        "feature_version": FEATURE_VERSION, "features": list(FEATURE_NAMES),
        "params": PARAMS, "rounds": args.rounds, "lightgbm": lightgbm.__version__, "rows": rows,
    }
    (args.out / "training.json").write_text(json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8")
    log.info("wrote %s", args.out / MODEL_FILE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
