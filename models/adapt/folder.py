"""``docpipe train --labels DIR --out OUT`` (fast path): read a folder of corrected results, learn each field's
label wordings and their layout relations, and write the adapted folder's manifest ``OUT/adapted.json``.

The label folder is docs/labels_format.md. A field's value is looked for in the boxes the correction's span names
(``fields.<key>.lines``: indices into ``pages[page].lines``, when the review page sent them), else anywhere in the
document (:mod:`.locate`); the text the pipeline had read (``fields.<key>.text``) picks among several places.
A bad or unreadable file is skipped and reported in the manifest, never fatal. Then the learned decision's scorer is
refit with the corrections weighted in and the synthetic rows kept (:mod:`.refit`, ``OUT/scorer/``)."""
from __future__ import annotations

import json
import logging
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Optional, Sequence

from models.adapt.check import check_wordings
from models.adapt.locate import Box, Located, box_of, occurrences, wrapped_occurrence
from models.adapt.wordings import Finding, learn_from
from stages.extraction.adapted import FORMAT_VERSION, MANIFEST, SCORER_SUBDIR
from stages.extraction.field_specs import FIELDS
from stages.extraction.rules.lexicon import FULL_LEXICON, Lexicon
from stages.postprocess.values import compact

log = logging.getLogger(__name__)

_SPAN_KEYS = ("lines", "line_indices", "source_lines")  # the correction's span, as the review page sends it
_MAX_PLACES = 5


@dataclass(frozen=True)
class Correction:
    key: str
    value: str
    text: Optional[str]  # what the pipeline had read
    span: Optional[tuple[int, ...]]  # box indices (into the document's boxes) the reviewer pointed at


@dataclass(frozen=True)
class LabelledDocument:
    name: str
    boxes: tuple[Box, ...]
    corrections: tuple[Correction, ...]


@dataclass
class Learned:
    """Counts of (field, wording, relation) and what happened to each corrected field."""

    wordings: Counter = field(default_factory=Counter)
    fields: Counter = field(default_factory=Counter)  # known, learned, no_label, not_found
    labelled: Counter = field(default_factory=Counter)  # per field: documents where a known or learned label was


def _span(f: dict, page: int, offsets: Sequence[int], n_boxes: int) -> Optional[tuple[int, ...]]:
    for k in _SPAN_KEYS:
        raw = f.get(k)
        if isinstance(raw, list) and raw and all(isinstance(i, int) for i in raw) and 0 <= page < len(offsets):
            span = tuple(offsets[page] + i for i in raw if 0 <= offsets[page] + i < n_boxes)
            return span or None
    return None


def parse_record(name: str, record: Any) -> LabelledDocument:
    """A schema-v1 record with corrected values as a :class:`LabelledDocument`; ``ValueError`` if it is none."""
    if not isinstance(record, dict) or str(record.get("schema_version")) != "1":
        raise ValueError("not a schema-v1 record")
    pages, fields = record.get("pages"), record.get("fields")
    if not isinstance(pages, list) or not isinstance(fields, dict):
        raise ValueError("no pages or fields")
    boxes: list[Box] = []
    offsets: list[int] = []
    for pi, page in enumerate(pages):
        offsets.append(len(boxes))
        for li, line in enumerate((page or {}).get("lines") or ()):
            b = box_of(pi, li, line.get("text", ""), line.get("polygon")) if isinstance(line, dict) else None
            boxes.append(b if b is not None else Box(pi, li, "", 0.0, 0.0, 0.0, 0.0))
    corrections = []
    for key, f in fields.items():
        if key not in FIELDS or not isinstance(f, dict) or f.get("value") in (None, ""):
            continue
        page = f.get("page") if isinstance(f.get("page"), int) else 0
        text = f.get("text") if isinstance(f.get("text"), str) else None
        corrections.append(Correction(key, str(f["value"]), text, _span(f, page, offsets, len(boxes))))
    return LabelledDocument(name, tuple(boxes), tuple(corrections))


def read_label_folder(folder: Path) -> tuple[list[LabelledDocument], list[dict[str, str]]]:
    """The labelled documents of ``folder`` (JSON + an image of the same stem) and the files skipped, with why."""
    docs: list[LabelledDocument] = []
    skipped: list[dict[str, str]] = []
    stems_with_image = {p.stem for p in folder.iterdir() if p.is_file() and p.suffix.lower() != ".json"}
    for path in sorted(folder.glob("*.json")):
        if path.stem not in stems_with_image:
            skipped.append({"file": path.name, "reason": "no image of the same name beside it"})
            continue
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            docs.append(parse_record(path.name, record))
        except (OSError, ValueError) as exc:
            skipped.append({"file": path.name, "reason": str(exc)[:200]})
    return docs, skipped


def _places(doc: LabelledDocument, c: Correction, today: date) -> list[Located]:
    found = occurrences(c.key, c.value, doc.boxes, today, only=c.span)
    if not found and c.span is not None:
        found = occurrences(c.key, c.value, doc.boxes, today)
    if not found and FIELDS[c.key].kind == "text":
        wrapped = wrapped_occurrence(c.value, doc.boxes)
        found = [wrapped] if wrapped is not None else []
    if c.text and len(found) > 1:  # the place the pipeline had read first
        hint = compact(c.text)
        found.sort(key=lambda at: hint not in compact(doc.boxes[at.line].text))
    return found[:_MAX_PLACES]


