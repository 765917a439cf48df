"""Character boxes for a text line when the source gives only the line polygon (numpy only)."""
from __future__ import annotations

import numpy as np


def char_boxes_from_polygon(polygon: np.ndarray, n_chars: int) -> np.ndarray:
    """``(n_chars, 4)`` axis-aligned ``[x0, y0, x1, y1]`` boxes in page pixels: the line's bounding
    rectangle cut into equal parts along its longer side (top to bottom for tall, vertical lines)."""
    if n_chars <= 0:
        return np.zeros((0, 4), dtype=np.float32)
    pts = np.asarray(polygon, dtype=np.float64).reshape(-1, 2)
    x0, y0 = pts.min(axis=0)
    x1, y1 = pts.max(axis=0)
    vertical = (y1 - y0) > 1.5 * (x1 - x0) and n_chars > 1
    lo, hi = (y0, y1) if vertical else (x0, x1)
    edges = lo + np.linspace(0.0, 1.0, n_chars + 1) * (hi - lo)
    out = np.empty((n_chars, 4), dtype=np.float32)
    if vertical:
        out[:, 0], out[:, 2] = x0, x1
        out[:, 1], out[:, 3] = edges[:-1], edges[1:]
    else:
        out[:, 1], out[:, 3] = y0, y1
        out[:, 0], out[:, 2] = edges[:-1], edges[1:]
    return out


def quads_to_boxes(quads: np.ndarray) -> np.ndarray:
    """``(N, 4, 2)`` quadrilaterals -> ``(N, 4)`` enclosing ``[x0, y0, x1, y1]``."""
    q = np.asarray(quads, dtype=np.float32).reshape(-1, 4, 2)
    return np.concatenate([q.min(axis=1), q.max(axis=1)], axis=1)
