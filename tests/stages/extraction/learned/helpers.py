"""Small documents for the learned decision's tests: text lines laid out on a page, one box per line."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from stages.contracts.types import TextLine


def line(text: str, x: float, y: float, char_w: float = 20.0, h: float = 24.0, prob: float = 0.99) -> TextLine:
    w = char_w * len(text)
    poly = np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float32)
    u = tuple((i + 0.5) / len(text) for i in range(len(text)))
    return TextLine(text, prob, poly, (prob,) * len(text), u)


def tilted(ln: TextLine, angle: float) -> TextLine:
    """``ln`` with its polygon turned by ``angle`` (radians) about the page's origin, as a skewed scan prints it."""
    c, s = np.cos(angle), np.sin(angle)
    p = np.asarray(ln.polygon, np.float32)
    return replace(ln, polygon=np.stack([p[:, 0] * c - p[:, 1] * s, p[:, 0] * s + p[:, 1] * c], 1).astype(np.float32))

