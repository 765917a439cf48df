"""The records the field assembler works with: a value proposed for a field, located on the page, and the decision
made on it."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Optional

from stages.extraction.field_specs import FIELDS
from stages.postprocess.values import Normalized


@dataclass(frozen=True)
class Proposal:
    """A field value located on the page: characters as (page, line index, char index) in reading order."""

    key: str
    text: str
    chars: tuple[tuple[int, int, int], ...]
    prob: float
    method: str  # "model" | "rules" | "learned"
    how: str = ""  # how the extractor found it (rules: label, narrative, pattern, ...)
    rivals: int = 0  # competing candidates with another value
    margin: float = 1.0  # score margin over the best of them
    # the value as its source read it, issues included (the rules' ``amount_mismatch`` when they read the capital
    # amount); None: the assembler normalizes ``text``
    normalized: Optional[Normalized] = None
    # the recognizer's text of ``chars`` where ``text`` re-reads their frames (a date with a numeral restored), else None
    read_as: Optional[str] = None


def read_value(p: Proposal, today: date) -> Normalized:
    """The normalized value of ``p``: its source's reading where it carries one, else ``text`` normalized."""
    return p.normalized if p.normalized is not None else FIELDS[p.key].normalizer(p.text, today)


@dataclass(frozen=True)
class Decision:
    proposal: Proposal
    normalized: Normalized
    redecoded_from: Optional[str] = None  # the value text before constrained re-decoding changed it
