"""Data that crosses stage boundaries. Results are in pixels of the image the user gave; a page that was
rotated (or rectified) before detection carries a :class:`PageTransform` that maps back to them."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Optional, Union

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
class PageTransform:
    """How a normalized page image was made from the image the user gave.

    ``matrix`` (3x3) maps given-image pixels to normalized-image pixels (a rotation by ``rotation`` degrees
    clockwise, optionally composed with a perspective rectification); ``to_original`` maps points back.
    ``original_size`` is (width, height) of the given image."""

    matrix: np.ndarray
    original_size: tuple[int, int]
    rotation: int = 0  # degrees clockwise the given page was turned to read upright: 0, 90, 180 or 270
    perspective: bool = False  # the matrix includes a rectification (reported as ``transform``)

    @staticmethod
    def identity(width: int, height: int) -> "PageTransform":
        return PageTransform(np.eye(3), (int(width), int(height)))

    def then(self, matrix: np.ndarray, rotation: int = 0, perspective: bool = False) -> "PageTransform":
        """This transform followed by ``matrix`` (normalized pixels -> new normalized pixels)."""
        return PageTransform(
            np.asarray(matrix, np.float64) @ self.matrix, self.original_size,
            (self.rotation + rotation) % 360, self.perspective or perspective,
        )

    def to_normalized(self, pts: np.ndarray) -> np.ndarray:
        return _apply_h(self.matrix, pts)

    def to_original(self, pts: np.ndarray) -> np.ndarray:
        """Points (..., 2) in normalized-image pixels -> given-image pixels, clipped to the given image."""
        out = _apply_h(np.linalg.inv(self.matrix), pts)
        w, h = self.original_size
        out[..., 0] = np.clip(out[..., 0], 0, w - 1)
        out[..., 1] = np.clip(out[..., 1], 0, h - 1)
        return out

    @property
    def is_identity(self) -> bool:
        return bool(np.allclose(self.matrix, np.eye(3)))


def _apply_h(matrix: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.asarray(pts, np.float64)
    flat = p.reshape(-1, 2)
    homog = np.concatenate([flat, np.ones((len(flat), 1))], axis=1) @ np.asarray(matrix, np.float64).T
    out = homog[:, :2] / homog[:, 2:3]
    return out.reshape(p.shape).astype(np.float32)


# how a page was captured, as page normalization found it: a scan as given, a binarised fax, a photographed sheet
# (rectified from its outline). Recognition may read each capture with its own recognizer.
Capture = Literal["scan", "fax", "photo"]
CAPTURES: tuple[Capture, ...] = ("scan", "fax", "photo")


@dataclass(frozen=True)
class Page:
    """One decoded page: HxWx3 uint8 BGR. ``transform`` is set when ``image`` is a normalized (rotated or
    rectified) version of the page the user gave; detection and extraction then work in its pixels and the
    results are mapped back with ``transform.to_original``."""

    index: int
    image: np.ndarray
    source: str = ""
    transform: Optional[PageTransform] = None
    # a second rendering of the same pixels (same size and geometry), e.g. a fax resampled another way;
    # recognition reads each line from both and keeps the surer reading
    second_look: Optional[np.ndarray] = None
    capture: Capture = "scan"  # set by page normalization; faxes and photos may have their own recognizer

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
    check_text: Optional[str] = None  # the same frames read by the model's check head, when it has one


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
    # the line as the recognizer's check head reads it (stages/recognition/recognizer.py), None without one
    check_text: Optional[str] = None

    def frame_span(self, c0: int, c1: int) -> Optional[tuple[int, int]]:
        """The stored frames (``frame_probs`` rows) of characters ``c0..c1``: those strictly between the centres of
        the characters before and after them (the line's ends beyond the first and last). None without stored
        frames or character positions, or when the span holds no frame."""
        fp = self.frame_probs
        if fp is None or not self.text or len(self.char_u) != len(self.text):
            return None
        n = fp.probs.shape[0]

        def frame(ci: int) -> int:
            return int(min(n - 1, max(0, round(self.char_u[ci] * n - 0.5))))

        start = frame(c0 - 1) + 1 if c0 > 0 else 0
        end = frame(c1 + 1) if c1 + 1 < len(self.text) else n
        return (start, end) if end > start else None

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
