"""Page geometry shared by detection and extraction: the text angle of a page (skew), deskewing, and reading order.

Coordinates are page pixels, y down; a quadrilateral is (4, 2) with its corners clockwise from the top left.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Extent", "RowBox", "deskew", "reading_order", "text_angle"]


def text_angle(quads: Sequence[np.ndarray], max_angle: float) -> float:
    """Dominant text angle (radians) of a page from its line quadrilaterals.

    The length-weighted median of the mean angle of the top and bottom edges, over lines at least twice as wide as
    tall; 0 when no line qualifies or when the angle is not below ``max_angle`` (radians; the caller's limit of what
    it treats as skew rather than a rotated page or noise).
    """
    angles: list[float] = []
    weights: list[float] = []
    for quad in quads:
        p = np.asarray(quad, dtype=np.float64)
        if p.shape != (4, 2):
            continue
        top, bottom = p[1] - p[0], p[2] - p[3]
        width, height = float(np.hypot(*top)), float(np.hypot(*(p[3] - p[0])))
        if width <= 0 or width < 2 * height:
            continue
        angles.append((np.arctan2(top[1], top[0]) + np.arctan2(bottom[1], bottom[0])) / 2)
        weights.append(width)
    if not angles:
        return 0.0
    order = np.argsort(angles)
    cum = np.cumsum(np.asarray(weights)[order])
    angle = float(np.asarray(angles)[order][int(np.searchsorted(cum, cum[-1] / 2))])
    return angle if abs(angle) < max_angle else 0.0


class Extent:
    """Base of a frozen dataclass with an axis-aligned extent ``x0, y0, x1, y1`` (y down): its height (at least one
    pixel) and vertical centre, as reading order and the label geometry use them."""

    y0: float
    y1: float

    @property
    def height(self) -> float:
        return max(self.y1 - self.y0, 1.0)

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2


def deskew(points: np.ndarray, angle: float) -> np.ndarray:
    """Points (N, 2) rotated by ``-angle`` about the origin, so that text at ``angle`` runs horizontally."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    if angle == 0.0:
        return pts
    c, s = np.cos(angle), np.sin(angle)
    return np.stack([pts[:, 0] * c + pts[:, 1] * s, -pts[:, 0] * s + pts[:, 1] * c], axis=1)


@dataclass(frozen=True)
class RowBox:
    """What reading order needs of a box (in a deskewed frame): its page, left edge, vertical centre and height."""

    page: int
    x0: float
    cy: float
    height: float


def reading_order(boxes: Sequence[RowBox], line_overlap: float = 0.5) -> list[int]:
    """Indices of ``boxes`` in reading order: page by page, rows top to bottom, boxes left to right in a row.

    Boxes are visited by vertical centre (then left edge); a box joins the current row when its centre is within
    ``line_overlap`` times the smaller of (its height, the row's mean height) of the row's mean centre.
    """
    out: list[int] = []
    for page in sorted({b.page for b in boxes}):
        members = [i for i, b in enumerate(boxes) if b.page == page]
        cy = np.asarray([boxes[i].cy for i in members], dtype=np.float64)
        x0 = np.asarray([boxes[i].x0 for i in members], dtype=np.float64)
        heights = np.maximum(np.asarray([boxes[i].height for i in members], dtype=np.float64), 1e-6)
        rows: list[list[int]] = []
        row_cy: list[float] = []
        row_h: list[float] = []
        for i in np.lexsort((x0, cy)).tolist():
            if rows and abs(cy[i] - row_cy[-1]) <= line_overlap * min(heights[i], row_h[-1]):
                rows[-1].append(i)
                row_cy[-1] = float(cy[rows[-1]].mean())
                row_h[-1] = float(heights[rows[-1]].mean())
                continue
            rows.append([i])
            row_cy.append(float(cy[i]))
            row_h.append(float(heights[i]))
        for k in sorted(range(len(rows)), key=lambda k: row_cy[k]):
            out.extend(members[i] for i in sorted(rows[k], key=lambda j: x0[j]))
    return out
