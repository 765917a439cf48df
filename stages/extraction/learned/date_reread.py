"""Dates in Chinese numerals that the recognizer read with a numeral lost (二〇二〇年 read 二二年, 一月十三日 read
月十三日): the date's characters are read again from the line's stored frames, emitting only the date alphabet, and
the first re-reading within the re-decoder's ratio that is a valid date and keeps every character as read, in order
(numerals restored, none changed), becomes a date candidate. A thin 〇 is the numeral most often lost; a year of
fewer than four numerals or a month without one is no date, so no other candidate can carry the field's value."""
from __future__ import annotations

import re
from datetime import date
from typing import Iterable, Iterator, Optional

import numpy as np

from stages.contracts.types import TextLine
from stages.extraction.field_specs import FIELDS
from stages.extraction.learned.candidates import Candidate, DocLines
from stages.extraction.learned.detectors import DATE_FIELDS
from stages.extraction.redecode import redecode_candidates
from stages.postprocess.values import Normalized, nfkc
from stages.recognition.ctc import CharDict

STRATEGY = "date_reread"
_NORMALIZE = FIELDS[DATE_FIELDS[0]].normalizer  # the date fields share one normalizer

_NUMERALS = "〇○零一二三四五六七八九十"
# a date in Chinese numerals whose year, month or day may have lost numerals (OCR may read 〇 as O or 0)
SHORT_DATE_RE = re.compile(rf"[{_NUMERALS}][{_NUMERALS}O0o]{{0,3}}\s*年\s*[{_NUMERALS}元]{{0,3}}\s*月"
                           rf"\s*[{_NUMERALS}]{{0,4}}\s*[日号]")


# an Arabic date that lost its day: a year and a month, then nothing more of a date (2024/10 where 2024/10/14 was
# printed); not a dot, which also separates an amount's decimals (2019.50)
_DAYLESS_RE = re.compile(r"(?<![\d/\-])(?:19|20|21)\d{2}\s*[/\-]\s*\d{1,2}(?!\d)(?!\s*[/\-]\s*\d)")


def _short_dates(text: str, today: date) -> Iterator[re.Match[str]]:
    """The Chinese-numeral dates of ``text`` that do not read as one (a numeral lost)."""
    return (m for m in SHORT_DATE_RE.finditer(text) if not _NORMALIZE(m.group(), today).valid)


def holds_unread_date(texts: Iterable[str], today: date) -> bool:
    """Whether a line holds a date that does not read as one: a Chinese-numeral date that lost numerals
    (二二年九月十三日), whether or not its frames restore it (:func:`reread_dates`), or an Arabic year and month without
    their day. An empty date field of such a page was more likely misread than absent
    (``learned.extract.misread_likely``)."""
    return any(_DAYLESS_RE.search(norm) or next(_short_dates(norm, today), None) is not None
               for norm in map(nfkc, texts))


def _keeps(read: str, reread: str) -> bool:
    """Whether ``reread`` holds every character of ``read`` in order (characters only added)."""
    it = iter(reread)
    return all(ch in it for ch in read)


def reread_date(text: str, line: TextLine, start: int, end: int, allowed: np.ndarray, chars: CharDict,
                today: date) -> Optional[tuple[str, Normalized]]:
    """The re-reading of ``text`` (characters ``start..end-1`` of ``line``) as a valid date, with its normalized
    value, or None; ``allowed``: the date alphabet's classes."""
    for alt in redecode_candidates(line, start, end - 1, allowed, chars):
        if len(alt) > len(text) and _keeps(text, alt):
            n = _NORMALIZE(alt, today)
            if n.valid:
                return alt, n
    return None


def reread_dates(doc: DocLines, today: date, chars: CharDict) -> list[Candidate]:
    """A candidate for each date field from every Chinese-numeral date that does not read as one and whose frames
    restore it (:func:`reread_date`); its characters are the ones read, ``read_as`` their text."""
    allowed = chars.encode_charset(FIELDS[DATE_FIELDS[0]].charset)
    out: list[Candidate] = []
    for pi, li, ln in doc.flat:
        for m in _short_dates(ln.text, today):
            text = m.group()
            found = reread_date(text, ln, m.start(), m.end(), allowed, chars, today)
            if found is None:
                continue
            alt, n = found
            refs = tuple((pi, li, ci) for ci in range(m.start(), m.end()) if not ln.text[ci].isspace())
            out.extend(Candidate(key, alt, refs, n.value, tuple(n.issues), "detector", STRATEGY, read_as=text)
                       for key in DATE_FIELDS)
    return out
