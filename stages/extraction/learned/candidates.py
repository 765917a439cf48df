"""Candidates of the learned decision: one frozen type carrying its character references into the OCR lines from
the start; the rule strategies' candidates (all of them, not only the winners) and the type detectors'."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Iterable, Optional, Sequence

from stages.contracts.types import TextLine
from stages.extraction.field_specs import FIELDS, normalize_field
from stages.extraction.rules.extract import RulesDecision, considered
from stages.extraction.rules.records import flat_lines, match_chars

CharRef = tuple[int, int, int]  # (page, line index on the page, character index in the line's text)


@dataclass(frozen=True)
class Candidate:
    """A value for field ``key``: the text as read, where its characters are, its normalized value and who
    proposed it (``source`` rules|detector|ernie, ``strategy`` the rule method, detector name or ``ernie``, ``rule_score`` the rule's
    own score, 0 for detectors). ``read_as``: the recognizer's text of those characters where ``text`` is a
    re-reading of their frames (``date_reread.py``), else None."""

    key: str
    text: str
    chars: tuple[CharRef, ...]
    value: Optional[str]
    issues: tuple[str, ...]
    source: str
    strategy: str
    rule_score: float = 0.0
    read_as: Optional[str] = None

    @property
    def span(self) -> frozenset[CharRef]:
        return frozenset(self.chars)


@dataclass(frozen=True)
class DocLines:
    """One document's OCR lines, flattened in reading order: ``flat[i] = (page, line index, line)``."""

    flat: tuple[tuple[int, int, TextLine], ...]
    page_sizes: tuple[tuple[float, float], ...]  # (width, height) per page

    @staticmethod
    def build(lines: Sequence[Sequence[TextLine]], page_sizes: Sequence[tuple[float, float]]) -> "DocLines":
        flat = tuple(flat_lines(lines))
        return DocLines(flat, tuple((float(w), float(h)) for w, h in page_sizes))

    def line(self, ref: CharRef) -> TextLine:
        return self._by_page_line[(ref[0], ref[1])]

    @property
    def _by_page_line(self) -> dict[tuple[int, int], TextLine]:
        cache = self.__dict__.get("_index")
        if cache is None:
            cache = {(p, li): ln for p, li, ln in self.flat}
            object.__setattr__(self, "_index", cache)
        return cache


def span_text(doc: DocLines, page: int, li: int, start: int, end: int) -> tuple[str, tuple[CharRef, ...]]:
    """Characters ``[start, end)`` of one line: their text and the references of those that are not spaces."""
    line = doc.line((page, li, 0))
    return line.text[start:end], tuple((page, li, ci) for ci in range(start, end) if not line.text[ci].isspace())


def span_candidate(doc: DocLines, key: str, page: int, li: int, start: int, end: int, source: str,
                   strategy: str, today: date) -> Optional[Candidate]:
    """Characters ``[start, end)`` of one line as a candidate for ``key`` (spaces are not referenced)."""
    text, chars = span_text(doc, page, li, start, end)
    if not chars:
        return None
    n = normalize_field(key, text, today)
    return Candidate(key, text, chars, n.value, tuple(n.issues), source, strategy)


def rule_candidates(doc: DocLines, decision: RulesDecision) -> list[Candidate]:
    """Every candidate the rule strategies considered (:func:`~stages.extraction.rules.extract.considered`) in the
    document's rule decision (over ``doc``'s lines as the rules read them), with the characters each was read from."""
    out = []
    for rc in considered(decision):
        if rc.key not in FIELDS:
            continue
        m = rc.match
        chars = match_chars(m, doc.flat)
        if not chars:
            continue  # a value that holds characters of a re-read label: not the OCR's text
        out.append(Candidate(rc.key, m.text, chars, m.normalized.value, tuple(m.normalized.issues), "rules",
                             m.method, float(rc.score)))
    return out


def merge(cands: Iterable[Candidate]) -> list[Candidate]:
    """Candidates without exact repeats (same field, characters, value, source and strategy), best rule score kept."""
    best: dict[tuple, Candidate] = {}
    for c in cands:
        k = (c.key, c.chars, c.value, c.source, c.strategy)
        if k not in best or c.rule_score > best[k].rule_score:
            best[k] = c
    return list(best.values())
