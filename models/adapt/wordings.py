"""The label-like text that introduces a located value, and how it is placed relative to it.

Relations, tried in this order: ``same_line_prefix`` (``寄送地址：北京…`` in one line), ``right_of`` (the value's box
is right of the label's box on its row), ``below`` (the label's box is just above), ``table_header`` (above, in a
header row of several label boxes over a row of several values), ``row_label`` (the first box of the value's row,
for a person's fields: the role of a role table's row)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Collection, Optional, Sequence

from models.adapt.locate import Box, Located
from stages.extraction.rules.lexicon import ROLE_FIELDS, Lexicon
from stages.postprocess.values import compact

_SEPARATORS = ":：.…·_-—=|>~*()（）[]【】、,，;； \t\u3000"
_CONNECTORS = ("为", "是", "自")  # 被保险人为张三, 自2026年…: between a label and its value
_LABEL_RUN_RE = re.compile(r"[\u4e00-\u9fff]{2,12}$")
_NUMBERING_RE = re.compile(r"^(?:[0-9]{1,2}[.、)]|[一二三四五六七八九十]{1,2}[、.)]|\([0-9一二三四五六七八九十]{1,2}\))")
_ROLE_KEYS = frozenset(ROLE_FIELDS.values())
_GAP_RE = re.compile(r"\s{2,}")


@dataclass(frozen=True)
class Finding:
    """What one located value says: a label ``text`` by ``relation``; ``known`` when the lexicon already gives
    the field by that text (nothing to learn)."""

    text: str
    relation: str
    known: bool


def _trailing_label(prefix: str, whole_box: bool) -> Optional[str]:
    """The label at the end of ``prefix`` (the text before a value): a run of 2-12 Chinese characters after
    separators and connectors are stripped, standing at the start of its box or after a separator or a wide gap
    (a word inside a sentence is no label). ``whole_box``: the run must be all of ``prefix`` but numbering."""
    text = prefix.rstrip(_SEPARATORS)
    for c in _CONNECTORS:
        if text.endswith(c) and len(text) > len(c) + 1:
            text = text[: -len(c)].rstrip(_SEPARATORS)
    m = _LABEL_RUN_RE.search(text)
    if m is None:
        return None
    before = text[: m.start()]
    if before.endswith("("):
        return None  # an aside in brackets (大写 / 小写 before an amount's other form), not a label
    body = _NUMBERING_RE.sub("", compact(before))
    if whole_box and body:
        return None
    # inside a line, a label follows a separator and is followed by one (a word of a sentence is no label)
    between = prefix[len(text):]
    if body and not (before[-1:] in _SEPARATORS and any(ch in _SEPARATORS for ch in between)):
        return None
    return m.group()


def _same_row(a: Box, b: Box) -> bool:
    overlap = min(a.y1, b.y1) - max(a.y0, b.y0)
    return a.page == b.page and overlap >= 0.5 * min(a.height, b.height)


def _left_box(boxes: Sequence[Box], v: Box) -> Optional[Box]:
    """The nearest box to the left of ``v`` on its row."""
    left = [b for b in boxes if b is not v and _same_row(b, v) and b.x1 <= v.x0 + 0.5 * v.height]
    return max(left, key=lambda b: b.x1) if left else None


def _box_above(boxes: Sequence[Box], v: Box) -> Optional[Box]:
    """The nearest box above ``v`` within two line heights that overlaps its column."""
    above = [b for b in boxes if b is not v and b.page == v.page and b.y1 <= v.cy
             and v.y0 - b.y1 <= 2.0 * v.height and min(b.x1, v.x1) - max(b.x0, v.x0) > 0]
    return max(above, key=lambda b: b.y1) if above else None


def _header_row(boxes: Sequence[Box], header: Box, v: Box) -> bool:
    """``header`` stands in a row of several label boxes over a row of several boxes (a column table)."""
    heads = [b for b in boxes if _same_row(b, header) and _trailing_label(b.text, True)]
    return len(heads) >= 2 and sum(1 for b in boxes if _same_row(b, v)) >= 2


def findings(key: str, at: Located, boxes: Sequence[Box]) -> list[tuple[str, str]]:
    """Label-like texts around the value at ``at``, nearest relation first: ``(text, relation)``."""
    v = boxes[at.line]
    out: list[tuple[str, str]] = []
    prefix = v.text[: at.start]
    label = _trailing_label(prefix, False) if compact(prefix) else None
    if label:
        out.append((label, "same_line_prefix"))
    if compact(prefix).strip(_SEPARATORS):
        return out  # the value does not open its box: only its own line can introduce it
    left = _left_box(boxes, v)
    if left is not None:
        label = _trailing_label(left.text, False)
        if label:
            out.append((label, "right_of"))
    above = _box_above(boxes, v)
    if above is not None:
        label = _trailing_label(above.text, True)
        if label:
            out.append((label, "table_header" if _header_row(boxes, above, v) else "below"))
    if key in _ROLE_KEYS:
        row = sorted((b for b in boxes if _same_row(b, v)), key=lambda b: b.x0)
        if row and row[0] is not v and row[0] is not left:
            label = _trailing_label(row[0].text, True)
            if label:
                out.append((label, "row_label"))
    return out


def _subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(ch in it for ch in short)


def learn_from(key: str, at: Located, boxes: Sequence[Box], lexicon: Lexicon,
               values: Collection[str], own: str = "") -> Optional[Finding]:
    """The wording to learn for ``key`` from the value at ``at``, or what the lexicon already knows there.

    Walks the relations nearest first: a known label of the field ends the walk (``known``); a known attribute
    word or section title (``姓名`` over a role table's column) defers to the next relation; another field's
    label or a distractor ends it with nothing; an unknown text that is no value of the document (``values``,
    compact) is the wording, unless its characters all occur, in order, in ``own`` (the field's value, compact).
    ``None``: nothing label-like introduces the value."""
    for text, relation in findings(key, at, boxes):
        d = lexicon.labels.get(text)
        if d is None:
            for m in lexicon.pattern.finditer(text):
                h = lexicon.labels[m.group()]
                if h.kind in ("field", "period") and key in h.fields and m.end() == len(text):
                    return Finding(text, relation, True)  # a known label after a qualifier (保单签发日期)
            if any(text in v for v in values) or _subsequence(text, own):
                continue  # a value, part of one, or the field's value abbreviated (a company's short name)
            return Finding(text, relation, False)
        if d.kind in ("field", "period"):
            # the field's own label, or another field's: this place holds that field's value (a name printed twice)
            return Finding(text, relation, True) if key in d.fields else None
        if d.kind == "distractor":
            return None
    return None
