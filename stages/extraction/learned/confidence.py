"""Confidence of the learned decision's fields from all the evidence about the chosen value: where the rules, run on
the same lines, output the same value for the field (and their routing does not doubt it), the scorer's P through
the learned calibration's map for such shared values (under a calibration without that map: the larger of the
rules' calibrated confidence, ``stages/extraction/confidence.py``, and the scorer's calibrated P); where the rules
output another value or none, the scorer's calibrated P alone. Both maps are the ones of the capture of the value's
page where the calibration has maps per capture. P(really absent) of a field the learned decision
leaves empty is the learned calibration's, fitted apart for fields the rules also left empty (``null_ok``) and fields
the rules found a value for (``null_ok_against_rules``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection, Mapping, Optional, Protocol

from stages.extraction.learned.scorer import ScoreCalibrator

# the rules' reasons that withhold their confidence from a field: what the rules' routing would have checked
_RULES_DOUBT = ("invalid", "low_confidence", "weak_evidence", "close_rival", "extractors_disagree")


class FieldCalibrator(Protocol):
    def confidence(self, ev: Any) -> float: ...

    def absent_ok(self, key: str) -> float: ...


@dataclass(frozen=True)
class RulesView:
    """What the rules' own decision says about one document: per field found its output value and calibrated
    confidence (``None`` where the rules' routing doubts it)."""

    values: Mapping[str, Any] = field(default_factory=dict)
    confidence: Mapping[str, Optional[float]] = field(default_factory=dict)

    @classmethod
    def from_assembled(cls, fields: Mapping[str, Any], reasons: list[str], diagnostics: Optional[Mapping[str, Any]] = None
                       ) -> "RulesView":
        """From the rules' ``FieldAssembler.assemble`` output of the document."""
        doubted = {r.split(":", 1)[1] for r in reasons if ":" in r and r.split(":", 1)[0] in _RULES_DOUBT}
        values, conf = {}, {}
        for key, f in fields.items():
            if f is None:
                continue
            values[key] = f.get("value")
            clean = f.get("valid", False) and not f.get("issues")  # a repair note is a doubt here too
            conf[key] = None if key in doubted or not clean else float(f["confidence"])
        return cls(values, conf)


@dataclass(frozen=True)
class AgreementCalibrator:
    """The learned decision's calibrator for one document: ``agree`` holds the fields whose learned value the rules
    share, each with the rules' confidence (which counts only under a calibration without a map for shared values);
    ``rules_found`` the fields the learned decision left empty and the rules did not."""

    learned: FieldCalibrator
    agree: Mapping[str, float] = field(default_factory=dict)
    rules_found: Collection[str] = ()
    vacant: Mapping[str, float] = field(default_factory=dict)  # per empty field, its vacant P (learned.extract)
    capture: str = "scan"  # the document's capture (document_capture)
    captures: Mapping[str, str] = field(default_factory=dict)  # per found field, the capture of its value's page
    misread_likely: Collection[str] = ()  # empty, more likely misread than absent (learned.extract.misread_likely)

    def confidence(self, ev: Any) -> float:
        if not isinstance(self.learned, ScoreCalibrator):
            return max(self.learned.confidence(ev), self.agree.get(ev.key, 0.0))
        capture = self.captures.get(ev.key, self.capture)  # the maps may differ per capture of the value's page
        shared = self.learned.shared(ev, capture) if ev.key in self.agree else None
        if shared is not None:  # P(correct | both decisions output this value, P)
            return shared
        own = self.learned.confidence(ev, capture)
        return max(own, self.agree.get(ev.key, 0.0))

    def absent_ok(self, key: str) -> float:
        """P(really absent) as the learned calibration estimates it: where the rules found a value, at the rate
        fitted on exactly those fields (``absent_ok_against_rules``, when the file has it); where they found none
        either, from the field's vacant P and whether it is more likely misread (``absent_given``, when the file has
        it), else at the rate fitted on those fields."""
        if key in self.rules_found and hasattr(self.learned, "absent_ok_against_rules"):
            return self.learned.absent_ok_against_rules(key)
        if key in self.vacant and hasattr(self.learned, "absent_given"):
            return self.learned.absent_given(key, self.vacant[key], self.capture, key in self.misread_likely)
        return self.learned.absent_ok(key)


def document_capture(captures: Collection[str]) -> str:
    """One capture for a document's pages, the hardest to read: fax, else photo, else scan."""
    return next((c for c in ("fax", "photo") if c in captures), "scan")


def agreement(learned_fields: Mapping[str, Any], rules: RulesView) -> tuple[dict[str, float], list[str]]:
    """(fields whose learned value the rules output too, with the rules' confidence; fields the learned decision
    left empty that the rules found a value for). A value the rules' routing doubts lends no confidence."""
    agree, rules_found = {}, []
    for key, f in learned_fields.items():
        if f is None:
            if key in rules.values:  # the rules output the field (a value, or text that did not normalize)
                rules_found.append(key)
            continue
        c = rules.confidence.get(key)
        if c is not None and f.get("value") is not None and rules.values.get(key) == f.get("value"):
            agree[key] = c
    return agree, rules_found
