"""Text boxes: raw text -> NFKC text (with a map back) -> compact text (whitespace removed, with a map to NFKC),
deskewed extents, boxes split at wide gaps, labels wrapped inside a cell joined, and reading order.
"""
from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np

from stages.extraction.rules.records import OcrLineLike, SourceChar
from stages.layout import Extent, RowBox, deskew, reading_order, text_angle

MAX_SKEW = np.radians(15)  # a page whose text lies at a larger angle is read as it lies

PUNCT = set(":;,.!?()[]{}<>|/\\'\"`~@#$%^&*+=_-—–…·、。，；：！？（）【】《》「」『』〔〕")
LEADER_CHARS = ":.…·_-—=|>~*"
_NUMBER = r"[0-9]{1,2}[.、)]|[一二三四五六七八九十]{1,2}[、.)]|\([0-9一二三四五六七八九十]{1,2}\)"  # 1. 一、 (2)
NUMBERING_RE = re.compile(rf"^[【\[]?(?:{_NUMBER}|[•●■◆▪*-])")
UNKNOWN_LABEL_RE = re.compile(r"[\u4e00-\u9fff]{2,8}:")
UNKNOWN_LABEL_START_RE = re.compile(r"[\u4e00-\u9fff]{2,8}(?:\([\u4e00-\u9fff]{1,6}\))?(?::|[.…·_\-—]{3,})")
CJK_RE = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class LineBox(Extent):
    """One text box of the page: raw text, NFKC text (``norm``) and compact text (``comp``, whitespace removed), each
    with a map back, its extent in the page's deskewed frame, and where each raw character comes from (``origin``:
    the index of the input line and the character's index in that line's text)."""

    index: int
    page: int
    raw: str
    norm: str
    norm_to_raw: tuple[int, ...]
    comp: str
    comp_to_norm: tuple[int, ...]
    x0: float
    y0: float
    x1: float
    y1: float
    origin: tuple[SourceChar, ...] = ()


def points_of(line: OcrLineLike) -> np.ndarray:
    """A line's polygon as an (N, 2) float array."""
    return np.asarray(line.polygon, dtype=np.float64).reshape(-1, 2)


def page_skew(lines: Sequence[OcrLineLike]) -> float:
    """The text angle (radians) of one page's lines, the angle :func:`prepare_line` undoes (0 beyond ``MAX_SKEW``)."""
    return text_angle([points_of(ln) for ln in lines], MAX_SKEW)


def page_boxes(lines: Sequence[OcrLineLike], skew: Optional[float] = None) -> list[LineBox]:
    """One page's lines as boxes in its deskewed frame (``skew``, :func:`page_skew` where not given), each indexed
    by its place on the page."""
    angle = page_skew(lines) if skew is None else skew
    return [prepare_line(i, ln, angle) for i, ln in enumerate(lines)]


def normalized(raw: str) -> tuple[str, tuple[int, ...], str, tuple[int, ...]]:
    """``raw`` as NFKC text (character by character) with each character's index in ``raw``, and as compact text
    (whitespace removed) with each character's index in the NFKC text: a :class:`LineBox`'s ``norm``,
    ``norm_to_raw``, ``comp`` and ``comp_to_norm``."""
    norm_chars: list[str] = []
    norm_to_raw: list[int] = []
    for i, ch in enumerate(raw):
        for n in unicodedata.normalize("NFKC", ch):
            norm_chars.append(n)
            norm_to_raw.append(i)
    norm = "".join(norm_chars)
    comp_to_norm = tuple(i for i, ch in enumerate(norm) if not ch.isspace())
    return norm, tuple(norm_to_raw), "".join(norm[i] for i in comp_to_norm), comp_to_norm


