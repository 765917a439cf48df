"""Whether the recognizer's second reading of a value agrees with the first: a model with a check head reads every line
twice (``TextLine.check_text``, stages/recognition/recognizer.py; on a photo, the main recognizer reads its code-like
lines again, stages/recognition/lines.py), and a name or policy number whose characters the second reading gives
otherwise goes to review (``readers_disagree:<field>``, docs/confidence.md; lexicon_reread.reread_checked may take a
name's characters). One misread character is read with confidence by one reader (睿 as 容, a code's T as 1) and
not by the other; the document's calibrated risk never sees it."""
from __future__ import annotations

import difflib
import re
import unicodedata
from typing import Optional, Sequence

from stages.contracts.types import TextLine

Ref = tuple[int, int, int]  # (page, line index, char index) of each character of the value
# fields whose two readings are compared
CHECKED = ("policyholder_name", "insured_name", "beneficiary_name", "policy_number")
_CONTENT = re.compile(r"[\u4e00-\u9fff0-9A-Za-z]")


def _content(text: str) -> str:
    """The CJK characters, digits and Latin letters of ``text`` (full-width forms folded): spaces and punctuation
    differ between the heads without meaning."""
    return "".join(_CONTENT.findall(unicodedata.normalize("NFKC", text)))


def check_span(line: TextLine, c0: int, c1: int) -> Optional[str]:
    """The check reading of characters ``c0..c1`` of ``line``, by aligning its two readings (characters the check
    reading adds inside the span, or reads in place of the span's, belong to it); None without a check reading."""
    if line.check_text is None:
        return None
    start, end = c0, c1 + 1
    out = []
    matcher = difflib.SequenceMatcher(None, line.text, line.check_text, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i2 <= start or i1 >= end:
            continue
        if tag == "equal":
            a, b = max(i1, start), min(i2, end)
            out.append(line.check_text[j1 + a - i1 : j1 + b - i1])
        else:
            out.append(line.check_text[j1:j2])
    return "".join(out)


def check_reading(chars: Sequence[Ref], lines: Sequence[Sequence[TextLine]]) -> Optional[str]:
    """The check reading of the characters a value was read from (its spans, line by line); None without
    characters or when a line of it has no check reading."""
    spans: dict[tuple[int, int], list[int]] = {}
    for p, li, ci in chars:
        spans.setdefault((p, li), []).append(ci)
    checked = []
    for (p, li), cis in sorted(spans.items()):
        if not (0 <= p < len(lines) and 0 <= li < len(lines[p])):
            return None
        span = check_span(lines[p][li], min(cis), max(cis))
        if span is None:
            return None
        checked.append(span)
    return "".join(checked) if spans else None


def disagrees(text: str, checked: Optional[str]) -> bool:
    """True when a check reading (:func:`check_reading`) holds other CJK characters, digits or letters than
    ``text``; False when they agree or there is none."""
    return checked is not None and _content(text) != _content(checked)

