"""Confidence of the learned decision's fields from all the evidence about the chosen value: where the rules, run on
the same lines, output the same value for the field, the rules' calibrated confidence of that value
(``stages/extraction/confidence.py``, fitted on rules evidence) holds for it too, and the field's confidence is the
larger of it and the scorer's calibrated P; where the rules output another value or none, the scorer's calibrated P
alone. A field both leave empty takes the larger of the two calibrators' P(really absent); one the learned decision
leaves empty though the rules found a value, the learned calibration's P(absent | the rules found one)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection, Mapping, Optional, Protocol

# the rules' reasons that withhold their confidence from a field: what the rules' routing would have checked
_RULES_DOUBT = ("invalid", "low_confidence", "weak_evidence", "close_rival", "extractors_disagree")


class FieldCalibrator(Protocol):
    def confidence(self, ev: Any) -> float: ...

    def absent_ok(self, key: str) -> float: ...


@dataclass(frozen=True)
class RulesView:
    """What the rules' own decision says about one document: per field its output value and calibrated confidence
    (``None`` where the rules' routing doubts it), and P(really absent) for the fields the rules left empty."""

    values: Mapping[str, Any] = field(default_factory=dict)
    confidence: Mapping[str, Optional[float]] = field(default_factory=dict)
    absent_ok: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def from_assembled(cls, fields: Mapping[str, Any], reasons: list[str], diagnostics: Mapping[str, Any]
                       ) -> "RulesView":
        """From the rules' ``FieldAssembler.assemble`` output of the document."""
        doubted = {r.split(":", 1)[1] for r in reasons if ":" in r and r.split(":", 1)[0] in _RULES_DOUBT}
        values, conf = {}, {}
        for key, f in fields.items():
            if f is None:
                continue
            values[key] = f.get("value")
            conf[key] = None if key in doubted or not f.get("valid", False) else float(f["confidence"])
        absent = {k: float(v) for k, v in (diagnostics.get("absent_ok") or {}).items()}
        return cls(values, conf, absent)


@dataclass(frozen=True)
class AgreementCalibrator:
    """The learned decision's calibrator for one document: ``agree[key]`` is the rules' confidence of a field whose
    learned value they share; ``both_absent[key]`` the rules' P(absent) of a field both decisions left empty."""

    learned: Optional[FieldCalibrator]
    agree: Mapping[str, float] = field(default_factory=dict)
    both_absent: Mapping[str, float] = field(default_factory=dict)
    rules_found: Collection[str] = ()  # fields the learned decision left empty and the rules did not

    def confidence(self, ev: Any) -> float:
        own = self.learned.confidence(ev) if self.learned is not None else float(ev.score) * float(ev.rec_mean)
        return max(own, self.agree.get(ev.key, 0.0))

    def absent_ok(self, key: str) -> float:
        if self.learned is None:
            return max(1.0, self.both_absent.get(key, 0.0))
        if key in self.rules_found and hasattr(self.learned, "absent_ok_against_rules"):
            return self.learned.absent_ok_against_rules(key)
        return max(self.learned.absent_ok(key), self.both_absent.get(key, 0.0))


def agreement(learned_fields: Mapping[str, Any], rules: RulesView) -> tuple[dict[str, float], dict[str, float]]:
    """(fields whose learned value the rules output too, with the rules' confidence; fields both left empty, with
    the rules' P(absent)). A value the rules' routing doubts lends no confidence."""
    agree, both_absent = {}, {}
    for key, f in learned_fields.items():
        if f is None:
            if key in rules.absent_ok:
                both_absent[key] = rules.absent_ok[key]
            continue
        c = rules.confidence.get(key)
        if c is not None and f.get("value") is not None and rules.values.get(key) == f.get("value"):
            agree[key] = c
    return agree, both_absent