def prepare_line(index: int, line: OcrLineLike, angle: float = 0.0) -> LineBox:
    """An input line as a :class:`LineBox`, its polygon rotated by ``-angle``."""
    raw = str(line.text)
    norm, norm_to_raw, comp, comp_to_norm = normalized(raw)
    pts = deskew(points_of(line), angle)
    return LineBox(index, int(getattr(line, "page", 0) or 0), raw, norm, norm_to_raw, comp, comp_to_norm,
                   float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max()),
                   tuple((index, i) for i in range(len(raw))))


_GAP_RE = re.compile(r"\s{2,}")


def split_at_gaps(line: LineBox) -> list[LineBox]:
    """An OCR line holding several boxes (``保险金额    保险费``: runs of 2+ spaces) as one box per part, each with the
    x range of its characters (spread evenly over the line)."""
    cuts = [m.span() for m in _GAP_RE.finditer(line.norm)]
    if not cuts or not line.comp:
        return [line]
    bounds, start = [], 0
    for a, b in cuts:
        bounds.append((start, a))
        start = b
    bounds.append((start, len(line.norm)))
    return [_slice(line, a, b) for a, b in bounds if line.norm[a:b].strip()]


# a run of digits and Latin letters (a policy number, an ID, a date) right before a label glued to it
_GLUED_VALUE_RE = re.compile(r"[0-9A-Za-z][0-9A-Za-z\-/.]{3,}$")


# a number or amount (a policy number, ¥1,579,000.00, 30万元) that opens a box, right before Chinese text
# (not a date: 2023年金福终身寿险 is a year before a product's 年金)
_LEADING_NUMBER_RE = re.compile(r"(?:(?:¥|RMB)?[0-9][0-9A-Za-z,.\-/]{3,}(?:万元|元|万)?|[0-9][0-9,.]*(?:万元|元))"
                                r"(?![年月日号])(?=[\u4e00-\u9fff])")
# ... when the rest of the box is a product name and nothing else
_PRODUCT_CELL_RE = re.compile(r"[\u4e00-\u9fff]{2,30}?(?:保险|险)(?:\([\u4e00-\u9fff0-9]{1,10}\))?(?:[A-Z]款)?")


def split_glued_label(line: LineBox, label_pattern: re.Pattern) -> list[LineBox]:
    """A box holding a number-like value with a known label glued after it and nothing but punctuation after the
    label (``84929094685751959签单时间``: two table cells the detector read as one) as two boxes, so the label
    is a label cell whose value is the next box; likewise a number or amount with a product name glued after it
    (``RMB1,579,000.00福寿安康终身重大疾病保险(2025版)``: the cells of two columns), so each is its column's value."""
    comp = line.comp
    for m in label_pattern.finditer(comp):
        if _GLUED_VALUE_RE.search(comp, 0, m.start()) and only_punctuation(comp[m.end():]):
            cut = line.comp_to_norm[m.start()]
            return [_slice(line, 0, cut), _slice(line, cut, len(line.norm))]
    number = _LEADING_NUMBER_RE.match(comp)
    if number is not None and _PRODUCT_CELL_RE.fullmatch(comp, number.end()) and not label_pattern.search(comp):
        cut = line.comp_to_norm[number.end()]
        return [_slice(line, 0, cut), _slice(line, cut, len(line.norm))]
    return [line]


def _slice(line: LineBox, a: int, b: int) -> LineBox:
    """NFKC span ``[a, b)`` of ``line`` as a box of its own, its x range in proportion to its characters."""
    n = len(line.norm)
    seg = line.norm[a:b]
    r0 = line.norm_to_raw[a]
    comp_to_norm = tuple(i - a for i in line.comp_to_norm if a <= i < b)
    x0 = line.x0 + (line.x1 - line.x0) * a / n
    x1 = line.x0 + (line.x1 - line.x0) * b / n
    r1 = line.norm_to_raw[b - 1] + 1
    return LineBox(line.index, line.page, line.raw[r0:r1], seg,
                   tuple(k - r0 for k in line.norm_to_raw[a:b]), "".join(seg[i] for i in comp_to_norm),
                   comp_to_norm, x0, line.y0, x1, line.y1, line.origin[r0:r1])


