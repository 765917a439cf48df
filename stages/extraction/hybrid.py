"""Per-field hybrid policy: which extractor's value a field takes, and when their disagreement is a review reason.

``model``: the model's value first, the rules' when the model has none that validates; ``rules``: the
reverse; ``agreement``: the preferred source first (``extraction.prefer``), and when both extractors found
a valid value and the values differ, ``extractors_disagree:<field>`` goes into the review reasons.
The policy of each field is chosen on dev by ``python -m pipeline.tools.hybrid_policy`` (configs/hybrid.yaml).
"""
from __future__ import annotations

from datetime import date
from typing import Literal, Mapping, Optional, Sequence

from stages.extraction.decisions import Proposal, read_value
from stages.extraction.field_specs import FIELDS

Policy = Literal["model", "rules", "agreement"]
POLICIES: tuple[str, ...] = ("model", "rules", "agreement")
DISAGREE = "extractors_disagree"


def check_policies(policy: Mapping[str, str]) -> None:
    unknown = set(policy) - set(FIELDS)
    if unknown:
        raise ValueError(f"extraction.policy names unknown fields: {sorted(unknown)}")
    bad = {k: v for k, v in policy.items() if v not in POLICIES}
    if bad:
        raise ValueError(f"extraction.policy values must be one of {POLICIES}: {bad}")


def _value(c: Optional[Proposal], today: date) -> Optional[str]:
    if c is None:
        return None
    norm = read_value(c, today)
    return norm.value if norm.valid else None


def arrange(
    key: str, policy: Optional[str], prefer: str, model: Optional[Proposal], rules: Optional[Proposal], today: date
) -> tuple[list[Proposal], Optional[str]]:
    """Candidates of ``key`` in the order the assembler should try them, and a review reason or None."""
    first = policy if policy in ("model", "rules") else prefer
    ordered = [c for c in ((model, rules) if first == "model" else (rules, model)) if c is not None]
    reason = None
    if policy == "agreement":
        a, b = _value(model, today), _value(rules, today)
        if a is not None and b is not None and a != b:
            reason = f"{DISAGREE}:{key}"
    return ordered, reason


def arrange_all(
    policy: Mapping[str, str], prefer: str, model: Mapping[str, Proposal], rules: Mapping[str, Proposal],
    today: date, keys: Sequence[str] = tuple(FIELDS),
) -> tuple[dict[str, list[Proposal]], list[str]]:
    cands: dict[str, list[Proposal]] = {}
    reasons: list[str] = []
    for k in keys:
        cands[k], reason = arrange(k, policy.get(k), prefer, model.get(k), rules.get(k), today)
        if reason:
            reasons.append(reason)
    return cands, reasons
