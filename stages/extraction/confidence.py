"""Calibrated field confidence, one calibrator per decision source: P(value correct) from a field's evidence, by
the logistic model (plus optional isotonic map) that ``models/calibration/fit.py`` fitted on the dev outputs of
that source and wrote as ``<source>.json`` to a calibration folder (shipped: ``models/weights/calibration/``,
model registry key ``docpipe_calibration``). A source without a file there is uncalibrated (docs/routing.md).
Pure numpy."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
import logging
from typing import Any, Literal, Mapping, Optional

import numpy as np

from stages.contracts.registry import ModelNotFoundError, resolve_weights_dir
from stages.extraction.adapted import is_adapted
from stages.extraction.evidence import FEATURE_VERSION, FieldEvidence, feature_names, feature_vector, logit, sigmoid

log = logging.getLogger(__name__)

LEGACY_FILE = "calibration.json"  # a folder written before calibrators were per source: the rules' calibrator
FORMAT = "docpipe-calibration"
Input = Literal["evidence", "score"]
INPUTS: tuple[str, ...] = ("evidence", "score")


def calibration_file(source: str) -> str:
    """The file name of ``source``'s calibrator in a calibration folder."""
    return f"{source}.json"


@dataclass(frozen=True)
class Calibrator:
    """``input: evidence``: logistic regression over :func:`~stages.extraction.evidence.feature_vector`;
    ``input: score``: a map of the source's own probability alone (``FieldEvidence.score``), Platt scaling
    ``sigmoid(coef[0] + coef[1] * logit(score))`` or, with no ``coef``, the score itself. Either is followed by an
    optional monotone piecewise-linear (isotonic) map; ``null_ok[key]`` is P(field really absent | none found)."""

    version: str
    coef: tuple[float, ...]
    iso_x: tuple[float, ...] = ()
    iso_y: tuple[float, ...] = ()
    null_ok: Mapping[str, float] = field(default_factory=dict)
    default_null_ok: float = 0.5
    source: str = "rules"  # the decision source whose outputs it was fitted on
    input: Input = "evidence"

    def logistic(self, ev: FieldEvidence) -> float:
        if self.input == "score":
            if not self.coef:
                return min(1.0, max(0.0, float(ev.score)))
            z = self.coef[0] + self.coef[1] * logit(ev.score)
        else:
            z = float(np.dot(np.asarray(self.coef), feature_vector(ev)))
        return sigmoid(z)

    def confidence(self, ev: FieldEvidence) -> float:
        p = self.logistic(ev)
        if self.iso_x:
            p = float(np.interp(p, self.iso_x, self.iso_y))
        return min(1.0, max(0.0, p))

    def absent_ok(self, key: str) -> float:
        """P(the field is really absent from the document | no value was found for it)."""
        return float(self.null_ok.get(key, self.default_null_ok))

    # -- files --------------------------------------------------------------------------------------------------
    def to_json(self, extra: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": FORMAT,
            "version": self.version,
            "source": self.source,
            "input": self.input,
            "feature_version": FEATURE_VERSION if self.input == "evidence" else None,
            "features": list(feature_names()) if self.input == "evidence" else ["bias", "logit_score"][:len(self.coef)],
            "coef": [round(c, 6) for c in self.coef],
            "isotonic": {"x": list(self.iso_x), "y": list(self.iso_y)} if self.iso_x else None,
            "null_ok": dict(self.null_ok),
            "default_null_ok": self.default_null_ok,
        }
        if extra:
            out.update(extra)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "calibration", source: str = "rules") -> "Calibrator":
        """``source``: the decision source when the file does not name one (files written before it did)."""
        if data.get("format") != FORMAT:
            raise ValueError(f"{where}: not a {FORMAT} file")
        kind = data.get("input", "evidence")
        if kind not in INPUTS:
            raise ValueError(f"{where}: input must be one of {INPUTS}, not {kind!r}")
        if kind == "score":
            if len(data.get("coef") or ()) not in (0, 2):
                raise ValueError(f"{where}: a score calibrator has no coef or two (bias, logit_score)")
        elif data.get("feature_version") != FEATURE_VERSION or tuple(data.get("features", ())) != feature_names():
            raise ValueError(
                f"{where}: fitted on feature version {data.get('feature_version')}, the runtime computes version "
                f"{FEATURE_VERSION}; refit with models/calibration/fit.py"
            )
        iso = data.get("isotonic") or {}
        return cls(
            version=str(data["version"]),
            coef=tuple(float(c) for c in data["coef"]),
            iso_x=tuple(float(x) for x in iso.get("x", ())),
            iso_y=tuple(float(y) for y in iso.get("y", ())),
            null_ok={str(k): float(v) for k, v in (data.get("null_ok") or {}).items()},
            default_null_ok=float(data.get("default_null_ok", 0.5)),
            source=str(data.get("source") or source),
            input=kind,
        )


def _read(path: Path, source: str) -> Calibrator:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelNotFoundError(f"calibration {path} cannot be read ({exc}); fit it with models/calibration/fit.py") from exc
    cal = Calibrator.from_json(data, str(path), source)
    if cal.source != source:
        raise ValueError(f"{path}: fitted on the outputs of {cal.source!r}, but the file is named for {source!r}")
    return cal


def load_calibrators(directory: Path) -> dict[str, Calibrator]:
    """Every calibrator in ``directory``, by decision source: ``<source>.json`` files in the ``docpipe-calibration``
    format (a legacy ``calibration.json`` counts as ``rules`` when there is no ``rules.json``). A source with no
    file has no calibrator; a missing folder has none at all."""
    directory = Path(directory)
    out: dict[str, Calibrator] = {}
    if not directory.is_dir():
        return out
    for path in sorted(directory.glob("*.json")):
        if path.name == LEGACY_FILE:
            continue
        out[path.stem] = _read(path, path.stem)
    legacy = directory / LEGACY_FILE
    if "rules" not in out and legacy.is_file():
        out["rules"] = _read(legacy, "rules")
    return out


def calibration_folder(calibration_dir: Optional[Path], model_dir: Optional[Path]) -> Path:
    """Where the calibrators of a run come from: ``review.calibration_dir`` when set; else, when
    ``extraction.model_dir`` replaces the shipped model (an ERNIE-Layout export), that folder's ``calibration/``
    (the shipped calibrators describe the shipped models only); else the shipped ``docpipe_calibration`` weights.
    An adapted folder (``docpipe train --labels``) only adds label wordings to the shipped models: it uses its own
    ``calibration/`` when it has one, else the shipped calibrators (the fields its wordings decide carry
    ``uncalibrated:adapted``, stages/extraction/adapted.py)."""
    if calibration_dir is not None:
        return resolve_weights_dir("docpipe_calibration", calibration_dir)
    if model_dir is not None and not (is_adapted(model_dir) and not (Path(model_dir) / "calibration").is_dir()):
        return Path(model_dir) / "calibration"
    return resolve_weights_dir("docpipe_calibration")


def load_calibrator(directory: Optional[Path] = None, source: str = "rules") -> Calibrator:
    """``source``'s calibrator in ``directory`` (default: the registry's ``docpipe_calibration`` weights)."""
    folder = resolve_weights_dir("docpipe_calibration", directory)
    found = load_calibrators(folder)
    if source not in found:
        raise ModelNotFoundError(f"calibration {folder / calibration_file(source)} does not exist; fit it with "
                                 "models/calibration/fit.py")
    return found[source]
