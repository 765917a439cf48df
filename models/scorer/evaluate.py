"""Replay extraction on OCR caches and compare configurations in one run: micro-F1, document accuracy, documents
straight through and wrong among them, extraction ms per page (configurations interleaved per document) against
the OCR ms per page recorded in the cache. Optionally with a part of the label lexicon withheld per document.

    PYTHONPATH=$PWD python -m models.scorer.evaluate --ocr /work/data/learned/ocr/dev5 \\
        --config rules=configs/default.yaml --config learned=configs/learned.yaml --withhold 0.3:1

With ``--json``, also writes per configuration the wrong fields (``errors``), the documents sent straight through
(``straight_through``), per field a sample of the decision's evidence and whether it was right (``samples``,
with the document's name) and per document whether it was right, its routing's risk and hard reasons, each found
field's confidence and each empty field's P(really absent) (``documents``), which ``python -m
models.scorer.calibrate`` fits on. On withheld-wording dev draws (``docpipe synth --wordings``), each result also
counts the fields printed under a withheld wording against the others (``withheld_wordings``: fields, right, sure
at a confidence of 0.99 or more, and sure but wrong)."""
from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

from models.scorer.ocr_cache import CachedDocument, load_folder
from models.scorer.train import char_dict
from pipeline.tools.scoring import Scoreboard
from stages.contracts.config import DocpipeConfig, load_config
from stages.contracts.fields import FIELD_KEYS
from stages.extraction.page_roles import RoleAwareFields
from stages.extraction.rules.lexicon import LabelWithholding
from stages.extraction.stage import ExtractionStage

log = logging.getLogger("models.scorer.evaluate")


_EVIDENCE = ("how", "rec_min", "value_rec_min", "rec_mean", "margin", "rivals", "valid")  # recorded per found field
SURE = 0.99  # a field's confidence counted as sure in the withheld-wording tally


class WordingTally:
    """On withheld-wording dev draws (``docpipe synth --wordings``), the present fields printed under a withheld
    wording against the other present fields: how many, right, and found at a confidence of at least :data:`SURE`
    (and of those, wrong)."""

    def __init__(self) -> None:
        self.counts = {k: 0 for k in ("fields", "right", "sure", "sure_wrong",
                                      "other_fields", "other_right", "other_sure", "other_sure_wrong")}

    def add(self, truth: dict, fields: dict, pred: dict) -> None:
        withheld = truth.get("dev_wordings", {})
        for k, want in truth["fields"].items():
            if want is None:
                continue
            pre = "" if k in withheld else "other_"
            right = pred.get(k) == want
            sure = (fields.get(k) or {}).get("confidence") is not None and fields[k]["confidence"] >= SURE
            self.counts[pre + "fields"] += 1
            self.counts[pre + "right"] += right
            self.counts[pre + "sure"] += sure
            self.counts[pre + "sure_wrong"] += sure and not right


class Tally:
    """One configuration on one folder."""

    def __init__(self) -> None:
        self.board = Scoreboard(FIELD_KEYS)
        self.straight = 0
        self.straight_wrong = 0
        self.ms = 0.0
        self.pages = 0
        self.samples: list[dict[str, Any]] = []
        self.straight_docs: list[str] = []  # documents sent straight through, in folder order
        self.documents: list[dict[str, Any]] = []  # per document: right, and the routing's hard reasons
        self.wordings = WordingTally()

    def add(self, doc: CachedDocument, fields: dict, reasons: list, diagnostics: dict, ms: float) -> None:
        truth = doc.truth["fields"]
        pred = {k: (v or {}).get("value") for k, v in fields.items()}
        right = self.board.add_document(doc.name, truth, pred)
        self.wordings.add(doc.truth, fields, pred)
        if not reasons:
            self.straight += 1
            self.straight_docs.append(doc.name)
            self.straight_wrong += not right
        self.ms += ms
        self.pages += len(doc.pages)
        routing = diagnostics.get("routing", {})
        self.documents.append({"doc": doc.name, "right": right, "hard_reasons": list(routing.get("hard_reasons", ())),
                               "risk": routing.get("risk"),
                               "confidence": {k: v.get("confidence") for k, v in fields.items() if v is not None},
                               "absent_ok": diagnostics.get("absent_ok", {})})
        evidence = diagnostics.get("evidence", {})
        rules = diagnostics.get("rules")  # the learned decision: fields the rules' own decision shares, finds
        for k in FIELD_KEYS:
            found = pred.get(k) is not None
            sample = {"doc": doc.name, "field": k, "found": found, "correct": pred.get(k) == truth.get(k),
                      "truth_absent": truth.get(k) is None,
                      "score": evidence.get(k, {}).get("score") if found else None}
            if found:
                sample["evidence"] = {e: evidence.get(k, {}).get(e) for e in _EVIDENCE}
            elif k in diagnostics.get("vacant", {}):
                sample["vacant"] = diagnostics["vacant"][k]
                sample["document_capture"] = (rules or {}).get("document_capture")
                sample["labelled"] = k in (rules or {}).get("labelled", ())
                sample["misread_likely"] = k in (rules or {}).get("misread_likely", ())
            if rules is not None:
                sample["rules_agree"] = k in rules["agree"]
                sample["rules_found"] = k in rules["found"]
                sample["rules_confidence"] = rules.get("agree_confidence", {}).get(k)
                sample["capture"] = rules.get("capture", {}).get(k)
            self.samples.append(sample)

    def report(self) -> dict[str, Any]:
        m = self.board.micro
        return {"documents": self.board.docs, "f1": round(m.f1, 4), "precision": round(m.precision, 4),
                "recall": round(m.recall, 4), "document_accuracy": round(self.board.docs_all_right / max(1, self.board.docs), 4),
                "straight_through": self.straight, "wrong_straight_through": self.straight_wrong,
                "extract_ms_per_page": round(self.ms / max(1, self.pages), 1),
                "wrong_fields": len(self.board.errors),
                **({"withheld_wordings": self.wordings.counts} if self.wordings.counts["fields"] else {})}


