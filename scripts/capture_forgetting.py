"""How capture recognizers read pages of common characters the synthetic pages mostly never hold (forgetting).

    python scripts/capture_forgetting.py --capture fax --pages 12 --seed 7 \
        --model main=ppocrv4_rec --model fax=ppocrv4_rec_fax --model new=data/rec_fax_d1

Each page holds 14 lines of GB2312 level-1 characters (the 3,755 commonest) drawn at random, with digits and
punctuation, drawn in one of the generator's fonts in turn. It is then faxed, photographed or scanned as the
generator does (``samples/synth/variants.py``; scans: shrunk, noised and JPEG-encoded), normalised by the product's
page step, detected and cut as the product does, and read by every ``--model`` (a registry key or a model folder).
Prints each model's character errors (Levenshtein over the page, spaces ignored), characters and CER.
"""
from __future__ import annotations

import argparse
import logging
import random
import sys
from pathlib import Path
from typing import Callable, Optional, Sequence

import cv2
import numpy as np
from PIL import Image, ImageDraw
from rapidfuzz.distance import Levenshtein

from samples.synth.common_text import common_character_lines
from samples.synth.fonts import FACES, face_font
from samples.synth.variants import fax, photo
from stages.contracts.config import DocpipeConfig
from stages.contracts.registry import MODELS
from stages.contracts.types import Page
from stages.detection.detector import TextDetector
from stages.page.stage import normalize_capture
from stages.recognition.crop import crop_quad
from stages.recognition.recognizer import TextRecognizer

log = logging.getLogger("scripts.capture_forgetting")


def render(lines: list[str], face_name: str, size: int, line_h: int) -> np.ndarray:
    """A white A4-proportioned BGR page with ``lines`` in black, left-aligned."""
    font, stroke = face_font(FACES[face_name], size, False)
    img = Image.new("RGB", (1240, max(1754, 120 + line_h * len(lines))), "white")
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        draw.text((90, 100 + i * line_h), line, font=font, fill="black", stroke_width=stroke, stroke_fill="black")
    return np.ascontiguousarray(np.asarray(img)[:, :, ::-1])


def _jpeg(image: np.ndarray, quality: int) -> np.ndarray:
    return cv2.imdecode(cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])[1], cv2.IMREAD_COLOR)


def captured(capture: str, page: np.ndarray, rng: random.Random, cfg: DocpipeConfig) -> Optional[np.ndarray]:
    """The page as the product detects on it after capture ``capture``; None when the page step did not take it
    for that capture (a photo whose outline was not trusted, say)."""
    if capture == "fax":
        image, _ = fax(page, {"lines": []}, rng, "dev")
    elif capture == "photo":
        image, truth = photo(page, {"lines": []}, rng, "dev")
        image = _jpeg(image, truth.get("jpeg_quality", 85))
    else:
        scale = rng.choice([0.6, 0.7, 0.8])
        small = cv2.resize(page, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        noisy = np.clip(small + np.random.default_rng(rng.getrandbits(32)).normal(0, 6, small.shape), 0, 255)
        image = _jpeg(noisy.astype(np.uint8), 60)
    normalised = normalize_capture(Page(0, image), cfg.page)
    return normalised.image if normalised.capture == capture else None


def recognizer(spec: str, cfg: DocpipeConfig) -> TextRecognizer:
    """A registry key, or a folder holding an exported capture model (its dictionary beside it)."""
    rc = cfg.recognition
    if spec in MODELS:
        return TextRecognizer(rc.model_copy(update={"model": spec}), cfg.predictor)
    folder = Path(spec)
    update = {"model": "ppocrv4_rec_fax", "model_dir": folder, "dict_path": folder / "ppocr_keys_v1.txt"}
    return TextRecognizer(rc.model_copy(update=update), cfg.predictor)


def measure(capture: str, pages: int, seed: int, models: dict[str, TextRecognizer],
            progress: Callable[[int], None] = lambda k: None) -> dict[str, tuple[int, int]]:
    """{model name: (character errors, characters)} over ``pages`` drawn from ``seed``."""
    cfg = DocpipeConfig()
    detector = TextDetector(cfg.detection, cfg.predictor)
    faces = sorted(FACES)
    totals = {name: [0, 0] for name in models}
    for k in range(pages):
        rng = random.Random(seed * 1000 + k)
        lines = common_character_lines(rng)
        size = rng.choice([22, 26, 30])
        image = captured(capture, render(lines, faces[k % len(faces)], size, int(size * 1.8)), rng, cfg)
        if image is None:
            log.warning("page %d: not normalised as %s, skipped", k, capture)
            continue
        boxes = sorted(detector.detect_batch([image])[0],
                       key=lambda b: (round(float(np.mean(b.polygon[:, 1])) / 20), float(np.mean(b.polygon[:, 0]))))
        crops = [crop_quad(image, b.polygon).image for b in boxes]
        truth = "".join(lines)
        for name, rec in models.items():
            read = "".join(r.text for r in rec.recognize_batch(crops))
            totals[name][0] += Levenshtein.distance(read.replace(" ", ""), truth)
            totals[name][1] += len(truth)
        progress(k)
    return {name: (e, n) for name, (e, n) in totals.items()}


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--capture", choices=["fax", "photo", "scan"], required=True)
    ap.add_argument("--pages", type=int, default=12)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--model", action="append", required=True, metavar="NAME=KEY_OR_DIR")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    cfg = DocpipeConfig()
    models = {}
    for item in args.model:
        name, _, spec = item.partition("=")
        models[name] = recognizer(spec, cfg)
    totals = measure(args.capture, args.pages, args.seed, models,
                     lambda k: log.info("page %d/%d", k + 1, args.pages))
    for name, (errors, chars) in totals.items():
        log.info("%-8s %5d errors / %5d characters  CER %.2f %%", name, errors, chars, 100 * errors / max(chars, 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
