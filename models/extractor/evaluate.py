"""Score an exported extractor on labelled pages through the runtime stage (either environment).

    python -m models.extractor.evaluate --model models/weights/extractor --data /tmp/synth/dev --split dev

Prints token and field measures of arg-max BIO decoding (span text match, overall and per layout family),
the field measures of validator-aware decoding (normalised value match: ``validator_decoding``) and the
stage's time per page.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

from models.extractor.data import TrainingDoc, load_docs
from models.extractor.metrics import Scorer, ValueScorer, gold_values
from stages.extraction.field_specs import FIELDS
from stages.contracts.config import PredictorConfig
from stages.extraction.ernie import ErnieExtractor, ExtractorLine, ExtractorPage


def page_of(doc: TrainingDoc) -> ExtractorPage:
    return ExtractorPage([ExtractorLine(t, b) for t, b in zip(doc.texts, doc.boxes)], doc.width, doc.height)


def evaluate(extractor: ErnieExtractor, docs: list[TrainingDoc]) -> dict:
    overall = Scorer()
    decoded = ValueScorer()
    today = date.today()
    by_layout: dict[str, Scorer] = {}
    ms: list[float] = []
    windows = 0
    extractor.extract(page_of(docs[0]))  # warm-up (first run builds oneDNN primitives)
    for doc in docs:
        page = page_of(doc)
        t0 = time.perf_counter()
        res = extractor.extract(page)
        ms.append((time.perf_counter() - t0) * 1000)
        windows += len(extractor.windows(page)[0].spans)
        probs = np.concatenate(res.char_probs) if res.char_probs else np.zeros((0, len(res.labels)))
        gold = np.concatenate(doc.labels) if doc.labels else np.zeros(0, np.int64)
        chars = [ch for t in doc.texts for ch in t]
        for sc in (overall, by_layout.setdefault(doc.layout or "?", Scorer())):
            sc.add(chars, gold, probs.argmax(-1), probs.max(-1))
        picked = res.valid_fields(doc.texts, today)
        decoded.add(gold_values(chars, gold, today),
                    {k: FIELDS[k].normalizer(s.text, today).value for k, s in picked.items()})
    report = overall.report()
    report["validator_decoding"] = decoded.report()
    report["per_layout_field_f1"] = {k: v.report()["field_micro"]["f1"] for k, v in sorted(by_layout.items())}
    report["timing"] = {
        "ms_per_page_median": round(statistics.median(ms), 1),
        "ms_per_page_mean": round(statistics.fmean(ms), 1),
        "chars_per_page_mean": round(statistics.fmean(d.n_chars for d in docs), 1),
        "windows_per_page_mean": round(windows / len(docs), 2),
        "ms_per_window_mean": round(sum(ms) / max(windows, 1), 1),
    }
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.extractor.evaluate", description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=None, help="export directory (default: models/weights/extractor)")
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--split", default="", help="keep pages whose 'split' is this ('' = all)")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-batch", type=int, default=4)
    ap.add_argument("--out", type=Path, default=None, help="also write the report here (JSON)")
    args = ap.parse_args(argv)
    docs = load_docs(args.data, split=args.split or None, limit=args.limit)
    if not docs:
        print(f"no labelled pages under {args.data}", file=sys.stderr)
        return 2
    extractor = ErnieExtractor(PredictorConfig(cpu_threads=args.threads), model_dir=args.model, max_batch=args.max_batch)
    report = evaluate(extractor, docs)
    text = json.dumps(report, ensure_ascii=False, indent=1)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
