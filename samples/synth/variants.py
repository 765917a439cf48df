"""Real-world page variants applied to a generated policy page: turned pages, faxes and phone photos.

Each takes the page image (BGR) and its ground truth and returns new ones; every line polygon and character
box goes through the same geometry as the pixels. Some parameters are held out of train/dev (used only in
``test``, as for layouts): faxes with unequal horizontal/vertical resolution and coarser sampling, and photos
on a cloth background with stronger tilt. The three-page PDF variant lives in ``samples.synth.multipage``.
"""
from __future__ import annotations

import random
from typing import Any

import cv2
import numpy as np

VARIANTS: tuple[str, ...] = ("scan", "rotated", "fax", "photo", "multipage")
PHOTO_BACKGROUNDS: tuple[str, ...] = ("wood", "desk", "dark")
HELD_OUT_PHOTO_BACKGROUNDS: tuple[str, ...] = ("cloth",)


def choose_variant(rng: random.Random, allowed: tuple[str, ...]) -> str:
    unknown = [v for v in allowed if v not in VARIANTS]
    if unknown or not allowed:
        raise ValueError(f"variants must be among {VARIANTS}, got {allowed}")
    return rng.choice(allowed)


def _apply(matrix: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.asarray(pts, np.float64).reshape(-1, 2)
    h = np.concatenate([p, np.ones((len(p), 1))], axis=1) @ matrix.T
    return h[:, :2] / h[:, 2:3]


def warp_truth(truth: dict[str, Any], matrix: np.ndarray, width: int, height: int) -> dict[str, Any]:
    """Ground truth with every polygon and char box mapped by ``matrix`` (old pixels -> new pixels)."""
    lines = []
    for ln in truth["lines"]:
        poly = _apply(matrix, ln["polygon"])
        boxes = []
        for x0, y0, x1, y1 in ln["char_boxes"]:
            c = _apply(matrix, [[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
            boxes.append([round(float(c[:, 0].min()), 1), round(float(c[:, 1].min()), 1),
                          round(float(c[:, 0].max()), 1), round(float(c[:, 1].max()), 1)])
        lines.append({**ln, "polygon": [[round(float(x), 1), round(float(y), 1)] for x, y in poly], "char_boxes": boxes})
    return {**truth, "width": int(width), "height": int(height), "lines": lines}


def rotated(image: np.ndarray, truth: dict[str, Any], rng: random.Random) -> tuple[np.ndarray, dict[str, Any]]:
    """The page fed to the scanner sideways or upside down: turned 90, 180 or 270 degrees clockwise."""
    turn = rng.choice((90, 180, 270))
    h, w = image.shape[:2]
    m = {90: [[0, -1, h - 1], [1, 0, 0]], 180: [[-1, 0, w - 1], [0, -1, h - 1]], 270: [[0, 1, 0], [-1, 0, w - 1]]}[turn]
    matrix = np.vstack([np.array(m, np.float64), [0, 0, 1]])
    out = np.ascontiguousarray(np.rot90(image, k=-(turn // 90)))
    t = warp_truth(truth, matrix, out.shape[1], out.shape[0])
    t["variant"], t["variant_params"] = f"rotated{turn}", {"turn": turn}
    return out, t


def fax(image: np.ndarray, truth: dict[str, Any], rng: random.Random, split: str) -> tuple[np.ndarray, dict[str, Any]]:
    """A fax: grey, resampled (150 dpi at the page's text sizes; coarser and anisotropic in ``test``), thresholded,
    with specks and an occasional dropout streak. Written losslessly (PNG), as a fax server stores it."""
    held = split == "test" and rng.random() < 0.5
    fx = rng.uniform(0.72, 0.9) if held else rng.uniform(0.85, 1.0)
    fy = fx * (rng.uniform(0.8, 0.95) if held else 1.0)
    h, w = image.shape[:2]
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    nw, nh = max(1, int(round(w * fx))), max(1, int(round(h * fy)))
    small = cv2.resize(gray, (nw, nh), interpolation=cv2.INTER_AREA)
    otsu, _ = cv2.threshold(small, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    thresh = float(np.clip(otsu + rng.uniform(-25, 15), 60, 220))
    bw = np.where(small > thresh, 255, 0).astype(np.uint8)
    nrng = np.random.default_rng(rng.getrandbits(64))
    specks = nrng.random(bw.shape) < rng.uniform(0.0002, 0.002)
    bw[specks] = 255 - bw[specks]
    if rng.random() < 0.3:  # a row of the scan head dropped out
        y = rng.randrange(nh)
        bw[y : y + rng.randint(1, 2)] = 255 if rng.random() < 0.7 else 0
    matrix = np.diag([nw / w, nh / h, 1.0])
    t = warp_truth(truth, matrix, nw, nh)
    t["variant"] = "fax"
    t["variant_params"] = {"fx": round(fx, 3), "fy": round(fy, 3), "threshold": round(thresh, 1), "held_out": held}
    t["image_format"] = "png"
    return cv2.cvtColor(bw, cv2.COLOR_GRAY2BGR), t


def _background(kind: str, w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    base = {"wood": (60, 105, 150), "desk": (175, 170, 165), "dark": (45, 45, 50), "cloth": (120, 60, 40)}[kind]
    img = np.empty((h, w, 3), np.float32)
    img[:] = np.array(base, np.float32) * rng.uniform(0.85, 1.15)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    if kind == "wood":
        img *= (1 + 0.08 * np.sin(yy / rng.uniform(6, 14) + 3 * np.sin(xx / 180)))[..., None]
    elif kind == "cloth":
        img *= (1 + 0.07 * np.sign(np.sin(xx / 3.0)) * np.sign(np.sin(yy / 3.0)))[..., None]
    img += rng.normal(0, 6, (h, w, 1)).astype(np.float32)
    return img


def photo(image: np.ndarray, truth: dict[str, Any], rng: random.Random, split: str) -> tuple[np.ndarray, dict[str, Any]]:
    """A phone photo of the page on a surface: background, perspective tilt, uneven light, blur, JPEG."""
    held = split == "test" and rng.random() < 0.5
    kind = rng.choice(HELD_OUT_PHOTO_BACKGROUNDS if held else PHOTO_BACKGROUNDS)
    tilt = rng.uniform(0.06, 0.12) if held else rng.uniform(0.02, 0.08)
    h, w = image.shape[:2]
    ow, oh = int(w * rng.uniform(1.15, 1.3)), int(h * rng.uniform(1.1, 1.2))
    scale = rng.uniform(0.8, 0.92) * min(ow / w, oh / h)
    cx, cy = ow / 2 + rng.uniform(-0.03, 0.03) * ow, oh / 2 + rng.uniform(-0.03, 0.03) * oh
    ang = np.deg2rad(rng.uniform(-8, 8))
    corners = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]]) * scale
    rot = np.array([[np.cos(ang), -np.sin(ang)], [np.sin(ang), np.cos(ang)]])
    dst = corners @ rot.T + [cx, cy]
    dst += np.array([[rng.uniform(-1, 1), rng.uniform(-1, 1)] for _ in range(4)]) * tilt * np.array([w, h]) * scale
    margin = 0.015 * max(ow, oh)
    for _ in range(60):  # the whole page stays in the frame: a boundary finder must be able to see four corners
        if dst[:, 0].min() >= margin and dst[:, 1].min() >= margin and dst[:, 0].max() <= ow - margin \
                and dst[:, 1].max() <= oh - margin:
            break
        dst = (dst - [ow / 2, oh / 2]) * 0.97 + [ow / 2, oh / 2]
    src = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
    matrix = cv2.getPerspectiveTransform(src, dst.astype(np.float32)).astype(np.float64)
    nrng = np.random.default_rng(rng.getrandbits(64))
    out = _background(kind, ow, oh, nrng)
    page = cv2.warpPerspective(image, matrix, (ow, oh), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0)).astype(np.float32)
    mask = cv2.warpPerspective(np.full((h, w), 255, np.uint8), matrix, (ow, oh), flags=cv2.INTER_LINEAR)
    alpha = (mask.astype(np.float32) / 255.0)[..., None]
    out = out * (1 - alpha) + page * alpha
    # uneven light: a broad gradient and a soft shadow (a phone or hand) across part of the page
    yy, xx = np.mgrid[0:oh, 0:ow].astype(np.float32)
    theta = rng.uniform(0, 2 * np.pi)
    grad = (np.cos(theta) * (xx / ow - 0.5) + np.sin(theta) * (yy / oh - 0.5))
    light = 1.0 - rng.uniform(0.15, 0.35) * (grad + 0.5)
    sx, sy, sr = rng.uniform(0, ow), rng.uniform(0, oh), rng.uniform(0.2, 0.45) * max(ow, oh)
    light -= rng.uniform(0.1, 0.25) * np.exp(-(((xx - sx) ** 2 + (yy - sy) ** 2) / (2 * sr * sr)))
    out *= np.clip(light, 0.4, 1.1)[..., None]
    out = np.clip(out, 0, 255).astype(np.uint8)
    sigma = rng.uniform(0.5, 1.3)
    out = cv2.GaussianBlur(out, (0, 0), sigma)
    noise = nrng.normal(0, rng.uniform(2, 5), out.shape[:2]).astype(np.float32)
    out = np.clip(out.astype(np.float32) + noise[..., None], 0, 255).astype(np.uint8)
    t = warp_truth(truth, matrix, ow, oh)
    t["variant"] = "photo"
    t["variant_params"] = {"background": kind, "tilt": round(tilt, 3), "blur": round(sigma, 2), "held_out": held,
                           "page_corners": [[round(float(x), 1), round(float(y), 1)] for x, y in dst]}
    t["jpeg_quality"] = rng.randint(70, 92)
    return out, t
