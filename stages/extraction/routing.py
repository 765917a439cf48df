"""Document routing: from calibrated field confidences to ``needs_review`` and its reasons.

A document's risk is P(any field wrong) = 1 - prod(P(correct)) over the fields found and, for fields not found,
P(really absent). It goes straight through when nothing forces review (an invalid value, a missing required
field, a field below the confidence floor) and its risk is at most ``review.max_document_error_rate``.
Otherwise the reasons name the fields a person must check: the least certain ones, until the rest of the
document is within the target."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol, Sequence

from stages.extraction.strategies import UNKNOWN_LABEL

# reason prefixes
MISSING = "missing"
INVALID = "invalid"
LOW_CONFIDENCE = "low_confidence"
EXTRACTORS_DISAGREE = "extractors_disagree"  # both extractors ran and gave different values (set by the assembler)
WEAK_EVIDENCE = "weak_evidence"  # only a weak strategy found the value (a bare pattern, a faint unknown label)
CLOSE_RIVAL = "close_rival"  # another value for the field scored almost as high
UNCALIBRATED = "uncalibrated"  # a source decided a field (or left one empty) with no calibrator for its outputs
MAY_CONTINUE = "may_continue"  # the value runs to its line's end and text that may continue it starts below (wrap.py)
MAY_BE_CUT = "may_be_cut"  # the value ends its line, whose box holds room for unread characters (line_end.py)
READERS_DISAGREE = "readers_disagree"  # the recognizer's check head reads the value otherwise (check_reading.py)


def uncalibrated_reasons(sources: Sequence[str]) -> list[str]:
    """``uncalibrated:<source>`` for each decision source without a calibrator: its confidences are no
    probabilities, so the document's risk is unknown and it never goes straight through (docs/routing.md)."""
    return [f"{UNCALIBRATED}:{s}" for s in dict.fromkeys(sources)]


class EvidenceLike(Protocol):
    score: float
    rivals: int
    margin: float
    source: str
    how: str


def evidence_reasons(evidence: Mapping[str, EvidenceLike], min_score: float, min_margin: float,
                     guessed_labels: bool = False) -> list[str]:
    """Review reasons that the extractor's own evidence gives, whatever the calibrated confidence says: a value
    scored below ``min_score`` by the extractor that found it, or with a rival value within ``min_margin``.
    On label wordings the rules were never given, these are where their wrong values gather (docs/confidence.md).
    With ``guessed_labels``, also a value the rules decided by guessing which field a label outside their lexicon
    names: the rules' calibrator was fitted on pages whose labels the lexicon holds, so it does not know how often
    such a guess is wrong (docs/routing.md)."""
    out = []
    for key, ev in evidence.items():
        if ev.score < min_score or (guessed_labels and ev.source == "rules" and ev.how == UNKNOWN_LABEL):
            out.append(f"{WEAK_EVIDENCE}:{key}")
        elif ev.rivals > 0 and ev.margin < min_margin:
            out.append(f"{CLOSE_RIVAL}:{key}")
    return out


@dataclass(frozen=True)
class Routing:
    risk: float  # P(any field wrong)
    hard_reasons: tuple[str, ...]  # reasons that hold whatever the risk target
    reasons: tuple[str, ...]  # every review reason (hard ones first); empty = straight through

    @property
    def needs_review(self) -> bool:
        return bool(self.reasons)

    def as_dict(self) -> dict:
        return {"risk": round(self.risk, 6), "hard_reasons": list(self.hard_reasons), "reasons": list(self.reasons)}


def document_risk(found: Mapping[str, float], absent_ok: Mapping[str, float]) -> float:
    """1 - prod(confidence of found fields) * prod(P(absent) of fields not found)."""
    p = 1.0
    for c in list(found.values()) + list(absent_ok.values()):
        p *= min(1.0, max(0.0, c))
    return 1.0 - p


def route(
    found: Mapping[str, float],
    absent_ok: Mapping[str, float],
    required: Sequence[str],
    invalid: Sequence[str],
    max_error_rate: float,
    floor: float = 0.0,
    extra_hard: Sequence[str] = (),
) -> Routing:
    """``found``: field -> calibrated confidence; ``absent_ok``: field not found -> P(really absent);
    ``required``: fields the document must have; ``invalid``: found fields whose value failed validation."""
    hard: list[str] = []
    hard += [f"{MISSING}:{k}" for k in absent_ok if k in required]
    hard += [f"{INVALID}:{k}" for k in invalid]
    hard += [f"{LOW_CONFIDENCE}:{k}" for k, c in found.items() if c < floor and k not in invalid]
    hard += [r for r in extra_hard if r not in hard]
    risk = document_risk(found, absent_ok)
    reasons = list(hard)
    if risk > max_error_rate:
        # the least certain fields first, until the fields left unchecked carry at most the target risk
        named = {r.split(":", 1)[1] for r in hard if ":" in r}
        err = sorted(
            [(1 - c, k, LOW_CONFIDENCE) for k, c in found.items()] + [(1 - c, k, MISSING) for k, c in absent_ok.items()],
            key=lambda t: -t[0],
        )
        unchecked = {k: c for k, c in list(found.items()) + list(absent_ok.items()) if k not in named}
        for e, k, prefix in err:
            if document_risk(unchecked, {}) <= max_error_rate:
                break
            if k in unchecked:
                reasons.append(f"{prefix}:{k}")
                del unchecked[k]
        if not reasons:
            reasons.append(f"{LOW_CONFIDENCE}:document")
    return Routing(risk, tuple(hard), tuple(reasons))
