"""Faxes and other binarised low-resolution pages: resampled smoothly before detection and recognition.

A fax is black and white with jagged strokes; the detector and recognizer were trained on grey, anti-aliased
text. A page is treated as binarised when almost all of its pixels are near black or near white; it is then
smoothed (``FAX_BLUR``, a Gaussian) and optionally upscaled (``FAX_UPSCALE``, cubic), any scale recorded in the
page's transform so polygons map back. A second rendering without isolated specks (``fax_second_look``) goes
with the page; recognition reads every line from both. Measured on dev faxes, smoothing and the second look
help and upscaling does not.
"""
from __future__ import annotations

import cv2
import numpy as np

from stages.contracts.config import PageConfig
from stages.contracts.types import Page, PageTransform

_SAMPLE_STEP = 4  # binarisation is judged on every 4th pixel in each direction
# Gaussian sigma (pixels) and cubic upscale factor of a binarised page, chosen on 30 dev faxes: wrong fields of 445
# with no change 57, blur 0.7 47, blur 1.0 42, blur 1.5 49, upscale 1.5 70 (detection downsizes pages to 960 px
# anyway and the recognizer scales crops to 48 px high; docs/real_world_pages.md)
FAX_BLUR = 1.0
FAX_UPSCALE = 1.0


def is_binarised(image: np.ndarray, share: float = 0.99) -> bool:
    """True for a bilevel page as a fax server stores it (TIFF/PNG): at least ``share`` of the sampled pixels
    exactly black or white, all channels equal. A binarised page that went through JPEG afterwards is a grey
    scan again and is left alone (measured: smoothing such pages changed nothing overall on the test split)."""
    s = image[::_SAMPLE_STEP, ::_SAMPLE_STEP]
    if s.ndim == 3:
        if not (np.array_equal(s[..., 0], s[..., 1]) and np.array_equal(s[..., 1], s[..., 2])):
            return False
        s = s[..., 0]
    black = np.count_nonzero(s == 0)
    return black > 0 and black + np.count_nonzero(s == 255) >= share * s.size


def despeckle(image: np.ndarray) -> np.ndarray:
    """A binarised page without its isolated specks: a black pixel with no black 8-neighbour turns white and a
    white pixel with 8 black neighbours turns black. Unlike a median filter this keeps one-pixel-wide strokes
    (each of their pixels has black neighbours along the stroke)."""
    grey = image[..., 0] if image.ndim == 3 else image
    black = (grey == 0).astype(np.uint8)
    kernel = np.ones((3, 3), np.float32)
    kernel[1, 1] = 0
    neighbours = cv2.filter2D(black, cv2.CV_8U, kernel, borderType=cv2.BORDER_CONSTANT)
    out = grey.copy()
    out[(black == 1) & (neighbours == 0)] = 255
    out[(black == 0) & (neighbours == 8)] = 0
    return cv2.cvtColor(out, cv2.COLOR_GRAY2BGR) if image.ndim == 3 else out


def normalize_fax(page: Page, cfg: PageConfig, upscale: float = FAX_UPSCALE, blur: float = FAX_BLUR) -> Page:
    """``page`` upscaled and/or smoothed when it is a binarised page and either is configured, with a despeckled
    second rendering (``fax_second_look``) for recognition to read too; else the same page."""
    touch = upscale > 1.0 or blur > 0 or cfg.fax_second_look
    if not touch or page.transform is not None or not is_binarised(page.image):
        return page
    h, w = page.image.shape[:2]
    nw, nh = int(round(w * upscale)), int(round(h * upscale))
    image = _render(page.image, (nw, nh), False, blur)
    second = _render(page.image, (nw, nh), True, blur) if cfg.fax_second_look else None
    m = np.diag([nw / w, nh / h, 1.0])
    return Page(page.index, image, page.source, PageTransform.identity(w, h).then(m), second, capture="fax")


def _render(image: np.ndarray, size: tuple[int, int], despeckled: bool, blur: float) -> np.ndarray:
    out = despeckle(image) if despeckled else image
    if size != (image.shape[1], image.shape[0]):
        out = cv2.resize(out, size, interpolation=cv2.INTER_CUBIC)
    return cv2.GaussianBlur(out, (0, 0), blur) if blur > 0 else out.copy()
