"""Per-field evidence for calibrated confidence: what the pipeline knows about one extracted value (how it was
found, how surely it was read, whether it validates, what competed with it) as a typed record, and its
encoding as the feature vector the calibrator (``stages/extraction/confidence.py``) scores.

The same :func:`feature_vector` is used at run time and by the fitting script (``models/calibration/fit.py``),
which reads the evidence back from ``docpipe eval``'s report with :meth:`FieldEvidence.from_dict`."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields as dc_fields
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from stages.contracts.types import TextLine
from stages.extraction.field_specs import FIELDS
from stages.extraction.strategies import RULE_STRATEGIES

FEATURE_VERSION = 1

# how a value was found: the rules' strategies, the model, or anything else
HOW: tuple[str, ...] = RULE_STRATEGIES + ("model",)
KINDS: tuple[str, ...] = ("code", "text", "name", "beneficiary", "id_number", "phone", "amount", "date")
_EPS = 1e-4


@dataclass(frozen=True)
class FieldEvidence:
    """What is known about one field's value. ``agree`` is None when only one extractor ran (neutral)."""

    key: str
    kind: str
    source: str  # "rules" | "model"
    how: str  # the rules' strategy (see :data:`HOW`) or "model"
    score: float  # the extractor's own score (rules: 0.3-0.92; model: span probability)
    rec_min: float  # lowest recognition probability among the value's characters
    rec_mean: float  # mean recognition probability of the value's characters
    n_chars: int  # characters of the value located on the page
    valid: bool  # the normalized value passed its field validator and the cross-field checks
    n_issues: int  # validator and cross-field issues
    redecoded: bool  # constrained CTC re-decoding changed the value
    rivals: int  # other candidates for this field with a different value
    margin: float  # score of the value minus that of its best rival (1.0 without rivals)
    n_sources: int  # extractors that proposed a candidate for this field
    agree: Optional[bool] = None  # both extractors gave the same value (None: only one, or not compared)
    # lowest recognition probability among the characters the value is read from (value_char_probs); None: not
    # recorded, rec_min holds
    value_rec_min: Optional[float] = None

    @property
    def reading(self) -> float:
        """The least sure character the value is read from (:func:`least_sure_read`)."""
        return least_sure_read(self.value_rec_min, self.rec_min)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "FieldEvidence":
        names = {f.name for f in dc_fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise ValueError(f"unknown evidence keys {sorted(unknown)}")
        return cls(**dict(d))


def logit(p: float) -> float:
    """log(p / (1 - p)), with p kept within [1e-4, 1 - 1e-4] (P is written to 4 decimals: 1.0 reads as 0.9999)."""
    p = min(1 - _EPS, max(_EPS, float(p)))
    return math.log(p / (1 - p))


def sigmoid(z: float) -> float:
    """1 / (1 + exp(-z)), z clipped to [-40, 40]."""
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


# Feature names in vector order. "+" marks evidence that must never lower confidence (the fit constrains
# these coefficients to be >= 0; tests check monotonicity at run time).
def feature_names() -> tuple[str, ...]:
    return (
        ("bias", "+logit_score", "+logit_rec_min", "+logit_rec_mean", "+valid", "n_issues", "redecoded",
         "log_chars", "rivals", "+margin", "multi_source", "+agree")
        + tuple(f"how={h}" for h in HOW) + ("how=other",)
        + tuple(f"kind={k}" for k in KINDS)
    )


MONOTONE_UP: tuple[str, ...] = tuple(n for n in feature_names() if n.startswith("+"))


def feature_vector(ev: FieldEvidence) -> np.ndarray:
    """The calibrator's input for one field, in :func:`feature_names` order."""
    agree = 0.0 if ev.agree is None else (1.0 if ev.agree else -1.0)
    head = [
        1.0,
        logit(ev.score),
        logit(ev.rec_min),
        logit(ev.rec_mean),
        1.0 if ev.valid else 0.0,
        float(min(ev.n_issues, 3)),
        1.0 if ev.redecoded else 0.0,
        math.log1p(max(0, ev.n_chars)),
        float(min(ev.rivals, 5)),
        float(min(1.0, max(0.0, ev.margin))),
        1.0 if ev.n_sources > 1 else 0.0,
        agree,
    ]
    how = [1.0 if ev.how == h else 0.0 for h in HOW] + [0.0 if ev.how in HOW else 1.0]
    kind = [1.0 if ev.kind == k else 0.0 for k in KINDS]
    return np.asarray(head + how + kind, np.float64)


# the characters an amount's or a date's value is read from: the rest of its text (separators, currency signs, 年月日)
# can be misread without changing the value
NUMERALS = frozenset("0123456789０１２３４５６７８９〇零一二三四五六七八九十百千万亿两壹贰叁参肆伍陆柒捌玖拾佰仟萬億")
_READ_FROM_NUMERALS = ("amount", "date")


def char_probs(chars: Sequence[tuple[int, int, int]], lines: Sequence[Sequence[TextLine]],
               only: Optional[frozenset[str]] = None) -> list[float]:
    """Recognition probabilities of the located characters ``(page, line, char)`` (with ``only``: of those among
    these characters)."""
    out = []
    for p, li, ci in chars:
        line = lines[p][li]
        if ci < len(line.char_probs) and (only is None or (ci < len(line.text) and line.text[ci] in only)):
            out.append(float(line.char_probs[ci]))
    return out


def least_sure_read(value_rec_min: Optional[float], rec_min: Optional[float]) -> Optional[float]:
    """The least sure character a value is read from: ``value_rec_min`` where recorded, else ``rec_min``."""
    return rec_min if value_rec_min is None else value_rec_min


def value_char_probs(kind: str, chars: Sequence[tuple[int, int, int]], lines: Sequence[Sequence[TextLine]]
                     ) -> list[float]:
    """Recognition probabilities of the characters a value of this field ``kind`` is read from: the numerals of an
    amount or a date, every character of other kinds."""
    return char_probs(chars, lines, NUMERALS if kind in _READ_FROM_NUMERALS else None)


def gather(
    key: str,
    source: str,
    how: str,
    score: float,
    chars: Sequence[tuple[int, int, int]],
    lines: Sequence[Sequence[TextLine]],
    valid: bool,
    n_issues: int,
    redecoded: bool,
    rivals: int,
    margin: float,
    n_sources: int,
    agree: Optional[bool] = None,
) -> FieldEvidence:
    """Evidence for one field from what the assembler decided."""
    probs = char_probs(chars, lines)
    read_from = value_char_probs(FIELDS[key].kind, chars, lines)
    return FieldEvidence(
        key=key, kind=FIELDS[key].kind, source=source, how=how or source, score=round(float(score), 4),
        rec_min=round(min(probs), 4) if probs else 0.0, rec_mean=round(float(np.mean(probs)), 4) if probs else 0.0,
        n_chars=len(probs), valid=bool(valid), n_issues=int(n_issues), redecoded=bool(redecoded),
        rivals=int(rivals), margin=round(float(margin), 4), n_sources=int(n_sources), agree=agree,
        value_rec_min=round(min(read_from), 4) if read_from else None,
    )