def raw_text(line: LineBox, n0: int, n1: int) -> str:
    """Raw characters behind NFKC span ``[n0, n1)``."""
    if n1 <= n0:
        return ""
    return line.raw[line.norm_to_raw[n0]: line.norm_to_raw[n1 - 1] + 1]


def raw_refs(line: LineBox, n0: int, n1: int) -> tuple[SourceChar, ...]:
    """Where the non-space raw characters behind NFKC span ``[n0, n1)`` come from, in order (one per non-space
    character of :func:`raw_text`)."""
    if n1 <= n0:
        return ()
    r0, r1 = line.norm_to_raw[n0], line.norm_to_raw[n1 - 1] + 1
    return tuple(line.origin[r] for r in range(r0, r1) if not line.raw[r].isspace())


def comp_pos(line: LineBox, norm_pos: int) -> int:
    """Compact position of the first non-space character at or after NFKC position ``norm_pos``."""
    return bisect.bisect_left(line.comp_to_norm, norm_pos)


def norm_pos(line: LineBox, comp_pos: int) -> int:
    """NFKC position of compact position ``comp_pos`` (the NFKC length at the end)."""
    return line.comp_to_norm[comp_pos] if comp_pos < len(line.comp) else len(line.norm)


def x_at(line: LineBox, comp_pos: int) -> float:
    """Approximate x of a character position (characters spread evenly over the box)."""
    n = max(len(line.comp), 1)
    return line.x0 + (line.x1 - line.x0) * min(max(comp_pos, 0), n) / n


def line_reading_order(lines: Sequence[LineBox]) -> list[int]:
    """Line indices page by page, row by row, left to right (:func:`stages.layout.reading_order`)."""
    return [lines[i].index for i in reading_order([RowBox(ln.page, ln.x0, ln.cy, ln.height) for ln in lines])]


def same_row(a: LineBox, b: LineBox) -> bool:
    """Two boxes of one page whose vertical extents overlap by at least half the smaller height."""
    if a.page != b.page:
        return False
    overlap = min(a.y1, b.y1) - max(a.y0, b.y0)
    return overlap >= 0.5 * min(a.height, b.height)


_LIST_ITEM_RE = re.compile(rf"(?:{_NUMBER})[\u4e00-\u9fff]")


def is_list_item(comp: str) -> bool:
    """A numbered clause (``2.本保险合同…``, ``一、…``, ``(3)…``): never the value of a label beside or above it."""
    return _LIST_ITEM_RE.match(comp) is not None


def after_leader(text: str, pos: int, end: Optional[int] = None) -> int:
    """The position after the run of leader characters (LEADER_CHARS) that starts at ``pos`` (before ``end``)."""
    end = len(text) if end is None else end
    while pos < end and text[pos] in LEADER_CHARS:
        pos += 1
    return pos


def only_punctuation(text: str) -> bool:
    """Nothing but punctuation or leader characters (possibly nothing)."""
    return all(ch in PUNCT or ch in LEADER_CHARS for ch in text)


def content_start(comp: str) -> int:
    """Compact position after list numbering (``1.``, ``一、``, ``(2)``, bullets)."""
    m = NUMBERING_RE.match(comp)
    return m.end() if m else 0


def _label_tail(head: LineBox, lines: Sequence[LineBox], labels: re.Pattern) -> Optional[LineBox]:
    """A short line right under ``head`` that completes a label wrapped inside a table cell (``投保人通讯地`` / ``址``)."""
    h = head.height
    for b in lines:
        aligned = min(abs(b.x0 - head.x0), abs(b.x0 + b.x1 - head.x0 - head.x1) / 2) <= 0.3 * h  # left or centred
        if (b is head or b.page != head.page or not 0 < len(b.comp) <= 3 or len(head.comp) < 4 or not aligned
                or not -0.2 * h <= b.y0 - head.y1 <= 0.4 * h):
            continue
        joined = head.comp + b.comp
        if any(m.start() < len(head.comp) < m.end() and not joined[m.end():].strip(LEADER_CHARS)
               for m in labels.finditer(joined)):
            return b
    return None


