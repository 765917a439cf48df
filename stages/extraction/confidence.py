"""Calibrated field confidence: P(value correct) from a field's evidence, by the logistic model (plus optional
isotonic map) that ``models/calibration/fit.py`` fitted on a dev split and wrote as versioned JSON to
``models/weights/calibration/`` (model registry key ``docpipe_calibration``). Pure numpy."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

import numpy as np

from stages.contracts.registry import ModelNotFoundError, resolve_weights_dir
from stages.extraction.evidence import FEATURE_VERSION, FieldEvidence, feature_names, feature_vector

CALIBRATION_FILE = "calibration.json"
FORMAT = "docpipe-calibration"


@dataclass(frozen=True)
class Calibrator:
    """Logistic regression over :func:`~stages.extraction.evidence.feature_vector`, then an optional monotone
    piecewise-linear (isotonic) map of its probability; ``null_ok[key]`` is P(field really absent | none found)."""

    version: str
    coef: tuple[float, ...]
    iso_x: tuple[float, ...] = ()
    iso_y: tuple[float, ...] = ()
    null_ok: Mapping[str, float] = field(default_factory=dict)
    default_null_ok: float = 0.5

    def logistic(self, ev: FieldEvidence) -> float:
        z = float(np.dot(np.asarray(self.coef), feature_vector(ev)))
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))

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
            "feature_version": FEATURE_VERSION,
            "features": list(feature_names()),
            "coef": [round(c, 6) for c in self.coef],
            "isotonic": {"x": list(self.iso_x), "y": list(self.iso_y)} if self.iso_x else None,
            "null_ok": dict(self.null_ok),
            "default_null_ok": self.default_null_ok,
        }
        if extra:
            out.update(extra)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "calibration") -> "Calibrator":
        if data.get("format") != FORMAT:
            raise ValueError(f"{where}: not a {FORMAT} file")
        if data.get("feature_version") != FEATURE_VERSION or tuple(data.get("features", ())) != feature_names():
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
        )


def load_calibrator(directory: Optional[Path] = None) -> Calibrator:
    """The calibrator in ``directory`` (default: the registry's ``docpipe_calibration`` weights)."""
    path = resolve_weights_dir("docpipe_calibration", directory) / CALIBRATION_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelNotFoundError(f"calibration {path} cannot be read ({exc}); fit it with models/calibration/fit.py") from exc
    return Calibrator.from_json(data, str(path))
