"""``docpipe eval DIR``: accuracy report against ground-truth JSON (measures: docs/accuracy.md).

DIR holds page images with a JSON beside each (``x.jpg`` + ``x.json`` with ``fields`` and ``lines``, as
written by ``docpipe synth``). Reports per-field precision/recall/F1 of exact normalized matches, micro-F1,
document accuracy, CER over lines, seconds per page, the worst errors, the rules-only baseline on the
same OCR lines, what constrained re-decoding changed, the reliability of field confidence (ECE, table) and the
routing curve (straight-through rate vs error rate among straight-through documents). The JSON report also
holds every field's evidence and correctness (``calibration_samples``), which ``models/calibration/fit.py``
fits the calibrator on."""
from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any, Optional


from stages.contracts.config import ConfigError, load_config, with_overrides
from stages.contracts.fields import FIELD_KEYS
from stages.extraction.rules.lexicon import LabelWithholding
from pipeline.tools.metrics import CERCount, page_cer, result_lines, text_polygons, total_cer
from pipeline.tools.reliability import (
    RoutedDocument, expected_calibration_error, format_reliability, reliability_table, routing_curve,
)
from pipeline.tools.scoring import Scoreboard

IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".tif", ".tiff", ".pdf", ".bmp", ".webp")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", type=Path, help="directory of documents with ground-truth JSON beside them")
    p.add_argument("--config", help="docpipe YAML config")
    p.add_argument("--json", type=Path, help="write the full report (incl. every error) here")
    p.add_argument("--limit", type=int, default=0, help="evaluate only the first N documents")
    p.add_argument("--worst", type=int, default=15, help="errors listed in the printed report")
    p.add_argument("--withhold-labels", type=float, default=0.0, metavar="F",
                   help="measurement only: the rules forget this fraction of their label wordings, drawn per "
                        "document, to show how they fail on wordings nobody listed (0 = off)")
    p.add_argument("--withhold-seed", type=int, default=0, metavar="S", help="the draw of --withhold-labels")


