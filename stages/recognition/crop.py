"""Perspective crops of detected quadrilaterals, and resizing into fixed width buckets."""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True)
class Crop:
    image: np.ndarray  # rectified text line, reading direction left -> right
    vertical: bool  # the quad was taller than wide and was rotated to read


def crop_quad(page: np.ndarray, quad: np.ndarray, vertical_ratio: float = 1.5) -> Crop:
    """Rectify a quadrilateral (clockwise from top-left, page pixels) into an upright crop."""
    q = np.asarray(quad, np.float32)
    w = int(round(max(np.linalg.norm(q[0] - q[1]), np.linalg.norm(q[2] - q[3]))))
    h = int(round(max(np.linalg.norm(q[0] - q[3]), np.linalg.norm(q[1] - q[2]))))
    w, h = max(w, 1), max(h, 1)
    dst = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    m = cv2.getPerspectiveTransform(q, dst)
    img = cv2.warpPerspective(page, m, (w, h), borderMode=cv2.BORDER_REPLICATE, flags=cv2.INTER_CUBIC)
    if h >= vertical_ratio * w:
        # a tall box: read top to bottom, so turn it to run left to right
        return Crop(np.ascontiguousarray(np.rot90(img, k=-1)), True)
    return Crop(img, False)


def pick_bucket(width: int, buckets: tuple[int, ...]) -> int:
    for b in buckets:
        if width <= b:
            return b
    return buckets[-1]


def target_width(img: np.ndarray, height: int) -> int:
    """Width of ``img`` resized to ``height`` with its aspect kept (at least 1)."""
    h, w = img.shape[:2]
    return max(1, int(np.ceil(height * w / max(h, 1))))


def resize_to_bucket(img: np.ndarray, height: int, buckets: tuple[int, ...]) -> tuple[np.ndarray, int, int]:
    """Resize to ``height`` keeping the aspect, pad right to the smallest bucket that fits (squash into the
    largest if none does). Returns (3xHxB float32 normalized to [-1, 1], used width, bucket)."""
    bucket = pick_bucket(target_width(img, height), buckets)
    x = resize_to_height(img, height, bucket)
    used = x.shape[2]
    out = np.zeros((3, height, bucket), np.float32)
    out[:, :, :used] = x
    return out, used, bucket


def resize_to_height(img: np.ndarray, height: int, max_width: int) -> np.ndarray:
    """Resize to ``height`` keeping the aspect (squeezed to ``max_width`` if wider): 3xHxW float32 in [-1, 1]."""
    target_w = min(target_width(img, height), max_width)
    resized = cv2.resize(img, (target_w, height), interpolation=cv2.INTER_LINEAR)
    return (resized.astype(np.float32).transpose(2, 0, 1) / 127.5) - 1.0
