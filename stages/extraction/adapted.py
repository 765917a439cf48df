"""Adapted folders (``docpipe train --labels`` output): what the runtime reads from one (docs/adaptation.md).

``extraction.model_dir`` names either an adapted folder (it holds ``adapted.json``) or a plain ERNIE-Layout
export. An adapted folder carries label wordings learned from reviewers' corrections, per field with
the layout relation that joined wording and value; the rules load them as extra lexicon labels. It may carry an
ERNIE-Layout fine-tune in ``ernie/`` and a refit of the learned decision's scorer in ``scorer/`` (synthetic rows
and the corrections weighted in). Unless it records a calibration of its own, a field decided through a learned
wording, or one the refit scorer decides otherwise than the shipped scorer, sends its document to a person
(:data:`REASON_UNCALIBRATED`); a field in ``checked.fields`` is the exception to the first: its learned wordings
read held-out corrected documents right (models/adapt/check.py), so the shipped calibrators vouch for it."""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

log = logging.getLogger(__name__)

MANIFEST = "adapted.json"
FORMAT_VERSION = 1
ERNIE_SUBDIR = "ernie"
SCORER_SUBDIR = "scorer"  # a refit scorer: scorer.txt (stages/extraction/learned/scorer.py)
RELATIONS = ("same_line_prefix", "right_of", "below", "table_header", "row_label")
# review reason ``uncalibrated:<source>``: a field was decided by evidence the shipped calibrator was not fitted on
REASON_UNCALIBRATED = "uncalibrated:adapted"


class AdaptedFolderError(ValueError):
    """An ``adapted.json`` that cannot be read (wrong version, malformed)."""


@dataclass(frozen=True)
class LearnedWording:
    """A label wording that introduced the corrected value of ``field`` ``count`` times, by ``relation``."""

    field: str
    text: str
    relation: str
    count: int

    def as_dict(self) -> dict[str, Any]:
        return {"wording": self.text, "relation": self.relation, "count": self.count}


@dataclass(frozen=True)
class AdaptedFolder:
    path: Path
    wordings: tuple[LearnedWording, ...]
    calibrated: bool  # the folder carries a calibration fitted on held-back corrections
    ernie_dir: Optional[Path]  # an ERNIE-Layout fine-tune inside the folder, if any
    scorer_dir: Optional[Path] = None  # a refit of the learned decision's scorer inside the folder, if any
    checked: frozenset[str] = frozenset()  # fields whose learned wordings passed the held-out check

    def vouched(self, key: str) -> bool:
        """Whether a field decided through a learned wording may take the shipped calibrators' confidence."""
        return self.calibrated or key in self.checked

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        """``(wording, field)`` for the lexicon (:func:`stages.extraction.rules.lexicon.extend_lexicon`)."""
        return tuple((w.text, w.field) for w in self.wordings)


def is_adapted(path: Optional[Path]) -> bool:
    return path is not None and (Path(path) / MANIFEST).is_file()


def load_adapted(path: Path) -> AdaptedFolder:
    """Read an adapted folder's manifest; :class:`AdaptedFolderError` if it is not one this runtime reads."""
    path = Path(path)
    try:
        data = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AdaptedFolderError(f"{path / MANIFEST}: cannot read ({exc})") from exc
    if not isinstance(data, dict) or data.get("format_version") != FORMAT_VERSION:
        raise AdaptedFolderError(f"{path / MANIFEST}: format_version must be {FORMAT_VERSION}")
    wordings: list[LearnedWording] = []
    fields = data.get("wordings") or {}
    if not isinstance(fields, dict):
        raise AdaptedFolderError(f"{path / MANIFEST}: 'wordings' must map fields to lists")
    for key, entries in sorted(fields.items()):
        for e in entries or ():
            try:
                w = LearnedWording(str(key), str(e["wording"]), str(e["relation"]), int(e["count"]))
            except (KeyError, TypeError, ValueError) as exc:
                raise AdaptedFolderError(f"{path / MANIFEST}: bad wording entry for {key} ({exc})") from exc
            if w.relation not in RELATIONS:
                raise AdaptedFolderError(f"{path / MANIFEST}: unknown relation {w.relation!r}")
            wordings.append(w)
    calibration = data.get("calibration") or {}
    checked_entry = data.get("checked") or {}
    checked = (checked_entry.get("fields") or []) if isinstance(checked_entry, dict) else None
    if not isinstance(checked, list) or not all(isinstance(k, str) for k in checked):
        raise AdaptedFolderError(f"{path / MANIFEST}: 'checked.fields' must list field keys")
    ernie = path / ERNIE_SUBDIR
    scorer = path / SCORER_SUBDIR
    from stages.extraction.learned.scorer import MODEL_FILE

    folder = AdaptedFolder(path, tuple(wordings), bool(calibration.get("calibrated", False)),
                           ernie if ernie.is_dir() else None, scorer if (scorer / MODEL_FILE).is_file() else None,
                           frozenset(checked))
    log.info("adapted folder: %d learned wordings, calibrated=%s, checked fields=%d, ernie=%s, scorer=%s",
             len(folder.wordings), folder.calibrated, len(folder.checked), folder.ernie_dir is not None,
             folder.scorer_dir is not None)
    return folder