def find_documents(directory: Path) -> list[tuple[Path, dict]]:
    docs = []
    for gt in sorted(directory.glob("*.json")):
        try:
            truth = json.loads(gt.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if not isinstance(truth, dict) or "fields" not in truth:
            continue
        image = directory / truth["image"] if truth.get("image") else None
        if image is None or not image.is_file():
            image = next((gt.with_suffix(e) for e in IMAGE_EXTS if gt.with_suffix(e).is_file()), None)
        if image is not None:
            docs.append((image, truth))
    return docs


def field_values(result: dict) -> dict[str, Optional[str]]:
    return {k: (v or {}).get("value") for k, v in result.get("fields", {}).items()}


def calibration_samples(name: str, result: dict, want: dict, got: dict) -> tuple[list[dict], list[dict]]:
    """One document's rows for the calibration fits (``models/calibration/fit.py``): per field with evidence, its
    confidence, its validity as output and whether it is right; per field left empty, its P(really absent) and
    whether it truly is."""
    diag = result.get("diagnostics", {}) or {}
    samples = []
    for key, ev in (diag.get("evidence", {}) or {}).items():
        field = result["fields"].get(key) or {}
        samples.append({"document": name, "key": key, "confidence": field.get("confidence"),
                        "valid": field.get("valid"),
                        "correct": got.get(key) is not None and got.get(key) == want.get(key), "evidence": ev})
    absent = [{"document": name, "key": key, "absent_ok": p, "truly_absent": want.get(key) is None}
              for key, p in (diag.get("absent_ok", {}) or {}).items()]
    return samples, absent


def rules_values(result: dict, today: date) -> dict[str, Optional[str]]:
    from stages.extraction.rules import extract_rules, lines_from_records

    lines = [ln for page in result.get("pages", []) for ln in lines_from_records(page["lines"], page=page["index"])]
    return {k: (m.value if m is not None else None) for k, m in extract_rules(lines, today).items()}


def evaluate(directory: Path, config_path: Optional[str], limit: int = 0,
             withhold: Optional[LabelWithholding] = None) -> dict[str, Any]:
    from pipeline.core.engine import Engine

    config = load_config(config_path)
    config = with_overrides(config, output={"diagnostics": True})
    docs = find_documents(directory)
    if limit:
        docs = docs[:limit]
    today = date.today()
    model, rules = Scoreboard(FIELD_KEYS), Scoreboard(FIELD_KEYS)
    by_variant: dict[str, VariantStats] = {}
    cer_counts: list[CERCount] = []
    redecode = {"changed": 0, "fixed": 0, "broke": 0, "other": 0}
    failed = 0
    pages = 0
    samples: list[dict] = []
    absent_samples: list[dict] = []
    routed: list[RoutedDocument] = []
    straight = wrong_straight = 0
    t0 = time.perf_counter()
    with Engine(config, withhold=withhold) as engine:
        for (image, truth), result in zip(docs, engine.extract_many([str(p) for p, _ in docs])):
            name = image.name
            if result["errors"]:
                failed += 1
            pages += max(1, len(result["pages"]))
            want = truth["fields"]
            got = field_values(result)
            all_right = model.add_document(name, want, got)
            rows, empty = calibration_samples(name, result, want, got)
            samples += rows
            absent_samples += empty
            diag = result.get("diagnostics", {}) or {}
            rt = diag.get("routing") or {}
            routed.append(RoutedDocument(float(rt.get("risk", 1.0)), bool(rt.get("hard_reasons")) or bool(result["errors"])
                                         or "routing" not in diag, all_right))
            if not result["needs_review"]:
                straight += 1
                wrong_straight += not all_right
            rules.add_document(name, want, rules_values(result, today) if not result["errors"] else {})
            variant = truth.get("variant", "scan")
            stats = by_variant.setdefault(variant, VariantStats(Scoreboard(FIELD_KEYS)))
            stats.add(name, truth, result)
            ref, hyp = text_polygons(truth.get("lines", [])), result_lines(result, truth.get("schedule_page"))
            if ref:
                cer_counts.append(page_cer(ref, hyp))
            for key, diag in (result.get("diagnostics", {}).get("redecoded", {}) or {}).items():
                redecode["changed"] += 1
                before, after, gold = diag.get("before"), diag.get("after"), want.get(key)
                if after == gold and before != gold:
                    redecode["fixed"] += 1
                elif before == gold and after != gold:
                    redecode["broke"] += 1
                else:
                    redecode["other"] += 1
    seconds = time.perf_counter() - t0
    conf = [float(x["confidence"]) for x in samples]
    ok = [bool(x["correct"]) for x in samples]
    target = config.review.max_document_error_rate if config.review.calibrated else None
    return {
        "directory": str(directory),
        "documents": len(docs),
        "failed_documents": failed,
        "pages": pages,
        "seconds_per_page": round(seconds / pages, 3) if pages else None,
        "cer": round(total_cer(cer_counts), 4) if cer_counts else None,
        "model": model.as_dict(),
        "variants": {k: v.as_dict() for k, v in sorted(by_variant.items())},
        "rules_baseline": rules.as_dict(),
        "constrained_redecoding": redecode,
        "reliability": {
            "fields": len(samples),
            "ece": round(expected_calibration_error(conf, ok), 4) if samples else None,
            "table": reliability_table(conf, ok),
        },
        "routing": {
            "operating_point": {
                "target": target,
                "straight_through": straight,
                "straight_through_rate": round(straight / len(docs), 4) if docs else None,
                "wrong_straight_through": wrong_straight,
                "error_rate_straight_through": round(wrong_straight / straight, 4) if straight else None,
            },
            "curve": routing_curve(routed),
        },
        "calibration_samples": samples,
        "absent_samples": absent_samples,
        "errors": [{"document": d, "field": k, "expected": e, "got": g} for d, k, e, g in model.errors],
        "baseline_errors": [{"document": d, "field": k, "expected": e, "got": g} for d, k, e, g in rules.errors],
    }


class VariantStats:
    """Scores of the documents of one variant (``variant`` in the ground truth; ``scan`` when absent)."""

    def __init__(self, board: Scoreboard) -> None:
        self.board = board
        self.pages = 0
        self.total_ms = 0.0
        self.normalize_ms = 0.0
        self.off_schedule: Optional[int] = None  # fields read from a page other than the schedule (PDF bundles)

    def add(self, name: str, truth: dict, result: dict) -> None:
        self.board.add_document(name, truth["fields"], field_values(result))
        n = max(1, len(result.get("pages", [])))
        self.pages += n
        timings = result.get("timings_ms", {})
        self.total_ms += float(timings.get("total", 0.0))
        self.normalize_ms += float(timings.get("normalize", 0.0))
        if "schedule_page" in truth:
            off = sum(1 for v in result.get("fields", {}).values() if v and v.get("page") != truth["schedule_page"])
            self.off_schedule = (self.off_schedule or 0) + off

    def as_dict(self) -> dict[str, Any]:
        d = self.board.as_dict()
        d["pages"] = self.pages
        d["seconds_per_page"] = round(self.total_ms / 1000.0 / self.pages, 3) if self.pages else 0.0
        d["normalize_ms_per_page"] = round(self.normalize_ms / self.pages, 1) if self.pages else 0.0
        d["fields_off_schedule"] = self.off_schedule
        return d


def format_report(rep: dict[str, Any], worst: int) -> str:
    m, b = rep["model"], rep["rules_baseline"]
    out = [f"{rep['documents']} documents ({rep['failed_documents']} failed), {rep['pages']} pages, "
           f"{rep['seconds_per_page']} s/page, line CER {100 * (rep['cer'] or 0):.2f}%",
           "", f"{'field':<24}{'P':>7}{'R':>7}{'F1':>7}   {'rules F1':>8}"]
    for k, c in m["fields"].items():
        out.append(f"{k:<24}{c['precision']:>7.3f}{c['recall']:>7.3f}{c['f1']:>7.3f}   {b['fields'][k]['f1']:>8.3f}")
    mm, bm = m["micro"], b["micro"]
    out.append(f"{'micro':<24}{mm['precision']:>7.3f}{mm['recall']:>7.3f}{mm['f1']:>7.3f}   {bm['f1']:>8.3f}")
    out.append(f"{'document accuracy':<38}{m['document_accuracy']:>7.3f}   {b['document_accuracy']:>8.3f}")
    if len(rep["variants"]) > 1 or "scan" not in rep["variants"]:
        out += ["", f"{'variant':<14}{'docs':>6}{'micro-F1':>10}{'doc acc':>9}{'busy s/page':>12}{'normalize ms/page':>19}"
                f"{'fields off schedule':>21}"]
        for k, v in rep["variants"].items():
            out.append(f"{k:<14}{v['documents']:>6}{v['micro']['f1']:>10.3f}{v['document_accuracy']:>9.3f}"
                       f"{v['seconds_per_page']:>12.3f}{v['normalize_ms_per_page']:>19.1f}"
                       f"{v['fields_off_schedule'] if v['fields_off_schedule'] is not None else '-':>21}")
    r = rep["constrained_redecoding"]
    out.append(f"constrained re-decoding: changed {r['changed']} field values, fixed {r['fixed']}, broke {r['broke']}")
    if rep["errors"] and worst:
        out += ["", f"errors (first {min(worst, len(rep['errors']))} of {len(rep['errors'])}):"]
        for e in rep["errors"][:worst]:
            out.append(f"  {e['document']:<22}{e['field']:<24}expected {e['expected']!r:<28} got {e['got']!r}")
    if "reliability" in rep:
        out.append(format_reliability(rep))
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    if not args.dir.is_dir():
        sys.stderr.write(f"docpipe eval: {args.dir} is not a directory\n")
        return 2
    try:
        withhold = LabelWithholding(args.withhold_labels, args.withhold_seed)
    except ValueError as exc:
        sys.stderr.write(f"docpipe eval: --withhold-labels: {exc}\n")
        return 2
    try:
        rep = evaluate(args.dir, args.config, args.limit, withhold)
    except ConfigError as exc:
        sys.stderr.write(f"docpipe eval: {exc}\n")
        return 2
    if not rep["documents"]:
        sys.stderr.write(f"docpipe eval: no documents with ground truth in {args.dir}\n")
        return 2
    sys.stdout.write(format_report(rep, args.worst) + "\n")
    if args.json:
        args.json.write_text(json.dumps(rep, ensure_ascii=False, indent=2), encoding="utf-8")
    return 0
