"""DBNet post-processing: probability map -> text quadrilaterals; detector input resizing; reading order.

Coordinates follow OpenCV's pixel-centre convention (pixel ``(x, y)`` is the point ``(x, y)``).
"""
from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import cv2
import numpy as np
import pyclipper

from stages.contracts.types import ResizeTransform
from stages.layout import RowBox, deskew, reading_order, text_angle

logger = logging.getLogger(__name__)

__all__ = [
    "db_decode",
    "order_points_clockwise",
    "resize_for_detection",
    "sort_reading_order",
    "unclip",
]

_CLIPPER_SCALE = 16.0  # pyclipper works on integers: offset at 1/16 pixel precision
MAX_SKEW = np.pi / 8  # text at a larger angle is not treated as skew (rows are then formed as they lie)


def order_points_clockwise(pts: np.ndarray) -> np.ndarray:
    """Four corners as (top-left, top-right, bottom-right, bottom-left), float32 (4, 2).

    The corners are put in clockwise cyclic order (image coordinates, y down) by their angle around the
    centroid; the start is the corner whose outgoing edge points most nearly in the +x direction, i.e. the
    edge whose outward normal points most upward. This depends on the rotation only (not on the aspect
    ratio), so it is stable for near-axis-aligned boxes and for any box rotated by less than 45 degrees.
    """
    p = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    if p.shape != (4, 2):
        raise ValueError(f"expected 4 points, got shape {np.asarray(pts).shape}")
    center = p.mean(axis=0)
    ang = np.arctan2(p[:, 1] - center[1], p[:, 0] - center[0])
    cyc = p[np.argsort(ang, kind="stable")]
    edges = np.roll(cyc, -1, axis=0) - cyc
    lengths = np.hypot(edges[:, 0], edges[:, 1])
    cos_x = np.divide(edges[:, 0], lengths, out=np.zeros(4), where=lengths > 0)
    start = int(np.argmax(cos_x))
    return np.roll(cyc, -start, axis=0).astype(np.float32)


def unclip(box: np.ndarray, unclip_ratio: float) -> list[np.ndarray]:
    """Offset a polygon outward by ``area * unclip_ratio / perimeter`` (round joins), as DBNet does."""
    poly = np.asarray(box, dtype=np.float64).reshape(-1, 2)
    area = abs(float(cv2.contourArea(poly.astype(np.float32))))
    perimeter = float(cv2.arcLength(poly.astype(np.float32), True))
    if perimeter <= 0.0:
        return []
    distance = area * unclip_ratio / perimeter
    offset = pyclipper.PyclipperOffset()
    offset.ArcTolerance = 0.25 * _CLIPPER_SCALE
    offset.AddPath(np.round(poly * _CLIPPER_SCALE).astype(np.int64).tolist(), pyclipper.JT_ROUND,
                   pyclipper.ET_CLOSEDPOLYGON)
    paths = offset.Execute(distance * _CLIPPER_SCALE)
    return [np.asarray(path, dtype=np.float64) / _CLIPPER_SCALE for path in paths]


def _box_score_fast(prob: np.ndarray, box: np.ndarray) -> float:
    """Mean probability inside the polygon ``box`` (filled mask over its bounding rectangle)."""
    h, w = prob.shape
    xmin = int(np.clip(np.floor(box[:, 0].min()), 0, w - 1))
    xmax = int(np.clip(np.ceil(box[:, 0].max()), 0, w - 1))
    ymin = int(np.clip(np.floor(box[:, 1].min()), 0, h - 1))
    ymax = int(np.clip(np.ceil(box[:, 1].max()), 0, h - 1))
    mask = np.zeros((ymax - ymin + 1, xmax - xmin + 1), dtype=np.uint8)
    shifted = box - np.array([xmin, ymin], dtype=box.dtype)
    cv2.fillPoly(mask, [np.round(shifted).astype(np.int32)], 1)
    return float(cv2.mean(prob[ymin:ymax + 1, xmin:xmax + 1], mask)[0])


def _min_area_box(points: np.ndarray) -> tuple[np.ndarray, float]:
    rect = cv2.minAreaRect(np.asarray(points, dtype=np.float32).reshape(-1, 1, 2))
    return cv2.boxPoints(rect), float(min(rect[1]))