def learn(docs: Sequence[LabelledDocument], lexicon: Lexicon = FULL_LEXICON, today: Optional[date] = None) -> Learned:
    """Each corrected value's wording: where the lexicon already names the field at one of the value's places,
    nothing; else the first unknown label-like text around it (:func:`models.adapt.wordings.learn_from`)."""
    today = today or date.today()
    out = Learned()
    for doc in docs:
        values = {compact(c.value) for c in doc.corrections}
        for c in doc.corrections:
            places = _places(doc, c, today)
            if not places:
                out.fields["not_found"] += 1
                continue
            results: list[Finding] = [f for at in places if (f := learn_from(c.key, at, doc.boxes, lexicon, values,
                                                                              compact(c.value)))]
            out.labelled[c.key] += bool(results)
            if any(f.known for f in results):
                out.fields["known"] += 1
            elif results:
                out.fields["learned"] += 1
                out.wordings[(c.key, results[0].text, results[0].relation)] += 1
            else:
                out.fields["no_label"] += 1
    return out


MIN_SHARE = 0.3  # a wording must introduce the field in this share of the documents where a label did


def wordings_json(learned: Learned) -> dict[str, list[dict[str, Any]]]:
    """Per field, its wordings, most frequent first; a wording seen in fewer than :data:`MIN_SHARE` of the
    documents where the field's value had a label (known or learned) is left out as noise (a stray aside in one
    document whose OCR lost the value's labelled form)."""
    labelled = learned.labelled
    out: dict[str, list[dict[str, Any]]] = {}
    for (key, text, relation), count in sorted(learned.wordings.items(), key=lambda kv: (kv[0][0], -kv[1], kv[0])):
        if count >= MIN_SHARE * labelled[key]:
            out.setdefault(key, []).append({"wording": text, "relation": relation, "count": count})
    return out


def _write(out: Path, manifest: dict) -> None:
    (out / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def _record(labels: Path, doc: LabelledDocument) -> dict:
    return json.loads((labels / doc.name).read_text(encoding="utf-8"))


def _refit(labels: Path, docs: Sequence[LabelledDocument], out: Path, weight: Optional[float]) -> dict[str, Any]:
    from models.adapt.refit import CORRECTION_WEIGHT, refit
    from models.scorer.train import ROWS_FILE
    from stages.contracts.registry import resolve_weights_dir

    pairs = [(labels / d.name, _record(labels, d)) for d in docs]
    synthetic = resolve_weights_dir("docpipe_scorer", None) / ROWS_FILE
    return refit(pairs, out, synthetic, CORRECTION_WEIGHT if weight is None else weight)


def write_adapted(labels: Path, out: Path, command: Sequence[str], extra: Optional[dict[str, Any]] = None,
                  scorer: bool = True, weight: Optional[float] = None) -> dict:
    """Learn from ``labels`` and write ``out/adapted.json``; with ``scorer``, refit the scorer into
    ``out/scorer/`` (:mod:`.refit`, correction rows weighing ``weight``). Returns the manifest."""
    started = time.perf_counter()
    docs, skipped = read_label_folder(labels)
    learned = learn(docs)
    manifest: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "learned": ["wordings"],
        "labels": {"folder": str(labels.resolve()), "documents": len(docs), "skipped_files": skipped},
        "command": list(command),
        "fields": dict(sorted(learned.fields.items())),
        "wordings": wordings_json(learned),
        # too few corrections to hold some back for a calibration of its own (docs/adaptation.md)
        "calibration": {"calibrated": False, "reason": "no held-back corrections"},
        # fields whose learned wordings read held-out corrected documents right: the shipped calibrators vouch
        "checked": check_wordings(docs, [_record(labels, d) for d in docs]),
    }
    manifest.update(extra or {})
    manifest["seconds"] = round(time.perf_counter() - started, 3)
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / SCORER_SUBDIR, ignore_errors=True)  # never a refit of an earlier label folder
    _write(out, manifest)  # the wordings first: the refit reads the documents as the runtime will
    if scorer and docs:
        entry = _refit(labels, docs, out, weight)
        manifest["scorer"] = entry
        if entry.get("refit"):
            manifest["learned"] = list(manifest["learned"]) + ["scorer"]
        manifest["seconds"] = round(time.perf_counter() - started, 3)
        _write(out, manifest)
    log.info("adapted folder: %d documents, %d skipped, fields %s", len(docs), len(skipped), dict(learned.fields))
    return manifest


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m models.adapt.folder --labels DIR --out OUT [--command JSON] [--ernie]``: what ``docpipe train``
    runs as a child process (surfaces never import training code); prints the JSON summary on stdout."""
    import argparse
    import sys

    p = argparse.ArgumentParser(prog="python -m models.adapt.folder")
    p.add_argument("--labels", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--command", default="[]", help="the user's command, as a JSON list, recorded in the manifest")
    p.add_argument("--ernie", action="store_true", help="OUT/ernie/ holds an ERNIE-Layout fine-tune")
    p.add_argument("--no-scorer", action="store_true", help="learn the wordings only (no scorer refit)")
    p.add_argument("--weight", type=float, default=None, help="weight of a correction row (default: refit.py)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    extra = {"learned": ["wordings", "ernie"]} if args.ernie else None
    manifest = write_adapted(args.labels, args.out, json.loads(args.command), extra, not args.no_scorer, args.weight)
    summary = {k: manifest[k] for k in ("learned", "fields", "wordings", "seconds")}
    summary["checked"] = manifest["checked"]["fields"]  # fields whose documents may go straight through
    if "scorer" in manifest:
        summary["scorer"] = {k: v for k, v in manifest["scorer"].items() if k in ("refit", "rows", "weights", "reason")}
    summary["documents"] = manifest["labels"]["documents"]
    summary["skipped_files"] = len(manifest["labels"]["skipped_files"])
    sys.stdout.write(json.dumps(summary, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
