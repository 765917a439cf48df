"""A page being drawn: text lines with per-character labels and boxes, rules and fills.

Every call to :meth:`Canvas.text` draws one line and records it as a :class:`PageLine` whose text
is what a perfect OCR would read, with one BIO label and one box per character (page pixels,
before any geometric degradation). The words of a field's label (``key`` runs) are tagged ``K-<field>``
(trailing colons, spaces and the linking ``为`` stay ``O``) so an extractor can learn which label a value answers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable

from PIL import Image, ImageDraw, ImageFont

from samples.synth.fonts import FontFace, face_font

Color = tuple[int, int, int]
Box = tuple[float, float, float, float]
Point = tuple[float, float]

# Drawn glyph -> character in the recorded text (ideographic space renders a wide gap, reads as a space).
_READ_AS = {"\u3000": " "}
_ASCII_RUN = re.compile(r"[0-9A-Za-z.,%¥￥\-/:*@_+#]+|.", re.S)
_NO_LINE_START = set("，。、；：！？）》」』”’%,.;:!?)")
_KEY_TAIL = set("：: \u3000为（(")


def key_extent(text: str) -> int:
    """Characters of a label run that carry its ``K-`` tag: all but a trailing colon, blank or ``为``."""
    end = len(text)
    while end > 0 and text[end - 1] in _KEY_TAIL:
        end -= 1
    return end


class Overflow(Exception):
    """Content does not fit on the page (the document is re-laid out more compactly)."""


@dataclass(frozen=True)
class Seg:
    """A run of text inside a line. ``field`` marks a field value; ``key`` marks the label words of that
    field; ``begin`` is False for the continuation of a value wrapped from the previous line; ``atomic``
    runs are never wrapped."""

    text: str
    field: str | None = None
    begin: bool = True
    atomic: bool = False
    color: Color | None = None
    bold: bool | None = None
    key: str | None = None


@dataclass(frozen=True)
class TextStyle:
    face: FontFace
    size: int
    bold: bool = False
    color: Color = (25, 25, 25)

    def with_(self, **changes: object) -> "TextStyle":
        return replace(self, **changes)  # type: ignore[arg-type]


@dataclass(frozen=True)
class PageLine:
    text: str
    labels: tuple[str, ...]
    char_boxes: tuple[Box, ...]
    polygon: tuple[Point, Point, Point, Point]


def segs_text(segs: list[Seg] | tuple[Seg, ...]) -> str:
    return "".join(s.text for s in segs)


class Canvas:
    """An RGB page. ``bottom`` is the lowest y that text may reach (:class:`Overflow` beyond it)."""

    def __init__(self, width: int, height: int, paper: Color, margin_x: int, margin_top: int, margin_bottom: int):
        self.width = width
        self.height = height
        self.image = Image.new("RGB", (width, height), paper)
        self.draw = ImageDraw.Draw(self.image)
        self.left = margin_x
        self.right = width - margin_x
        self.top = margin_top
        self.bottom = height - margin_bottom
        self.lines: list[PageLine] = []

    # -- measuring ---------------------------------------------------------------------------
    @staticmethod
    def _font(style: TextStyle, seg: Seg | None = None) -> tuple[ImageFont.FreeTypeFont, int]:
        bold = style.bold if seg is None or seg.bold is None else seg.bold
        return face_font(style.face, style.size, bold)

    def width_of(self, content: str | list[Seg] | tuple[Seg, ...], style: TextStyle) -> float:
        segs = [Seg(content)] if isinstance(content, str) else content
        total = 0.0
        for seg in segs:
            font, stroke = self._font(style, seg)
            total += font.getlength(seg.text) + (2 * stroke if seg.text else 0)
        return total

    @staticmethod
    def pitch(style: TextStyle, factor: float = 1.5) -> int:
        return int(round(style.size * factor))

    # -- drawing -----------------------------------------------------------------------------
    def text(self, x: float, top: float, segs: list[Seg] | tuple[Seg, ...] | str, style: TextStyle,
             align: str = "left") -> float:
        """Draw one line whose em box starts at ``top``; ``x`` is its left edge (or right edge /
        centre for ``align`` = ``right`` / ``center``). Returns the right edge."""
        segs = _strip([Seg(segs)] if isinstance(segs, str) else list(segs))
        if not segs:
            return x
        width = self.width_of(segs, style)
        if align == "right":
            x -= width
        elif align == "center":
            x -= width / 2
        x = float(round(x))
        if x < 1 or x + width > self.width - 1:
            raise Overflow(f"line too wide: {segs_text(segs)!r}")
        if top + style.size > self.bottom:
            raise Overflow("page full")
        baseline = round(top + 0.86 * style.size)
        chars: list[str] = []
        labels: list[str] = []
        lefts: list[float] = []
        rights: list[float] = []
        ink_top, ink_bottom = float("inf"), float("-inf")
        pen = x
        for seg in segs:
            font, stroke = self._font(style, seg)
            color = seg.color or style.color
            pen += stroke
            self.draw.text((pen, baseline), seg.text, font=font, fill=color, anchor="ls",
                           stroke_width=stroke, stroke_fill=color)
            bbox = self.draw.textbbox((pen, baseline), seg.text, font=font, anchor="ls", stroke_width=stroke)
            ink_top, ink_bottom = min(ink_top, bbox[1]), max(ink_bottom, bbox[3])
            key_end = key_extent(seg.text) if seg.key else 0
            for i, ch in enumerate(seg.text):
                lefts.append(pen + font.getlength(seg.text[:i]) - (stroke if i == 0 else 0))
                rights.append(pen + font.getlength(seg.text[: i + 1]) + (stroke if i == len(seg.text) - 1 else 0))
                chars.append(_READ_AS.get(ch, ch))
                if seg.field is None:
                    labels.append(f"K-{seg.key}" if i < key_end else "O")
                elif i == 0 and seg.begin:
                    labels.append(f"B-{seg.field}")
                else:
                    labels.append(f"I-{seg.field}")
            pen += font.getlength(seg.text) + stroke
        pad = max(1.0, 0.08 * style.size)
        y0, y1 = ink_top - pad, ink_bottom + pad
        boxes = tuple((lx, y0, rx, y1) for lx, rx in zip(lefts, rights))
        self.lines.append(PageLine(
            text="".join(chars), labels=tuple(labels), char_boxes=boxes,
            polygon=((x, y0), (pen, y0), (pen, y1), (x, y1)),
        ))
        return pen

    def rule(self, x0: float, y0: float, x1: float, y1: float, color: Color, width: int = 1) -> None:
        self.draw.line([(x0, y0), (x1, y1)], fill=color, width=width)

    def rect(self, x0: float, y0: float, x1: float, y1: float, outline: Color | None = None,
             fill: Color | None = None, width: int = 1) -> None:
        self.draw.rectangle([x0, y0, x1, y1], outline=outline, fill=fill, width=width)

    def dotted(self, x0: float, x1: float, y: float, color: Color, step: int = 4) -> None:
        for x in range(int(x0), int(x1), max(2, step)):
            self.draw.point((x, y), fill=color)

    # -- wrapping ----------------------------------------------------------------------------
    def wrap(self, segs: list[Seg] | tuple[Seg, ...], style: TextStyle, max_width: float) -> list[list[Seg]]:
        """Greedy line breaking. Atomic segments stay whole (unless wider than a line); other text
        breaks between CJK characters or ASCII runs; closing punctuation never starts a line."""
        tokens: list[tuple[int, Seg, bool]] = []  # (segment id, token, first token of its segment)
        for sid, seg in enumerate(segs):
            pieces = [seg.text] if seg.atomic else _ASCII_RUN.findall(seg.text)
            for k, piece in enumerate(pieces):
                tokens.append((sid, replace(seg, text=piece, begin=seg.begin and k == 0), k == 0))
        lines: list[list[tuple[int, Seg]]] = [[]]
        used = 0.0
        for sid, tok, _first in tokens:
            w = self.width_of([tok], style)
            current = lines[-1]
            if current and used + w > max_width and not (tok.text[:1] in _NO_LINE_START and tok.field is None):
                if tok.text.isspace():
                    continue
                lines.append([])
                used = 0.0
                current = lines[-1]
            if not current and tok.text.isspace():
                continue
            if not current and w > max_width and len(tok.text) > 1:
                for sub in _split_wide(tok, lambda t: self.width_of([t], style), max_width):
                    if lines[-1] and used + self.width_of([sub], style) > max_width:
                        lines.append([])
                        used = 0.0
                    lines[-1].append((sid, sub))
                    used += self.width_of([sub], style)
                continue
            current.append((sid, tok))
            used += w
        return [m for m in (_merge(line) for line in lines) if m]


def _split_wide(tok: Seg, measure: Callable[[Seg], float], max_width: float) -> list[Seg]:
    """Split an over-long token into pieces that fit, never breaking next to a space."""
    out: list[Seg] = []
    start = 0
    text = tok.text
    for end in range(1, len(text) + 1):
        piece = text[start:end]
        if measure(replace(tok, text=piece)) > max_width and end - 1 > start:
            cut = end - 1
            while cut > start + 1 and (text[cut - 1] == " " or text[cut] == " "):
                cut -= 1
            out.append(replace(tok, text=text[start:cut], begin=tok.begin and start == 0))
            start = cut
    out.append(replace(tok, text=text[start:], begin=tok.begin and start == 0))
    return out


def _merge(line: list[tuple[int, Seg]]) -> list[Seg]:
    merged: list[tuple[int, Seg]] = []
    for sid, tok in line:
        if merged and merged[-1][0] == sid:
            prev = merged[-1][1]
            merged[-1] = (sid, replace(prev, text=prev.text + tok.text))
        else:
            merged.append((sid, tok))
    return _strip([s for _, s in merged])


def _strip(segs: list[Seg]) -> list[Seg]:
    """Remove leading/trailing blanks of a line (only unlabelled blanks exist there)."""
    while segs and segs[0].text.strip() == "":
        segs = segs[1:]
    while segs and segs[-1].text.strip() == "":
        segs = segs[:-1]
    if segs and segs[0].text != segs[0].text.lstrip():
        segs[0] = replace(segs[0], text=segs[0].text.lstrip())
    if segs and segs[-1].text != segs[-1].text.rstrip():
        segs[-1] = replace(segs[-1], text=segs[-1].text.rstrip())
    return segs
