"""Scan/photo degradations. Geometric ones (rotation, perspective) are one homography applied to
the page image and to every line polygon and character box; photometric ones change pixels only."""
from __future__ import annotations

import random
from dataclasses import dataclass

import cv2
import numpy as np

from samples.synth.canvas import PageLine
from samples.synth.rand import chance
from samples.synth.splits import SplitPolicy


@dataclass(frozen=True)
class Degradations:
    rotate_deg: float | None
    perspective: float | None  # max corner shift as a share of the page side
    illumination: float | None  # gradient strength
    stains: int
    crease: bool  # held out of train/dev
    lowres: float | None  # down-sampling factor before scaling back up
    blur_sigma: float | None
    noise_sigma: float | None
    binarize: bool  # held out of train/dev
    jpeg_quality: int
    border: tuple[int, int, int]  # BGR fill outside the warped page

    def names(self, seal: bool) -> list[str]:
        """Readable list for the ground truth, e.g. ``["rotate:-1.25", "blur:0.8", "jpeg:75"]``."""
        out: list[str] = []
        if self.rotate_deg is not None:
            out.append(f"rotate:{self.rotate_deg:.2f}")
        if self.perspective is not None:
            out.append(f"perspective:{self.perspective:.3f}")
        if self.illumination is not None:
            out.append(f"illumination:{self.illumination:.2f}")
        if seal:
            out.append("seal")
        if self.stains:
            out.append(f"stain:{self.stains}")
        if self.crease:
            out.append("crease")
        if self.binarize:
            out.append("binarize")
        if self.lowres is not None:
            out.append(f"lowres:{self.lowres:.2f}")
        if self.blur_sigma is not None:
            out.append(f"blur:{self.blur_sigma:.2f}")
        if self.noise_sigma is not None:
            out.append(f"noise:{self.noise_sigma:.1f}")
        out.append(f"jpeg:{self.jpeg_quality}")
        return out


def choose(rng: random.Random, policy: SplitPolicy) -> Degradations:
    clean = chance(rng, 0.1)

    def maybe(p: float) -> bool:
        return not clean and chance(rng, p)

    held = policy.held_out_degradation_p
    return Degradations(
        rotate_deg=rng.uniform(-3.0, 3.0) if maybe(0.7) else None,
        perspective=rng.uniform(0.004, 0.02) if maybe(0.4) else None,
        illumination=rng.uniform(0.08, 0.3) if maybe(0.5) else None,
        stains=rng.choice((1, 1, 2)) if maybe(0.15) else 0,
        crease=maybe(held),
        lowres=rng.uniform(0.6, 0.9) if maybe(0.35) else None,
        blur_sigma=rng.uniform(0.4, 1.1) if maybe(0.4) else None,
        noise_sigma=rng.uniform(2.0, 8.0) if maybe(0.5) else None,
        binarize=maybe(held * 0.5),
        jpeg_quality=rng.randint(50, 95),
        border=rng.choice(((255, 255, 255), (235, 235, 235), (200, 200, 200), (60, 60, 60))),
    )


# -- geometry ------------------------------------------------------------------------------------

def _line_points(lines: list[PageLine]) -> np.ndarray:
    pts: list[tuple[float, float]] = []
    for line in lines:
        pts.extend(line.polygon)
        for x0, y0, x1, y1 in line.char_boxes:
            pts.extend(((x0, y0), (x1, y0), (x1, y1), (x0, y1)))
    return np.asarray(pts, dtype=np.float64).reshape(-1, 2)


def _apply(matrix: np.ndarray, pts: np.ndarray) -> np.ndarray:
    if len(pts) == 0:
        return pts
    return cv2.perspectiveTransform(pts.reshape(-1, 1, 2), matrix).reshape(-1, 2)


def homography(width: int, height: int, deg: Degradations, rng: random.Random, lines: list[PageLine]) -> np.ndarray:
    """Rotation about the centre and corner jitter, shrunk about the centre until all text stays
    at least 2 px inside the image."""
    w, h = float(width), float(height)
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float32)
    dst = src.copy()
    if deg.perspective is not None:
        jitter = np.array([[rng.uniform(-1, 1), rng.uniform(-1, 1)] for _ in range(4)], dtype=np.float32)
        dst = dst + jitter * np.array([w, h], dtype=np.float32) * deg.perspective
    m = cv2.getPerspectiveTransform(src, dst).astype(np.float64)
    if deg.rotate_deg is not None:
        rot = np.vstack([cv2.getRotationMatrix2D((w / 2, h / 2), deg.rotate_deg, 1.0), [0, 0, 1]])
        m = rot @ m
    pts = _line_points(lines)
    margin = 2.0
    for _ in range(40):
        out = _apply(m, pts)
        if len(out) == 0 or (out[:, 0].min() >= margin and out[:, 1].min() >= margin
                             and out[:, 0].max() <= w - margin and out[:, 1].max() <= h - margin):
            break
        shrink = np.array([[0.985, 0, w / 2 * 0.015], [0, 0.985, h / 2 * 0.015], [0, 0, 1]])
        m = shrink @ m
    return m


