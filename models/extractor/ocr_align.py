"""Training data as our OCR reads it: run the engine over a synthetic corpus and carry each ground-truth
character label over to the OCR characters it overlaps, so the extractor learns real OCR noise and real
line geometry (merged table cells, split lines, misread characters).

    python -m models.extractor.ocr_align IN_DIR OUT_DIR [--workers 2] [--limit N]

writes ``OUT_DIR/<stem>.json`` in the generator's format (``lines[].text/polygon/labels/char_boxes``,
``fields``, ``width``, ``height``) with the OCR lines in place of the rendered ones."""
from __future__ import annotations

import argparse
import json
import logging
import sys
import unicodedata
from pathlib import Path
from typing import Any, Sequence

import numpy as np

log = logging.getLogger(__name__)


def _centers(boxes: np.ndarray) -> np.ndarray:
    return np.stack([(boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2], axis=1)


def transfer_labels(ocr_lines: Sequence[dict], truth_lines: Sequence[dict]) -> list[list[str]]:
    """For each OCR character, the label of the ground-truth character whose box holds its centre
    (nearest same character first, then any), re-made into valid BIO in reading order."""
    gt_boxes, gt_labels, gt_chars = [], [], []
    for ln in truth_lines:
        for ch, lab, box in zip(ln["text"], ln["labels"], ln["char_boxes"]):
            gt_boxes.append(box)
            gt_labels.append(lab)
            gt_chars.append(unicodedata.normalize("NFKC", ch))
    out: list[list[str]] = []
    if not gt_boxes:
        return [["O"] * len(ln["text"]) for ln in ocr_lines]
    gb = np.asarray(gt_boxes, np.float32)
    gc = _centers(gb)
    gh = np.maximum(gb[:, 3] - gb[:, 1], 1.0)
    for ln in ocr_lines:
        labels = []
        boxes = np.asarray(ln["char_boxes"], np.float32).reshape(-1, 4)
        for ch, box in zip(ln["text"], boxes):
            c = np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2])
            inside = (gb[:, 0] - 2 <= c[0]) & (c[0] <= gb[:, 2] + 2) & (gb[:, 1] - 2 <= c[1]) & (c[1] <= gb[:, 3] + 2)
            d = np.linalg.norm(gc - c, axis=1) / gh
            cand = np.flatnonzero(inside | (d < 0.8))
            if cand.size == 0:
                labels.append("O")
                continue
            same = [i for i in cand if gt_chars[i] == unicodedata.normalize("NFKC", ch)]
            pick = min(same or cand.tolist(), key=lambda i: d[i])
            labels.append(gt_labels[pick])
        out.append(labels)
    return _repair_bio(out)


def _repair_bio(lines: list[list[str]]) -> list[list[str]]:
    prev = "O"
    fixed = []
    for labels in lines:
        row = []
        for lab in labels:
            if lab.startswith("I-") and prev[2:] != lab[2:]:
                lab = "B-" + lab[2:]
            row.append(lab)
            prev = lab
        fixed.append(row)
    return fixed


def aligned_document(result: dict, truth: dict) -> dict[str, Any]:
    page = result["pages"][0]
    lines = page["lines"]
    labels = transfer_labels(lines, truth["lines"])
    return {
        "schema": "docpipe-synth-ocr/1",
        "source": result["source"],
        "split": truth.get("split"),
        "layout": truth.get("layout"),
        "width": page["width"],
        "height": page["height"],
        "fields": truth["fields"],
        "field_text": truth.get("field_text", {}),
        "lines": [
            {"text": ln["text"], "polygon": ln["polygon"], "labels": lab, "char_boxes": ln["char_boxes"]}
            for ln, lab in zip(lines, labels)
        ],
    }


def main(argv: list[str] | None = None) -> int:
    from stages.contracts.config import DocpipeConfig, with_overrides
    from pipeline.core.engine import Engine

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", type=Path)
    ap.add_argument("output", type=Path)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    truths = []
    for p in sorted(args.input.glob("*.json")):
        t = json.loads(p.read_text(encoding="utf-8"))
        img = args.input / t.get("image", p.with_suffix(".jpg").name)
        if "lines" in t and img.is_file() and not (args.output / p.name).exists():
            truths.append((p, img, t))
    if args.limit:
        truths = truths[: args.limit]
    args.output.mkdir(parents=True, exist_ok=True)
    cfg = with_overrides(
        DocpipeConfig(), output={"include_chars": True}, extraction={"method": "rules"},
        predictor={"cpu_threads": 1}, engine={"mode": "processes", "workers": args.workers},
    )
    done = 0
    with Engine(cfg) as eng:
        for (p, _img, truth), res in zip(truths, eng.extract_many([str(i) for _, i, _ in truths])):
            if res["errors"]:
                log.warning("%s: %s", p.name, res["errors"])
                continue
            doc = aligned_document(res, truth)
            (args.output / p.name).write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
            done += 1
            if done % 25 == 0:
                log.info("%d/%d aligned", done, len(truths))
    log.info("%d documents written to %s", done, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