def compare(folders: Sequence[Path], configs: dict[str, DocpipeConfig], withhold: Sequence[tuple[float, int]]
            ) -> dict[str, Any]:
    chars = char_dict()
    draws = [(0.0, 0)] + list(withhold)
    stages = {(name, frac, seed): RoleAwareFields(ExtractionStage(cfg, chars, LabelWithholding(frac, seed)))
              for name, cfg in configs.items() for frac, seed in draws}
    out: dict[str, Any] = {}
    samples: dict[str, Any] = {}
    errors: dict[str, Any] = {}
    straight: dict[str, Any] = {}
    documents: dict[str, Any] = {}
    for folder in folders:
        docs = load_folder(folder)
        tallies = {k: Tally() for k in stages}
        ocr_ms = sum(sum(v for k, v in d.timings.items() if k in ("decode", "normalize", "detect", "recognize"))
                     for d in docs if d.timings)
        ocr_pages = sum(len(d.pages) for d in docs if d.timings)
        for doc in docs:
            for key, stage in stages.items():
                t0 = time.perf_counter()
                found = stage(doc.lines, doc.pages)
                tallies[key].add(doc, found.fields, found.review_reasons, found.diagnostics,
                                 1000 * (time.perf_counter() - t0))
        for (name, frac, seed), t in tallies.items():
            label = f"{folder.name}{'' if not frac else f'/withheld {frac}:{seed}'}/{name}"
            out[label] = {**t.report(), "ocr_ms_per_page": round(ocr_ms / ocr_pages, 1) if ocr_pages else None}
            samples[label] = t.samples
            errors[label] = [list(e) for e in t.board.errors]
            straight[label] = t.straight_docs
            documents[label] = t.documents
            log.info("%-34s %s", label, json.dumps(out[label]))
    return {"results": out, "errors": errors, "samples": samples, "straight_through": straight,
            "documents": documents}


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ocr", type=Path, action="append", required=True, help="OCR cache folder (dev splits only)")
    ap.add_argument("--config", action="append", required=True, help="NAME=PATH of a docpipe YAML config")
    ap.add_argument("--withhold", action="append", default=[], help="FRACTION:SEED, a withheld-wording draw")
    ap.add_argument("--json", type=Path, help="write results, errors, straight-through documents and per-field samples here")
    args = ap.parse_args(argv)
    empty = [str(f) for f in args.ocr if not f.is_dir() or not any(f.glob("*.pkl"))]
    if empty:  # a mistyped folder would report F1 1.0 over no documents
        ap.error(f"--ocr folder(s) missing or holding no OCR cache: {', '.join(empty)}")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    configs = {n: load_config(p) for n, p in (c.split("=", 1) for c in args.config)}
    withhold = [(float(f), int(s)) for f, s in (w.split(":") for w in args.withhold)]
    rep = compare(args.ocr, configs, withhold)
    if args.json:
        args.json.write_text(json.dumps(rep, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
