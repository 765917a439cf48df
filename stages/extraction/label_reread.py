"""Label re-reading: a label of the rules' lexicon with one character misread (保险期滨日, 被保险入姓名) is read as the
label when the recognizer's own frames allow it, so the rules find the value it introduces.

A coarse fax or photo loses a stroke and 满 becomes 滨: the label is then unknown and the date beside it is never
taken. Every window of a line that equals a lexicon label of :data:`MIN_LABEL` or more characters except at one
Chinese character, where that character is not part of a label already read, is a candidate (and so is a label
with one stray character inside it, which becomes a blank); it is taken when the
CTC forward probability of the line's stored frames makes the label at most :data:`lexicon_reread.LEXICON_MAX_RATIO`
times less probable than the reading (the same test the value lexicons use). Only label characters change, the
line keeps its length, so every character reference stays valid. Pure functions over :class:`TextLine`."""
from __future__ import annotations

import math
from typing import Iterable, Optional

from stages.contracts.types import TextLine
from stages.extraction.lexicon_reread import LEXICON_MAX_RATIO, segment_log_ratio
from stages.extraction.rules.lexicon import FULL_LEXICON, Lexicon
from stages.recognition.ctc import CharDict

MIN_LABEL = 4  # shorter labels (姓名, 保费, 投保人) are too close to ordinary words to be completed
_MASK = "\x00"


def _is_cjk(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff"


class LabelIndex:
    """A lexicon's labels of :data:`MIN_LABEL` or more characters, each with one Chinese character masked, for
    window lookups; built once per lexicon."""

    def __init__(self, lexicon: Lexicon):
        self.lexicon = lexicon
        masked: dict[str, list[tuple[str, int]]] = {}
        for text in sorted(lexicon.labels):
            if len(text) < MIN_LABEL:
                continue
            for k, ch in enumerate(text):
                if _is_cjk(ch):
                    masked.setdefault(text[:k] + _MASK + text[k + 1:], []).append((text, k))
        self.masked = {key: tuple(v) for key, v in masked.items()}
        self.lengths = tuple(sorted({len(key) for key in self.masked}))
        self.alphabet = frozenset("".join(lexicon.labels))
        self.whole = frozenset(t for t in lexicon.labels if len(t) >= MIN_LABEL)
        self.longest = max((len(t) for t in self.whole), default=0)


# indexes by lexicon identity: the full lexicon's, kept, and the last other one (an adapted folder's lexicon is one
# object for every document; a withheld draw makes one per document, which the rules and the learned decision share)
_INDEXES: dict[bool, tuple[Lexicon, LabelIndex]] = {}


def label_index(lexicon: Lexicon) -> LabelIndex:
    """The :class:`LabelIndex` of this lexicon object, built once while it is the full lexicon or the last other."""
    slot = lexicon is FULL_LEXICON
    cached = _INDEXES.get(slot)
    if cached is None or cached[0] is not lexicon:
        cached = _INDEXES[slot] = (lexicon, LabelIndex(lexicon))
    return cached[1]


def _runs(text: str, alphabet: frozenset[str]) -> tuple[list[int], list[int]]:
    """Per position: how many characters of ``alphabet`` run on immediately to its left, and to its right."""
    n = len(text)
    left, right = [0] * n, [0] * n
    for i in range(1, n):
        left[i] = left[i - 1] + 1 if text[i - 1] in alphabet else 0
    for i in range(n - 2, -1, -1):
        right[i] = right[i + 1] + 1 if text[i + 1] in alphabet else 0
    return left, right


def _covered(text: str, lexicon: Lexicon) -> set[int]:
    """Positions of ``text`` inside a label the lexicon already reads there."""
    return {i for m in lexicon.pattern.finditer(text) for i in range(m.start(), m.end())}


def label_repairs(line: TextLine, index: LabelIndex, chars: CharDict) -> dict[int, str]:
    """Character position -> the label's character, for the near-labels of ``line`` its frames allow (at most one
    change per label; overlapping candidates: the likelier, then the longer label)."""
    text = line.text
    if line.frame_probs is None or len(text) < MIN_LABEL:
        return {}
    covered = _covered(text, index.lexicon)
    left, right = _runs(text, index.alphabet)
    found: list[tuple[float, int, int, int, str]] = []  # (log ratio, length, start, position, character)
    for p, ch in enumerate(text):
        if p in covered or not _is_cjk(ch) or left[p] + right[p] + 1 < MIN_LABEL:
            continue
        for n in index.lengths:
            for k in range(max(0, n - 1 - right[p]), min(n - 1, left[p]) + 1):  # the window's other characters
                s = p - k                                                        # are all label characters
                for label, _ in index.masked.get(text[s:p] + _MASK + text[p + 1:s + n], ()):
                    ratio = _ratio(line, p, label[k], chars)
                    if ratio is not None and ratio >= -math.log(LEXICON_MAX_RATIO):
                        found.append((ratio, n, s, p, label[k]))
    found.extend(_strays(line, index, chars, covered, left, right))
    return _non_overlapping(found)


def _strays(line: TextLine, index: LabelIndex, chars: CharDict, covered: set[int], left: list[int],
            right: list[int]) -> list[tuple[float, int, int, int, str]]:
    """A character a speck put inside a label (生效日1期, 被保险人出生印日期): it becomes a blank, which the rules'
    compact text drops, when the label reads without it and the frames make that at most
    :data:`LEXICON_MAX_RATIO` times less probable. Found as (log ratio, window length, start, position, " ")."""
    text, out = line.text, []
    for q, ch in enumerate(text):
        if q in covered or ch.isspace() or left[q] == 0 or right[q] == 0 or left[q] + right[q] < MIN_LABEL:
            continue
        windows = [(k, m) for k in range(1, min(left[q], index.longest - 1) + 1)  # label characters before it
                   for m in range(max(1, MIN_LABEL - k), min(right[q], index.longest - k) + 1)  # and after it
                   if text[q - k:q] + text[q + 1:q + 1 + m] in index.whole]
        if not windows:
            continue
        ratio = _ratio(line, q, "", chars)  # the same deletion for every label it completes
        if ratio is not None and ratio >= -math.log(LEXICON_MAX_RATIO):
            out.extend((ratio, k + m + 1, q - k, q, " ") for k, m in windows)
    return out


def _ratio(line: TextLine, p: int, new: str, chars: CharDict) -> Optional[float]:
    """log P(frames | the character at ``p`` replaced) - log P(frames | as read), one character of context each side."""
    c0, c1 = max(0, p - 1), min(len(line.text) - 1, p + 1)
    segment = line.text[c0:p] + new + line.text[p + 1:c1 + 1]
    return segment_log_ratio(line, c0, c1, segment, chars)


def _non_overlapping(found: Iterable[tuple[float, int, int, int, str]]) -> dict[int, str]:
    taken: set[int] = set()
    out: dict[int, str] = {}
    for ratio, n, s, p, ch in sorted(found, key=lambda f: (-f[0], -f[1], f[2])):
        span = set(range(s, s + n))
        if span & taken:
            continue
        taken |= span
        out[p] = ch
    return out


def reread_labels(line: TextLine, index: LabelIndex, chars: CharDict) -> str:
    """``line.text`` with its near-labels read as labels (see :func:`label_repairs`); the same length."""
    repairs = label_repairs(line, index, chars)
    if not repairs:
        return line.text
    return "".join(repairs.get(i, ch) for i, ch in enumerate(line.text))
