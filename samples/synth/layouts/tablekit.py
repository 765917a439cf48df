"""Ruled table rows: cells with wrapped, vertically centred text and grid lines."""
from __future__ import annotations

from dataclasses import dataclass

from samples.synth.canvas import Canvas, Color, Overflow, Seg, TextStyle


@dataclass(frozen=True)
class Cell:
    x0: float
    x1: float
    segs: tuple[Seg, ...]
    style: TextStyle
    align: str = "left"  # "left" | "center"
    fill: Color | None = None


def draw_row(canvas: Canvas, cells: list[Cell], y: float, pad: int, rule: Color, rule_width: int = 1,
             min_lines: int = 1) -> float:
    """Draw one row of cells starting at ``y``; returns the row's bottom y."""
    wrapped = [canvas.wrap(list(c.segs), c.style, c.x1 - c.x0 - 2 * pad) if c.segs else [] for c in cells]
    pitches = [int(round(c.style.size * 1.3)) for c in cells]
    height = max(max(len(w), min_lines) * p for w, p in zip(wrapped, pitches)) + 2 * pad
    if y + height > canvas.bottom:
        raise Overflow("table row past page bottom")
    for cell in cells:
        if cell.fill is not None:
            canvas.rect(cell.x0, y, cell.x1, y + height, fill=cell.fill)
    for cell, lines, pitch in zip(cells, wrapped, pitches):
        block = len(lines) * pitch
        ty = y + (height - block) / 2 + (pitch - cell.style.size) / 2
        for line in lines:
            if cell.align == "center":
                canvas.text((cell.x0 + cell.x1) / 2, ty, line, cell.style, align="center")
            else:
                canvas.text(cell.x0 + pad, ty, line, cell.style)
            ty += pitch
    for cell in cells:
        canvas.rule(cell.x0, y, cell.x0, y + height, rule, rule_width)
        canvas.rule(cell.x1, y, cell.x1, y + height, rule, rule_width)
    canvas.rule(cells[0].x0, y, cells[-1].x1, y, rule, rule_width)
    canvas.rule(cells[0].x0, y + height, cells[-1].x1, y + height, rule, rule_width)
    return y + height