def _spaced_tail(head: LineBox, lines: Sequence[LineBox], labels: re.Pattern) -> Optional[LineBox]:
    """The second half of a letter-spaced label (``保    额``, ``姓   名``) that the detector read as two boxes: a box
    of one or two characters just right of ``head`` (one or two characters) on its row, the two together a label."""
    h = head.height
    if not 0 < len(head.comp) <= 2 or not CJK_RE.match(head.comp):
        return None
    for b in lines:
        if (b is head or b.page != head.page or not 0 < len(b.comp.rstrip(LEADER_CHARS)) <= 2
                or not -0.5 * h <= b.x0 - head.x1 <= 3 * h or abs(b.cy - head.cy) > 0.3 * h):
            continue
        joined = (head.comp + b.comp).rstrip(LEADER_CHARS)
        if labels.fullmatch(joined):
            return b
    return None


def merge_wrapped_labels(lines: list[LineBox], labels: re.Pattern) -> tuple[list[LineBox], set[int]]:
    """Join each wrapped label tail, and each second half of a letter-spaced label (a label of the ``labels`` pattern),
    to its head line; returns the lines (heads replaced) and the absorbed indices."""
    out = list(lines)
    dead: set[int] = set()
    for head in lines:
        if head.index in dead:
            continue
        live = [ln for ln in lines if ln.index not in dead]
        tail = _label_tail(head, live, labels) or _spaced_tail(head, live, labels)
        if tail is None:
            continue
        dead.add(tail.index)
        out[head.index] = LineBox(
            head.index, head.page, head.raw + tail.raw, head.norm + tail.norm,
            head.norm_to_raw + tuple(len(head.raw) + k for k in tail.norm_to_raw),
            head.comp + tail.comp, head.comp_to_norm + tuple(len(head.norm) + k for k in tail.comp_to_norm),
            min(head.x0, tail.x0), min(head.y0, tail.y0), max(head.x1, tail.x1), max(head.y1, tail.y1),
            head.origin + tail.origin)
    return out, dead


Segments = tuple[tuple[int, int, int], ...]  # a value spread over compact spans (line, start, end)


def wraps_onto(line: LineBox, live: Sequence[LineBox], right_edge: Mapping[int, float],
               joiners: bool) -> Optional[LineBox]:
    """The line that ``line`` wraps onto: just below, about the same x, and either ``line`` ends in a joiner (``至``,
    ``-``, ``:``; when ``joiners``) or the next line's first phrase would not have fitted after its end (``right_edge``:
    the right end of the text per page)."""
    joiner = joiners and line.comp.endswith(("至", "-", "~", "到", "—", "起", ":"))
    if not joiner and len(line.comp) < 16:
        return None
    # about the same x; a paragraph's first line may be indented (two characters, 首行缩进) past the next one
    below = [ln for ln in live if ln.page == line.page and ln.y0 >= line.cy
             and ln.y0 - line.y1 <= 1.0 * line.height and -3 * line.height <= ln.x0 - line.x0 <= 2 * line.height]
    if not below:
        return None
    nxt = min(below, key=lambda ln: ln.y0)
    if joiner:
        return nxt
    # wrapped: the next line's first phrase would not have fitted after this line's end, with a character to spare
    # (a ragged right edge: a line breaks before a character that would just have fitted, e.g. ``804`` / ``室，``)
    char_w = max((line.x1 - line.x0) / len(line.comp), 0.8 * line.height)
    first = re.split(r"[,;。、!?]", nxt.comp, maxsplit=1)[0] or nxt.comp
    fits = line.x1 + (min(len(first), 40) + 1) * char_w <= right_edge[line.page]
    return None if fits else nxt
