"""Data that crosses stage boundaries. All coordinates are original page pixels."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

import numpy as np

#: What a user may hand the pipeline: a path, the file's bytes, or an HxWx3 BGR array.
Source = Union[str, Path, bytes, bytearray, memoryview, np.ndarray]


def source_name(source: Source, index: int) -> str:
    """The ``source`` name of a result: the path as given, else a placeholder naming the input's position."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return f"<bytes #{index}>"
    return f"<array #{index}>"



@dataclass(frozen=True)
class Page:
    """One decoded page: HxWx3 uint8 BGR."""

    index: int
    image: np.ndarray
    source: str = ""

    @property
    def width(self) -> int:
        return int(self.image.shape[1])

    @property
    def height(self) -> int:
        return int(self.image.shape[0])


@dataclass(frozen=True)
class ResizeTransform:
    """Maps network-input coordinates back to original page pixels: x_page = x_net / scale_x."""

    scale_x: float
    scale_y: float

    def to_page(self, pts: np.ndarray) -> np.ndarray:
        out = np.asarray(pts, dtype=np.float32).copy()
        out[..., 0] /= self.scale_x
        out[..., 1] /= self.scale_y
        return out


@dataclass(frozen=True)
class TextBox:
    """A detected text region: quadrilateral (4x2, clockwise from top-left) in page pixels."""

    polygon: np.ndarray
    score: float


@dataclass(frozen=True)
class FrameProbs:
    """A column subset of a line's CTC softmax, kept for constrained re-decoding.

    ``probs[t, j]`` is the probability of class ``columns[j]`` at frame ``t``; column 0 is always the blank.
    """

    columns: np.ndarray  # (C',) int32, columns[0] == 0 (blank)
    probs: np.ndarray  # (T, C') float32


@dataclass(frozen=True)
class Recognized:
    """What the recognizer read from one crop."""

    text: str
    score: float
    char_probs: tuple[float, ...]
    char_frames: tuple[int, ...]  # frame index of each character (for character boxes)
    num_frames: int
    frame_probs: Optional[FrameProbs] = None


@dataclass(frozen=True)
class TextLine:
    """A recognized line on a page."""

    text: str
    score: float
    polygon: np.ndarray  # (4, 2) page pixels
    char_probs: tuple[float, ...] = ()
    # centre of each character as a fraction (0..1) along the reading direction of the polygon:
    # top edge p0->p1 for horizontal lines, p0->p3 (top to bottom) for vertical ones
    char_u: tuple[float, ...] = ()
    vertical: bool = False
    frame_probs: Optional[FrameProbs] = field(default=None, repr=False)

    def char_boxes(self) -> np.ndarray:
        """Approximate per-character quadrilaterals (N, 4, 2) in page pixels, from ``char_u``."""
        n = len(self.char_u)
        if n == 0:
            return np.zeros((0, 4, 2), np.float32)
        p = np.asarray(self.polygon, np.float32)
        u = np.asarray(self.char_u, np.float32)
        # half-width of a character: half the spacing to neighbours, bounded
        gaps = np.diff(u) if n > 1 else np.array([min(1.0, 1.0 / max(n, 1))], np.float32)
        half = np.empty(n, np.float32)
        half[:] = np.median(gaps) / 2 if n > 1 else 0.5
        lo = np.clip(u - half, 0, 1)[:, None]
        hi = np.clip(u + half, 0, 1)[:, None]
        if self.vertical:
            a0, a1, b0, b1 = p[0], p[3], p[1], p[2]  # left edge top->bottom, right edge top->bottom
            tl, bl = a0 + lo * (a1 - a0), a0 + hi * (a1 - a0)
            tr, br = b0 + lo * (b1 - b0), b0 + hi * (b1 - b0)
        else:
            a0, a1, b0, b1 = p[0], p[1], p[3], p[2]  # top edge left->right, bottom edge left->right
            tl, tr = a0 + lo * (a1 - a0), a0 + hi * (a1 - a0)
            bl, br = b0 + lo * (b1 - b0), b0 + hi * (b1 - b0)
        return np.stack([tl, tr, br, bl], axis=1).astype(np.float32)


@dataclass(frozen=True)
class StageError:
    """A per-item failure that travels with the item instead of being raised."""

    stage: str
    type: str
    message: str

    def as_dict(self) -> dict:
        return {"stage": self.stage, "type": self.type, "message": self.message}