def warp_image(image: np.ndarray, matrix: np.ndarray, border: tuple[int, int, int]) -> np.ndarray:
    h, w = image.shape[:2]
    return cv2.warpPerspective(image, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                               borderValue=border)


def warp_lines(lines: list[PageLine], matrix: np.ndarray) -> list[PageLine]:
    """Polygons map point by point; character boxes become the bounds of their mapped corners."""
    out = _apply(matrix, _line_points(lines))
    result: list[PageLine] = []
    k = 0
    for line in lines:
        poly = tuple((float(x), float(y)) for x, y in out[k:k + 4])
        k += 4
        boxes = []
        for _ in line.char_boxes:
            c = out[k:k + 4]
            k += 4
            boxes.append((float(c[:, 0].min()), float(c[:, 1].min()), float(c[:, 0].max()), float(c[:, 1].max())))
        result.append(PageLine(line.text, line.labels, tuple(boxes), poly))  # type: ignore[arg-type]
    return result


# -- photometric ---------------------------------------------------------------------------------

def _smooth_field(shape: tuple[int, int], rng: np.random.Generator, strength: float) -> np.ndarray:
    h, w = shape
    sh, sw = max(2, h // 16), max(2, w // 16)
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    xx /= sw - 1
    yy /= sh - 1
    angle = rng.uniform(0, 2 * np.pi)
    grad = (np.cos(angle) * (xx - 0.5) + np.sin(angle) * (yy - 0.5))
    cx, cy = rng.uniform(0.2, 0.8, size=2)
    vignette = (xx - cx) ** 2 + (yy - cy) ** 2
    field = 1.0 - strength * (grad + 0.5) - strength * 0.6 * vignette + rng.uniform(-0.02, 0.04)
    return cv2.resize(np.clip(field, 0.55, 1.08).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)


def _stain(img: np.ndarray, rng: np.random.Generator) -> None:
    h, w = img.shape[:2]
    mask = np.zeros((h, w), dtype=np.uint8)
    center = (int(rng.uniform(0.1, 0.9) * w), int(rng.uniform(0.1, 0.9) * h))
    axes = (int(rng.uniform(0.04, 0.12) * w), int(rng.uniform(0.03, 0.1) * h))
    cv2.ellipse(mask, center, axes, float(rng.uniform(0, 180)), 0, 360, 255, -1)
    k = max(3, (min(axes) // 3) | 1)
    soft = cv2.GaussianBlur(mask, (k, k), 0).astype(np.float32) / 255.0
    alpha = (soft * rng.uniform(0.12, 0.3))[..., None]
    color = np.array([rng.uniform(60, 110), rng.uniform(120, 160), rng.uniform(170, 200)], dtype=np.float32)  # BGR brown
    img *= 1 - alpha
    img += alpha * color


def _crease(img: np.ndarray, rng: np.random.Generator) -> None:
    h, w = img.shape[:2]
    vertical = rng.random() < 0.5
    pos = rng.uniform(0.35, 0.65) * (w if vertical else h)
    coords = np.arange(w if vertical else h, dtype=np.float32)
    dist = coords - pos
    width = rng.uniform(15, 45)
    shade = 1.0 - 0.18 * np.exp(-np.maximum(dist, 0) / width) * (dist > 0) - 0.08 * np.exp(-(dist / 2.5) ** 2)
    img *= shade[None, :, None] if vertical else shade[:, None, None]


def photometric(image: np.ndarray, deg: Degradations, rng: np.random.Generator) -> np.ndarray:
    img = image.astype(np.float32)
    h, w = img.shape[:2]
    if deg.illumination is not None:
        img *= _smooth_field((h, w), rng, deg.illumination)[..., None]
    for _ in range(deg.stains):
        _stain(img, rng)
    if deg.crease:
        _crease(img, rng)
    out = np.clip(img, 0, 255).astype(np.uint8)
    if deg.binarize:  # fax-like: threshold first, the later blur/noise/JPEG soften it again
        gray = cv2.cvtColor(out, cv2.COLOR_BGR2GRAY)
        block = max(15, (min(h, w) // 20) | 1)
        bw = cv2.adaptiveThreshold(gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, block, 12)
        out = cv2.cvtColor(bw, cv2.COLOR_GRAY2BGR)
    if deg.lowres is not None:
        small = cv2.resize(out, (max(1, int(w * deg.lowres)), max(1, int(h * deg.lowres))), interpolation=cv2.INTER_AREA)
        out = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    if deg.blur_sigma is not None:
        out = cv2.GaussianBlur(out, (0, 0), deg.blur_sigma)
    if deg.noise_sigma is not None:
        sigma = min(deg.noise_sigma, 4.0) if deg.binarize else deg.noise_sigma
        noise = rng.standard_normal((h, w), dtype=np.float32) * sigma
        out = np.clip(out.astype(np.float32) + noise[..., None], 0, 255).astype(np.uint8)
    return out
