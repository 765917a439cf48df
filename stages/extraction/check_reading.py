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
# of those, the codes: their check reading is the whole run of letters and digits that holds the value's span there,
# so a code the first reading cut (a speck read as a dot inside it, ML.SVQ2025…) is read otherwise by the check
WHOLE_RUNS = ("policy_number",)
_CONTENT = re.compile(r"[\u4e00-\u9fff0-9A-Za-z]")
_ALNUM = re.compile(r"[0-9A-Za-z]")


def _content(text: str) -> str:
    """The CJK characters, digits and Latin letters of ``text`` (full-width forms folded): spaces and punctuation
    differ between the heads without meaning."""
    return "".join(_CONTENT.findall(unicodedata.normalize("NFKC", text)))


def check_span(line: TextLine, c0: int, c1: int, whole_run: bool = False) -> Optional[str]:
    """The check reading of characters ``c0..c1`` of ``line``, by aligning its two readings (characters the check
    reading adds inside the span, or reads in place of the span's, belong to it); with ``whole_run``, widened to the
    run of letters and digits of the check reading that holds it. None without a check reading."""
    check = line.check_text
    if check is None:
        return None
    start, end = c0, c1 + 1
    lo, hi = len(check), 0
    matcher = difflib.SequenceMatcher(None, line.text, check, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i2 <= start or i1 >= end:
            continue
        if tag == "equal":
            j1, j2 = j1 + max(i1, start) - i1, j1 + min(i2, end) - i1
        lo, hi = min(lo, j1), max(hi, j2)
    if lo > hi:
        return ""
    while whole_run and lo > 0 and _ALNUM.match(check[lo - 1]):
        lo -= 1
    while whole_run and hi < len(check) and _ALNUM.match(check[hi]):
        hi += 1
    return check[lo:hi]


def check_reading(chars: Sequence[Ref], lines: Sequence[Sequence[TextLine]], whole_run: bool = False) -> Optional[str]:
    """The check reading of the characters a value was read from (its spans, line by line; ``whole_run``: see
    :func:`check_span`); None without characters or when a line of it has no check reading."""
    spans: dict[tuple[int, int], list[int]] = {}
    for p, li, ci in chars:
        spans.setdefault((p, li), []).append(ci)
    checked = []
    for (p, li), cis in sorted(spans.items()):
        if not (0 <= p < len(lines) and 0 <= li < len(lines[p])):
            return None
        span = check_span(lines[p][li], min(cis), max(cis), whole_run)
        if span is None:
            return None
        checked.append(span)
    return "".join(checked) if spans else None


def disagrees(text: str, checked: Optional[str]) -> bool:
    """True when a check reading (:func:`check_reading`) holds other CJK characters, digits or letters than
    ``text``; False when they agree or there is none."""
    return checked is not None and _content(text) != _content(checked)