def db_decode(
    prob: np.ndarray,
    *,
    thresh: float = 0.3,
    box_thresh: float = 0.6,
    unclip_ratio: float = 1.5,
    max_candidates: int = 1000,
    min_size: float = 3.0,
) -> list[tuple[np.ndarray, float]]:
    """Text boxes from a DBNet probability map (H, W), in map pixels.

    Binarize at ``thresh``, take every contour of the bitmap (``RETR_LIST``: region boundaries and hole
    boundaries, as the reference DB post-processing does; up to ``max_candidates``), fit a minimum-area rectangle (dropped if its short side < ``min_size``), score it
    by the mean probability inside (dropped if < ``box_thresh``), expand it with :func:`unclip`, fit a
    rectangle again (dropped if its short side < ``min_size + 2``), order its corners clockwise from top
    left and clip them to the map. Returns ``[(quad float32 (4, 2), score), ...]`` in contour order.
    """
    prob = np.asarray(prob)
    if prob.ndim != 2:
        raise ValueError(f"prob must be 2-D (H, W), got shape {prob.shape}")
    prob = prob.astype(np.float32, copy=False)
    h, w = prob.shape
    if h == 0 or w == 0:
        return []
    bitmap = (prob > thresh).astype(np.uint8)
    contours, _ = cv2.findContours(bitmap, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    if len(contours) > max_candidates:
        logger.debug("db_decode: %d contours, keeping the first %d", len(contours), max_candidates)
    out: list[tuple[np.ndarray, float]] = []
    for contour in contours[:max_candidates]:
        box, short = _min_area_box(contour)
        if short < min_size:
            continue
        score = _box_score_fast(prob, box)
        if score < box_thresh:
            continue
        expanded = unclip(box, unclip_ratio)
        if len(expanded) != 1:  # a rectangle offset outward is one polygon; anything else is degenerate
            continue
        box, short = _min_area_box(expanded[0])
        if short < min_size + 2:
            continue
        quad = order_points_clockwise(box)
        quad[:, 0] = np.clip(quad[:, 0], 0, w - 1)
        quad[:, 1] = np.clip(quad[:, 1], 0, h - 1)
        out.append((quad, score))
    return out


def sort_reading_order(quads: Sequence[np.ndarray], line_overlap: float = 0.5) -> list[int]:
    """Indices of ``quads`` in reading order: lines top to bottom, boxes left to right within a line.

    Rows are formed by :func:`stages.layout.reading_order` from each quad's vertical centre, left edge and text
    height (the mean length of its left and right edges, so rotation does not inflate it).

    A skewed scan is sorted in its own frame: the page's text angle (:func:`stages.layout.text_angle`, up to
    :data:`MAX_SKEW`) is undone before rows are formed, so the cells of one table row stay one row at a few degrees
    of skew.
    """
    n = len(quads)
    if n == 0:
        return []
    q = np.asarray([np.asarray(x, dtype=np.float64).reshape(4, 2) for x in quads])
    angle = text_angle(q, MAX_SKEW)
    if abs(angle) > 1e-3:
        q = deskew(q.reshape(-1, 2), angle).reshape(-1, 4, 2)
    cy = q[:, :, 1].mean(axis=1)
    left_x = q[:, :, 0].min(axis=1)
    heights = 0.5 * (np.linalg.norm(q[:, 3] - q[:, 0], axis=1) + np.linalg.norm(q[:, 2] - q[:, 1], axis=1))
    return reading_order([RowBox(0, float(x), float(y), float(h)) for x, y, h in zip(left_x, cy, heights)],
                         line_overlap)


def resize_for_detection(
    image: np.ndarray, limit_side_len: int = 960, max_upscale: float = 1.0
) -> tuple[np.ndarray, ResizeTransform]:
    """Resize so the long side is at most ``limit_side_len`` (upscaling by at most ``max_upscale``), each
    side then a multiple of 32 (at least 32): rounded to the nearest, or down when rounding up would pass
    ``limit_side_len``. Returns the resized image and the transform back to the input's pixels."""
    img = np.asarray(image)
    if img.ndim < 2 or img.shape[0] == 0 or img.shape[1] == 0:
        raise ValueError(f"expected a non-empty HxW[xC] image, got shape {img.shape}")
    if limit_side_len < 32:
        raise ValueError(f"limit_side_len must be >= 32, got {limit_side_len}")
    h, w = int(img.shape[0]), int(img.shape[1])
    scale = min(limit_side_len / max(h, w), max_upscale)

    def side(n: int) -> int:
        target = n * scale
        out = max(32, int(round(target / 32.0)) * 32)
        if out > limit_side_len:
            out = max(32, int(math.floor(target / 32.0)) * 32)
        return out

    new_h, new_w = side(h), side(w)
    if (new_h, new_w) == (h, w):
        resized = img
    else:
        resized = cv2.resize(img, (new_w, new_h), interpolation=cv2.INTER_LINEAR)
    return resized, ResizeTransform(scale_x=new_w / w, scale_y=new_h / h)
