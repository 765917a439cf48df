"""Candidates: a value read from a span of boxes, normalized and scored; the base score of each way to find one."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

from stages.extraction.field_specs import FIELDS, normalize_field
from stages.extraction.rules.amounts import prefer_capital
from stages.extraction.rules.lines import norm_pos, raw_refs, raw_text
from stages.extraction.rules.records import RuleMatch, SourceChar
from stages.extraction.rules.values import cut_from_spaced_word, plausibility, trim_field, trim_value
from stages.postprocess.values import Normalized

if TYPE_CHECKING:
    from stages.extraction.rules.document import PreparedDocument

SCORE_LABEL_SEPARATED = 0.9
SCORE_LABEL_PLAIN = 0.75
SCORE_RIGHT = 0.85
SCORE_BELOW = 0.75
SCORE_NARRATIVE = 0.92  # above bare labels inside the sentence, whose role may be misread
SCORE_SPLIT_LABEL = 0.7
SCORE_PATTERN = 0.45

UNSURE_ID = "_unsure_id"  # pseudo key: an ID number whose owner is unknown


@dataclass(frozen=True)
class RuleCandidate:
    """A value for ``key`` with its score and the reading-order rank of its first line (the tie-breaker)."""

    key: str
    score: float
    order: int  # reading-order rank of the first line (tie-breaker)
    match: RuleMatch


def span_candidate(doc: PreparedDocument, key: str, li: int, cs: int, ce: int, method: str,
                   base: float) -> Optional[RuleCandidate]:
    """Trim, normalize and score the compact span ``[cs, ce)`` of line ``li`` as a value of ``key``."""
    return segments_candidate(doc, key, ((li, cs, ce),), method, base)


def segments_candidate(doc: PreparedDocument, key: str, segments: Sequence[tuple[int, int, int]], method: str,
                       base: float) -> Optional[RuleCandidate]:
    """Like :func:`span_candidate` for a value spread over consecutive compact spans ``(line, start, end)``."""
    chars: list[str] = []
    owner: list[tuple[int, int]] = []  # (line, NFKC position) per character
    for li, cs, ce in segments:
        line = doc.lines[li]
        if ce <= cs:
            continue
        n0, n1 = norm_pos(line, cs), line.comp_to_norm[ce - 1] + 1
        chars.append(line.norm[n0:n1])
        owner.extend((li, k) for k in range(n0, n1))
    text = "".join(chars)
    first = next(((li, cs) for li, cs, ce in segments if ce > cs), None)
    before = doc.lines[first[0]].comp[:first[1]] if first is not None else ""
    s, e = trim_field(key, text, *trim_value(FIELDS[key].kind, text, 0, len(text)), before)
    parts: list[str] = []
    refs: list[SourceChar] = []
    lines: list[int] = []
    i = s
    while i < e:
        li = owner[i][0]
        k = i
        while k < e and owner[k][0] == li:
            k += 1
        parts.append(raw_text(doc.lines[li], owner[i][1], owner[k - 1][1] + 1))
        refs.extend(raw_refs(doc.lines[li], owner[i][1], owner[k - 1][1] + 1))
        lines.append(li)
        i = k
    raw = "".join(parts)
    if not raw.strip():
        return None
    if FIELDS[key].kind in ("name", "beneficiary"):
        li, k = owner[e - 1]
        if cut_from_spaced_word(text[s:e], doc.lines[li].norm[k + 1:]):
            return None  # the first characters of a letter-spaced label, not a name
    return text_candidate(doc, key, raw, tuple(refs), tuple(lines), method, base)


def text_candidate(doc: PreparedDocument, key: str, text: str, refs: Sequence[SourceChar], lines: tuple[int, ...],
                   method: str, base: float, issues: tuple[str, ...] = ()) -> Optional[RuleCandidate]:
    """Normalize and score ``text`` (read from boxes ``lines``; ``refs``: the input character of each of its non-space
    characters) as a value of ``key``, with ``issues`` added to the normalizer's; an amount whose capital and Arabic
    forms disagree is read from its capitals (:func:`amounts.prefer_capital`). ``None`` if implausible."""
    n = normalize_field(key, text, doc.today)
    if FIELDS[key].kind == "amount":
        (start, end), n = prefer_capital(text, n)
        if (start, end) != (0, len(text)):
            refs = _part_refs(text, refs, start, end)
            text = text[start:end]
    if issues:
        n = Normalized(n.value, tuple(dict.fromkeys(n.issues + issues)))
    factor = plausibility(key, n, method)
    if factor is None:
        return None
    rank = min(doc.rank[li] for li in lines)
    sources = tuple(dict.fromkeys(doc.source[li] for li in lines))
    return RuleCandidate(key, base * factor, rank,
                         RuleMatch(key, text, sources, round(base * factor, 4), method, n, chars=tuple(refs)))


def _part_refs(text: str, refs: Sequence[SourceChar], start: int, end: int) -> Sequence[SourceChar]:
    """The references of the non-space characters of ``text[start:end]`` among those of ``text``."""
    before = sum(not ch.isspace() for ch in text[:start])
    inside = sum(not ch.isspace() for ch in text[start:end])
    return refs[before:before + inside]


def retarget(c: RuleCandidate, key: str, factor: float = 1.0) -> RuleCandidate:
    """The same value as a candidate for ``key`` (a pseudo key keeps the match's key), its score times ``factor``."""
    m = c.match
    score = round(c.score * factor, 4)
    return RuleCandidate(key, score, c.order, RuleMatch(key if not key.startswith("_") else m.key, m.text,
                                                    m.line_indices, score, m.method, m.normalized, chars=m.chars))
