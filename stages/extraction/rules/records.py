"""Input lines and output matches of the rules extractor: the line protocol it reads and the match it returns."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Protocol, Sequence

import numpy as np

from stages.postprocess.values import Normalized


SourceChar = tuple[int, int]  # a character of the rules' input: (index of its line, index in that line's text)


class OcrLineLike(Protocol):
    """What the extractor reads from a line: ``text`` and a 4x2 ``polygon`` in page pixels.

    A ``page`` attribute (int) is read when present (``stages.contracts.types.TextLine`` has none: page 0), and so are
    ``char_u`` and ``vertical`` (character positions along the line; read by the learned features, not the rules).
    """

    @property
    def text(self) -> str: ...

    @property
    def polygon(self) -> Any: ...


@dataclass(frozen=True)
class OcrLine:
    """A plain line, e.g. from a result JSON (``{"text": ..., "polygon": [[x, y] * 4]}``)."""

    text: str
    polygon: tuple[tuple[float, float], ...]
    page: int = 0


@dataclass(frozen=True)
class RuleLine:
    """A recognized line as the extraction stage hands it to the rules: its text (labels maybe re-read), polygon,
    page, and the character positions along it (wide blanks inside a box)."""

    text: str
    polygon: Any
    page: int
    char_u: tuple[float, ...] = ()
    vertical: bool = False


def flat_lines(lines: Sequence[Sequence[Any]]) -> list[tuple[int, int, Any]]:
    """A document's lines, page by page, as ``(page, line index on the page, line)``."""
    return [(pi, li, ln) for pi, page_lines in enumerate(lines) for li, ln in enumerate(page_lines)]


def rule_lines(flat: Sequence[tuple[int, int, Any]], texts: Sequence[str]) -> list[RuleLine]:
    """The rules' view of a document's OCR lines ``(page, line index, TextLine)``, each with its text from ``texts``
    (labels maybe re-read)."""
    return [RuleLine(text, np.asarray(ln.polygon), pi, ln.char_u, ln.vertical)
            for text, (pi, _, ln) in zip(texts, flat)]


def match_chars(m: "RuleMatch", flat: Sequence[tuple[int, int, Any]]) -> tuple[tuple[int, int, int], ...]:
    """The characters of a match in the OCR lines, ``(page, line index on the page, character index)``: its ``chars``
    through ``flat``, the rules' input lines as :func:`flat_lines` gives them. Empty when the OCR text there is not
    the match's text (a value that holds characters of a label the rules read again, docs/extraction.md)."""
    refs = tuple((flat[li][0], flat[li][1], ci) for li, ci in m.chars)
    read = "".join(flat[li][2].text[ci] for li, ci in m.chars)
    return refs if refs and read == "".join(m.text.split()) else ()


def lines_from_records(records: Iterable[Mapping[str, Any]], page: Optional[int] = None) -> list[OcrLine]:
    """Dicts with ``text``, ``polygon`` and optionally ``page`` -> :class:`OcrLine` (``page`` overrides)."""
    out = []
    for r in records:
        poly = tuple((float(x), float(y)) for x, y in r["polygon"])
        out.append(OcrLine(str(r["text"]), poly, int(page if page is not None else r.get("page", 0))))
    return out


@dataclass(frozen=True)
class RuleMatch:
    """One field found by the rules: the value text as read, where it was (the input lines, and ``chars``: the
    input character of each non-space character of ``text``, in order), how, and its normalization."""

    key: str
    text: str
    line_indices: tuple[int, ...]
    score: float
    method: str  # one of stages/extraction/strategies.py: RULE_STRATEGIES
    normalized: Normalized
    # competition (evidence for calibrated confidence): candidates for this key with another value, and how far
    # the best of them scored below this one (1.0 when there is none)
    rivals: int = 0
    margin: float = 1.0
    chars: tuple[SourceChar, ...] = ()

    @property
    def value(self) -> Optional[str]:
        return self.normalized.value
