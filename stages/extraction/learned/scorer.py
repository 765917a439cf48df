"""The runtime scorer: P(candidate is its field's value) from the feature vector, by a LightGBM binary model
trained with ``python -m models.scorer.train`` (``models/weights/scorer/scorer.txt``), and the map of that
probability onto P(the field's output value is correct) fitted on dev outputs (``calibration.json``)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

import numpy as np

from stages.contracts.registry import ModelNotFoundError, resolve_weights_dir
from stages.extraction.evidence import logit, sigmoid
from stages.extraction.field_specs import FIELDS
from stages.extraction.learned.features import FEATURE_NAMES, FEATURE_VERSION

MODEL_FILE = "scorer.txt"
CALIBRATION_FILE = "calibration.json"
CALIBRATION_FORMAT = "docpipe-score-calibration"
# an empty field is free when no candidate left for it has P above this, on a document that is no fax (there a
# misread leaves nothing). Nine dev sets, four draws: of such fields with no label printed, 138 of 138 left at a
# vacant P of 0.001-0.01 were really absent, 26 of 33 above it (docs/decisions_calibration.md, "Free empty fields
# up to a vacant P of 0.01")
VACANT_FREE = 1e-2
# a value whose least sure character the recognizer read below this has its own map of P: such values are wrong
# more often at the same P (docs/decisions_calibration.md, "A map of its own for values read with an unsure
# character"); of an amount or a date, only its numerals count (FieldEvidence.value_rec_min)
WEAK_READING = 0.9


# the kinds of a field both decisions left empty, each with its own absent rate in the calibration file
NONE_LEFT, FREE, REST = "none_left", "free", "rest"


def empty_kind(vacant: Optional[float], capture: str, misread_likely: bool = False) -> str:
    """The kind of an empty field from its vacant P (``learned.extract.vacant_p``) on a document of this capture,
    the one classification the fit and the run time share: NONE_LEFT, no candidate at all keeps the assignment
    consistent (vacant P 0), so the page holds nothing of the field's type that could be its value; FREE, one is
    left below VACANT_FREE; REST, one above it, a fax (a misread leaves nothing to choose there), no vacant P, or
    ``misread_likely``: a label of the field is printed on the document, or (a date) a printed date does not read
    (``learned.extract.misread_likely``), so an empty value there is more likely one that was misread than one
    that is not there."""
    if vacant is None or capture == "fax" or vacant >= VACANT_FREE or misread_likely:
        return REST
    return NONE_LEFT if vacant == 0.0 else FREE


class Scorer:
    """A LightGBM booster over :data:`FEATURE_NAMES`; ``Scorer(None)`` is the untrained scorer, which ranks
    candidates by the rules' own score (detectors' candidates score 0)."""

    def __init__(self, booster: Any = None):
        self.booster = booster

    @classmethod
    def from_text(cls, text: str) -> "Scorer":
        import lightgbm as lgb

        booster = lgb.Booster(model_str=text)
        if tuple(booster.feature_name()) != FEATURE_NAMES:
            raise ValueError("scorer model was trained on other features; retrain with python -m models.scorer.train")
        return cls(booster)

    @classmethod
    def load(cls, directory: Optional[Path] = None) -> "Scorer":
        path = resolve_weights_dir("docpipe_scorer", directory) / MODEL_FILE
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ModelNotFoundError(f"scorer {path} cannot be read ({exc}); train it with "
                                     "python -m models.scorer.train") from exc
        return cls.from_text(text)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """P(value) per row of ``x`` (N, len(FEATURE_NAMES))."""
        if len(x) == 0:
            return np.zeros(0)
        if self.booster is None:
            return np.clip(x[:, FEATURE_NAMES.index("rule_score")], 0.0, 1.0).astype(np.float64)
        return np.asarray(self.booster.predict(x), np.float64)


@dataclass(frozen=True)
class ScoreCalibrator:
    """Confidence of a field = a map of the scorer's P of the chosen candidate (Platt scaling with an offset per
    page capture where the file has it, else an isotonic map); ``null_ok[key]`` =
    P(the field is really absent | the decision left it empty), or of a free empty field ``null_ok_free[key]``
    (:meth:`absent_given`). Duck-types
    :class:`~stages.extraction.confidence.Calibrator` for the field assembler (``confidence(ev)`` reads
    ``ev.score``, the scorer's P)."""

    iso_x: tuple[float, ...] = ()
    iso_y: tuple[float, ...] = ()
    null_ok: Mapping[str, float] = field(default_factory=dict)
    default_null_ok: float = 0.5
    version: str = "uncalibrated"
    null_ok_against_rules: Mapping[str, float] = field(default_factory=dict)  # P(absent | left empty, rules found one)
    # P(really absent | left empty, the rules found nothing either, no candidate left free for it: its vacant P, the
    # best P of a candidate the rest of the assignment leaves room for, below VACANT_FREE; not a fax); null_ok is
    # then fitted on the other empty fields (a free candidate, or a fax) and holds for them
    null_ok_free: Mapping[str, float] = field(default_factory=dict)
    # the map of P for values read with a character below WEAK_READING (``rec_min``), fitted on those values alone
    weak_x: tuple[float, ...] = ()
    weak_y: tuple[float, ...] = ()
    # P(really absent | left empty, the rules found nothing either, nothing at all left for it: NONE_LEFT); where
    # the file has these, null_ok_free is fitted on the FREE fields alone (a candidate left, at P below VACANT_FREE)
    null_ok_none_left: Mapping[str, float] = field(default_factory=dict)
    # Platt scaling of P for the values read without an unsure character: P(correct) = sigmoid(platt[0] +
    # platt[1] * logit(P) + platt_capture[capture of the value's page]); where the file has it, it replaces the
    # isotonic map (docs/decisions_calibration.md, "Looser maps of the learned P: not adopted")
    platt: tuple[float, ...] = ()
    platt_capture: Mapping[str, float] = field(default_factory=dict)
    # the map of P for values the rules' own decision shares, fitted on those values alone: P(correct | the two
    # decisions output one value, the scorer's P); where the file has it, it makes a shared value's confidence
    # (stages/extraction/learned/confidence.py; docs/decisions_calibration.md, "A shared value's confidence: its own
    # map of P")
    shared_x: tuple[float, ...] = ()
    shared_y: tuple[float, ...] = ()
    # per page capture (scan, photo, fax), the maps of P for values the rules do not share (``own``) and for shared
    # values (``shared``), each bin's rate shrunk toward the pooled map; where the file has a capture's map, it
    # replaces the pooled one on that capture's pages (docs/decisions_calibration.md, "Maps of P per page capture,
    # shrunk toward the pooled map")
    own_by_capture: Mapping[str, tuple[tuple[float, ...], tuple[float, ...]]] = field(default_factory=dict)
    shared_by_capture: Mapping[str, tuple[tuple[float, ...], tuple[float, ...]]] = field(default_factory=dict)
    # per field kind (FieldSpec.kind: date, amount, id_number...) and page capture, the map of P for shared values
    # of that kind, each bin's rate shrunk toward the capture's map; where the file has one, it replaces the
    # capture's map for the fields of that kind (docs/decisions_calibration_kinds.md, "Maps of shared values per field
    # kind")
    shared_by_kind: Mapping[str, Mapping[str, tuple[tuple[float, ...], tuple[float, ...]]]] = field(default_factory=dict)
    # per page capture and field kind, an offset added to the logit of the confidence of values the rules do not
    # share (after the map above): at the same P the kinds are not wrong alike (models/scorer/kind_offsets.py;
    # docs/decisions_calibration_kinds.md, "Offsets per page capture and field kind for values the rules do not share")
    own_kind_offset: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def confidence(self, ev: Any, capture: str = "scan") -> float:
        """P(the value is correct) from its evidence's P (``ev.score``) and the least sure character it is read from
        (``ev.reading``: FieldEvidence.value_rec_min, else its ``rec_min``),
        on a page of this ``capture``."""
        p = float(ev.score)
        if self.weak_x and float(getattr(ev, "reading", getattr(ev, "rec_min", 1.0))) < WEAK_READING:
            p = float(np.interp(p, self.weak_x, self.weak_y))
        elif self.platt:
            p = platt_map(p, self.platt, self.platt_capture.get(capture, 0.0))
        elif capture in self.own_by_capture:
            p = float(np.interp(p, *self.own_by_capture[capture]))
        elif self.iso_x:
            p = float(np.interp(p, self.iso_x, self.iso_y))
        spec = FIELDS.get(getattr(ev, "key", None))
        offset = (self.own_kind_offset.get(capture) or {}).get(spec.kind) if spec is not None else None
        if offset:
            p = sigmoid(logit(p) + offset)  # logit keeps p inside (0, 1)
        return min(1.0, max(0.0, p))

    def shared(self, ev: Any, capture: str = "scan") -> Optional[float]:
        """P(the value is correct) of a value the rules' decision shares, from its P (``ev.score``) on a page of this
        ``capture``: the capture's map where the file has one, else the pooled one; None when the file has no map
        for shared values."""
        spec = FIELDS.get(getattr(ev, "key", None))
        xy = ((self.shared_by_kind.get(spec.kind) or {}).get(capture) if spec is not None else None) \
            or self.shared_by_capture.get(capture) or ((self.shared_x, self.shared_y) if self.shared_x else None)
        if xy is None:
            return None
        return min(1.0, max(0.0, float(np.interp(float(ev.score), *xy))))

    def absent_ok(self, key: str) -> float:
        return float(self.null_ok.get(key, self.default_null_ok))

    def absent_given(self, key: str, vacant: float, capture: str, misread_likely: bool = False) -> float:
        """P(really absent | the decision left the field empty with this vacant P, the rules found nothing either,
        on a document of this capture, more likely misread or not), by its :func:`empty_kind`:
        the rate fitted on that kind, where the file has one (a file without NONE_LEFT rates fitted its free rate
        on those fields too), else the one of the rest."""
        kind = empty_kind(vacant, capture, misread_likely)
        if kind == NONE_LEFT and self.null_ok_none_left:
            return float(self.null_ok_none_left.get(key, self.default_null_ok))
        if kind != REST and self.null_ok_free:
            return float(self.null_ok_free.get(key, self.default_null_ok))
        return self.absent_ok(key)

    def rarely_absent(self, limit: float) -> frozenset[str]:
        """The fields whose empty outputs were really absent at a fitted rate below ``limit`` (``null_ok``)."""
        return rarely_absent(self.null_ok, limit)

    def absent_ok_against_rules(self, key: str) -> float:
        """P(really absent | the decision left the field empty though the rules' own decision found a value)."""
        return float(self.null_ok_against_rules.get(key, self.absent_ok(key)))

    def to_json(self, extra: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
        out = {"format": CALIBRATION_FORMAT, "version": self.version, "feature_version": FEATURE_VERSION,
               "input": "scorer probability of the chosen candidate",
               "isotonic": {"x": list(self.iso_x), "y": list(self.iso_y)},
               "null_ok": dict(self.null_ok), "default_null_ok": self.default_null_ok,
               "null_ok_against_rules": dict(self.null_ok_against_rules),
               "null_ok_free": dict(self.null_ok_free), "vacant_free": VACANT_FREE,
               "null_ok_none_left": dict(self.null_ok_none_left),
               "weak_reading": {"below": WEAK_READING, "x": list(self.weak_x), "y": list(self.weak_y)},
               "platt": {"coef": list(self.platt), "capture": dict(self.platt_capture)},
               "shared": {"x": list(self.shared_x), "y": list(self.shared_y)},
               "by_capture": {c: {kind: {"x": list(m[c][0]), "y": list(m[c][1])}
                                  for kind, m in (("own", self.own_by_capture), ("shared", self.shared_by_capture))
                                  if c in m}
                              for c in sorted(set(self.own_by_capture) | set(self.shared_by_capture))}}
        if self.own_kind_offset:
            out["own_kind_offset"] = {c: dict(sorted(m.items())) for c, m in sorted(self.own_kind_offset.items())}
        if self.shared_by_kind:
            out["by_kind"] = {k: {c: {"shared": {"x": list(xy[0]), "y": list(xy[1])}} for c, xy in sorted(m.items())}
                              for k, m in sorted(self.shared_by_kind.items())}
        out.update(extra or {})
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "score calibration") -> "ScoreCalibrator":
        if data.get("format") != CALIBRATION_FORMAT:
            raise ValueError(f"{where}: not a {CALIBRATION_FORMAT} file")
        if data.get("null_ok_free") and data.get("vacant_free") != VACANT_FREE:
            raise ValueError(f"{where}: free absent rates fitted at vacant P {data.get('vacant_free')}, not "
                             f"{VACANT_FREE}; refit with python -m models.scorer.calibrate")
        weak = data.get("weak_reading") or {}
        if weak.get("x") and weak.get("below") != WEAK_READING:
            raise ValueError(f"{where}: weak-reading map fitted below {weak.get('below')}, not {WEAK_READING}; refit "
                             "with python -m models.scorer.calibrate")
        (iso_x, iso_y), (weak_x, weak_y), (shared_x, shared_y) = (_xy(data.get(k)) for k in ("isotonic", "weak_reading",
                                                                                          "shared"))
        return cls(iso_x, iso_y, _rates(data.get("null_ok")), float(data.get("default_null_ok", 0.5)),
                   str(data.get("version", "")), _rates(data.get("null_ok_against_rules")),
                   null_ok_free=_rates(data.get("null_ok_free")), weak_x=weak_x, weak_y=weak_y,
                   null_ok_none_left=_rates(data.get("null_ok_none_left")),
                   platt=tuple(float(v) for v in (data.get("platt") or {}).get("coef", ())),
                   platt_capture=_rates((data.get("platt") or {}).get("capture")), shared_x=shared_x, shared_y=shared_y,
                   own_by_capture=_by_capture(data.get("by_capture"), "own"),
                   shared_by_capture=_by_capture(data.get("by_capture"), "shared"),
                   shared_by_kind={str(k): m for k, v in (data.get("by_kind") or {}).items()
                                   if (m := _by_capture(v, "shared"))},
                   own_kind_offset={str(c): _rates(m) for c, m in (data.get("own_kind_offset") or {}).items()})


def rarely_absent(null_ok: Mapping[str, float], limit: float) -> frozenset[str]:
    """The fields of ``null_ok`` (absent rates of the rest of the empty fields) whose rate is below ``limit``: with
    RARELY_ABSENT, the fields the assignment carries."""
    return frozenset(k for k, rate in null_ok.items() if rate < limit)


def platt_map(p: float, coef: tuple[float, ...], offset: float = 0.0) -> float:
    """sigmoid(coef[0] + coef[1] * logit(p) + offset)."""
    return sigmoid(coef[0] + coef[1] * logit(p) + offset)


def _rates(data: Optional[Mapping[str, Any]]) -> dict[str, float]:
    """Per-field absent rates as written in the file (none where absent)."""
    return {str(k): float(v) for k, v in (data or {}).items()}


def _xy(data: Optional[Mapping[str, Any]]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """A map's breakpoints as written in the file (``{"x": [...], "y": [...]}``; none where absent)."""
    data = data or {}
    return tuple(float(v) for v in data.get("x", ())), tuple(float(v) for v in data.get("y", ()))


def _by_capture(data: Optional[Mapping[str, Any]], kind: str) -> dict[str, tuple[tuple[float, ...], tuple[float, ...]]]:
    """The ``kind`` maps (own or shared) per capture as written in the file's ``by_capture`` (none where absent)."""
    maps = {str(c): _xy((m or {}).get(kind)) for c, m in (data or {}).items()}
    return {c: xy for c, xy in maps.items() if xy[0]}


def load_score_calibrator(directory: Optional[Path] = None) -> Optional[ScoreCalibrator]:
    """The calibration beside the scorer, or None when there is none (confidence is then the raw P)."""
    path = resolve_weights_dir("docpipe_scorer", directory) / CALIBRATION_FILE
    if not path.is_file():
        return None
    return ScoreCalibrator.from_json(json.loads(path.read_text(encoding="utf-8")), str(path))
