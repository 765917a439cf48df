"""``docpipe train --labels DIR --out OUT`` (fast path): read a folder of corrected results, learn each field's
label wordings and their layout relations, and write the adapted folder's manifest ``OUT/adapted.json``.

The label folder (docs/labels_format.md) is read by :mod:`.labelled`, a bad or unreadable file skipped, logged (its
reason, never its name) and named in the manifest, never fatal; a folder with no usable corrected document writes
nothing and fails (:class:`NoCorrections`). The wordings are learned by :mod:`.learn` and checked on held-out
corrections by :mod:`.check`. Then the learned decision's scorer is refit with the corrections weighted in and the
synthetic rows kept (:mod:`.refit`, ``OUT/scorer/``)."""
from __future__ import annotations

import json
import logging
import shutil
import time
from pathlib import Path
from typing import Any, Optional, Sequence

from models.adapt.check import check_wordings
from models.adapt.labelled import read_label_folder
from models.adapt.learn import combined, learn, left_out_json, wordings_json
from pipeline.ops.fsutil import log_ref
from stages.extraction.adapted import FORMAT_VERSION, MANIFEST, SCORER_SUBDIR

log = logging.getLogger(__name__)


class NoCorrections(ValueError):
    """The label folder holds no corrected document that could be read: nothing to learn, nothing written."""


def skip_reasons(skipped: Sequence[dict[str, str]]) -> dict[str, int]:
    """How many label files were skipped for each reason, in the order first met."""
    reasons: dict[str, int] = {}
    for s in skipped:
        reasons[s["reason"]] = reasons.get(s["reason"], 0) + 1
    return reasons


def _skipped_summary(skipped: Sequence[dict[str, str]]) -> str:
    """``2 file(s) skipped: 1 × no image of the same name beside it; 1 × not a schema-v1 record``, or, for a folder
    with no label file at all, what one looks like."""
    if not skipped:
        return "no labelled file (X.json beside its image X.jpg, X.png or X.pdf)"
    return f"{len(skipped)} file(s) skipped: " + "; ".join(f"{n} × {r}" for r, n in skip_reasons(skipped).items())


def _write(out: Path, manifest: dict) -> None:
    (out / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def _refit(pairs: Sequence[tuple[Path, dict]], out: Path, weight: Optional[float],
           workers: Optional[int] = None) -> dict[str, Any]:
    from models.adapt.refit import CORRECTION_WEIGHT, refit
    from models.scorer.train import ROWS_FILE
    from stages.contracts.registry import resolve_weights_dir

    synthetic = resolve_weights_dir("docpipe_scorer", None) / ROWS_FILE
    return refit(pairs, out, synthetic, CORRECTION_WEIGHT if weight is None else weight, workers=workers)


def write_adapted(labels: Path, out: Path, command: Sequence[str], extra: Optional[dict[str, Any]] = None,
                  scorer: bool = True, weight: Optional[float] = None, workers: Optional[int] = None) -> dict:
    """Learn from ``labels`` and write ``out/adapted.json``; with ``scorer``, refit the scorer into
    ``out/scorer/`` (:mod:`.refit`, correction rows weighing ``weight``, the documents read by ``workers``
    processes). Returns the manifest."""
    started = time.perf_counter()
    docs, skipped = read_label_folder(labels)
    for s in skipped:  # the file's stand-in, never its name (names may carry personal data); the manifest names it
        log.warning("skipped a labelled file (%s): %s", log_ref(s["file"]), s["reason"])
    if not docs:
        raise NoCorrections(f"no corrected document to learn from in {labels}: {_skipped_summary(skipped)}")
    records = [json.loads((labels / d.name).read_text(encoding="utf-8")) for d in docs]
    each = [learn([d]) for d in docs]  # per document: the held-out check learns from all the others
    learned = combined(each)
    manifest: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "learned": ["wordings"],
        "labels": {"folder": str(labels.resolve()), "documents": len(docs), "skipped_files": skipped},
        "command": list(command),
        "fields": dict(sorted(learned.fields.items())),
        "wordings": wordings_json(learned),
        "left_out": left_out_json(learned),  # taught, but in too few documents or where it is printed too often
        # too few corrections to hold some back for a calibration of its own (docs/adaptation.md)
        "calibration": {"calibrated": False, "reason": "no held-back corrections"},
        # fields whose learned wordings read held-out corrected documents right: the shipped calibrators vouch
        "checked": check_wordings(each, records),
    }
    manifest.update(extra or {})
    manifest["seconds"] = round(time.perf_counter() - started, 3)
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / SCORER_SUBDIR, ignore_errors=True)  # never a refit of an earlier label folder
    _write(out, manifest)  # the wordings first: the refit reads the documents as the runtime will
    if scorer:
        entry = _refit([(labels / d.name, r) for d, r in zip(docs, records)], out, weight, workers)
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
    p.add_argument("--workers", type=int, default=None,
                   help="processes reading the corrected documents (default: one per usable core)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    extra = {"learned": ["wordings", "ernie"]} if args.ernie else None
    try:
        manifest = write_adapted(args.labels, args.out, json.loads(args.command), extra, not args.no_scorer,
                                 args.weight, args.workers)
    except NoCorrections as exc:
        sys.stderr.write(f"docpipe train: {exc}\n")
        return 2
    summary = {k: manifest[k] for k in ("learned", "fields", "wordings", "seconds")}
    summary["checked"] = manifest["checked"]["fields"]  # fields whose documents may go straight through
    summary["pending"] = manifest["checked"]["pending"]  # learned but not vouched for, and what would settle it
    summary["left_out"] = sum(len(v) for v in manifest["left_out"].values())  # the wordings: adapted.json
    if "scorer" in manifest:
        summary["scorer"] = {k: v for k, v in manifest["scorer"].items() if k in ("refit", "rows", "weights", "reason")}
    summary["documents"] = manifest["labels"]["documents"]
    summary["skipped_files"] = len(manifest["labels"]["skipped_files"])
    summary["skipped_reasons"] = skip_reasons(manifest["labels"]["skipped_files"])  # the files: adapted.json
    sys.stdout.write(json.dumps(summary, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
