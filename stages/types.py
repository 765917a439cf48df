"""Data that crosses stage boundaries. All coordinates are original page pixels."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np


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
    char_frames: tuple[int, ...] = ()
    num_frames: int = 0
    crop_width: int = 0  # width of the rectified crop before resizing (pixels)
    frame_probs: Optional[FrameProbs] = field(default=None, repr=False)


@dataclass(frozen=True)
class StageError:
    """A per-item failure that travels with the item instead of being raised."""

    stage: str
    type: str
    message: str

    def as_dict(self) -> dict:
        return {"stage": self.stage, "type": self.type, "message": self.message}
