"""A policy number whose label was lost: a box that holds nothing but a code of letters and digits.

A dark band or a ruined label leaves ``码KDGV201943723137409`` or ``-CEHUJ2025119106534402``: the rest of 保险单号码,
or the leader after it, and the number. When no strategy found the policy number, the first box in reading order
that is such a code (at least :data:`MIN_CODE` characters, :data:`MIN_DIGITS` of them digits and at least one Latin
letter, so that no ID number, phone, account or amount qualifies), after at most :data:`MAX_RESIDUE` characters of
a lost label or leaders, and that no found field took, is the policy number, at a low score.
"""
from __future__ import annotations

import re

from stages.extraction.rules.candidates import SCORE_PATTERN, RuleCandidate, span_candidate
from stages.extraction.rules.document import PreparedDocument
from stages.extraction.rules.lines import LEADER_CHARS

MIN_CODE, MIN_DIGITS, MAX_RESIDUE = 10, 8, 2
SCORE_BARE_CODE = SCORE_PATTERN * 0.8
_CODE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*[0-9]$")
_RESIDUE_RE = re.compile(r"^[\u4e00-\u9fff]{0,%d}[%s:]*" % (MAX_RESIDUE, re.escape(LEADER_CHARS)))


def bare_code_candidates(doc: PreparedDocument, best: dict[str, RuleCandidate]) -> list[RuleCandidate]:
    """The policy number from a bare code when ``best`` has none (see the module)."""
    if "policy_number" in best:
        return []
    taken = {li for c in best.values() for li in c.match.line_indices}
    for li in doc.order:
        if doc.source[li] in taken:
            continue
        comp = doc.lines[li].comp
        start = _RESIDUE_RE.match(comp).end()  # type: ignore[union-attr]  (the pattern matches the empty string)
        code = comp[start:]
        if _is_code(code):
            c = span_candidate(doc, "policy_number", li, start, len(comp), "pattern", SCORE_BARE_CODE)
            return [c] if c is not None else []
    return []


def _is_code(code: str) -> bool:
    return (len(code) >= MIN_CODE and _CODE_RE.fullmatch(code) is not None
            and sum(ch.isdigit() for ch in code) >= MIN_DIGITS and any(ch.isascii() and ch.isalpha() for ch in code))
